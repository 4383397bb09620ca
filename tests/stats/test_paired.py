"""Paired tests against exact values computed by hand from their definitions."""

from __future__ import annotations

from math import comb

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lg_eval.errors import InvalidOptionError
from lg_eval.stats import adjust_per_case, mcnemar_test, wilcoxon_test


def table(both: int, worse: int, better: int, neither: int) -> list[tuple[bool, bool]]:
    """(A passed, B passed) pairs of a 2×2 table."""
    return (
        [(True, True)] * both
        + [(True, False)] * worse
        + [(False, True)] * better
        + [(False, False)] * neither
    )


def exact_mcnemar(worse: int, better: int) -> float:
    """Two-sided exact McNemar: twice the smaller binomial tail of the discordant pairs."""
    n, low = worse + better, min(worse, better)
    return min(1.0, 2 * sum(comb(n, i) for i in range(low + 1)) / 2**n)


def test_six_discordant_pairs_all_one_way_give_p_one_in_thirty_two() -> None:
    test = mcnemar_test(table(4, 6, 0, 0), key="strict", alpha=0.05)
    assert test.p_value == pytest.approx(2 / 64)
    assert test.effect == pytest.approx(-0.6)
    assert test.pairs == 10 and test.test == "mcnemar"
    assert test.significant and test.regression and not test.improvement


def test_a_ten_to_three_table_gives_the_exact_binomial_tail() -> None:
    # 2 * (C(13,0) + C(13,1) + C(13,2) + C(13,3)) / 2**13 = 756 / 8192
    test = mcnemar_test(table(20, 10, 3, 7))
    assert test.p_value == pytest.approx(756 / 8192)
    assert test.effect == pytest.approx((3 - 10) / 40)
    assert not test.significant and not test.regression


def test_no_discordant_pair_gives_p_one() -> None:
    test = mcnemar_test(table(5, 0, 0, 5))
    assert (test.p_value, test.effect, test.significant) == (1.0, 0.0, False)


@given(st.integers(0, 30), st.integers(0, 30), st.integers(0, 30), st.integers(0, 30))
def test_mcnemar_p_value_is_the_exact_one_and_symmetric(
    both: int, worse: int, better: int, neither: int
) -> None:
    pairs = table(both, worse, better, neither)
    if not pairs:
        return
    test = mcnemar_test(pairs)
    flipped = mcnemar_test([(b, a) for a, b in pairs])
    expected = exact_mcnemar(worse, better) if worse + better else 1.0
    assert test.p_value == pytest.approx(expected, rel=1e-9)
    assert flipped.p_value == pytest.approx(test.p_value, rel=1e-12)
    assert flipped.effect == pytest.approx(-test.effect)
    assert 0.0 <= test.p_value <= 1.0


def test_five_positive_differences_give_the_smallest_exact_wilcoxon_p() -> None:
    # All 5 signed ranks positive: one of 2**5 sign patterns at each extreme -> p = 2/32.
    pairs = [(0.5, 0.6), (0.5, 0.7), (0.2, 0.5), (0.1, 0.5), (0.0, 0.5)]
    test = wilcoxon_test(pairs, key="score")
    assert test.p_value == pytest.approx(2 / 32)
    assert test.effect == pytest.approx((0.1 + 0.2 + 0.3 + 0.4 + 0.5) / 5)
    assert test.effect_interval is not None and test.effect_interval.method == "bootstrap"
    assert test.effect_interval.low <= test.effect <= test.effect_interval.high
    assert not test.significant  # 0.0625 is not below 0.05


def test_six_negative_differences_are_a_significant_regression() -> None:
    pairs = [(0.9, 0.1 * i) for i in range(1, 7)]
    test = wilcoxon_test(pairs, alpha=0.05, interval=False)
    assert test.p_value == pytest.approx(2 / 64)
    assert test.effect_interval is None
    assert test.regression


def test_zero_differences_give_p_one() -> None:
    test = wilcoxon_test([(0.5, 0.5), (1.0, 1.0)])
    assert (test.p_value, test.effect, test.significant) == (1.0, 0.0, False)


@pytest.mark.parametrize(
    ("call", "named"),
    [
        (lambda: mcnemar_test([]), r"pairs=\[\]"),
        (lambda: mcnemar_test([(True, 1)]), r"pairs\[0\]"),  # type: ignore[list-item]
        (lambda: mcnemar_test([(True, True)], alpha=1.5), "alpha=1.5"),
        (lambda: wilcoxon_test([(0.1, float("nan"))]), r"pairs\[0\]"),
        (lambda: wilcoxon_test([(0.1, "0.2")]), r"pairs\[0\]"),  # type: ignore[list-item]
        (lambda: wilcoxon_test([]), r"pairs=\[\]"),
    ],
)
def test_bad_pairs_are_refused_naming_the_argument(call: object, named: str) -> None:
    with pytest.raises(InvalidOptionError, match=named):
        call()  # type: ignore[operator]


def test_per_case_p_values_are_adjusted_by_benjamini_hochberg_per_key() -> None:
    tests = [
        mcnemar_test(table(0, 6, 0, 0), key="k"),  # pooled: left as it is
        mcnemar_test(table(0, 6, 0, 0), case_id="a", key="k"),  # p = 1/32
        mcnemar_test(table(0, 7, 0, 0), case_id="b", key="k"),  # p = 1/64
        mcnemar_test(table(0, 1, 0, 0), case_id="c", key="k"),  # p = 1
        mcnemar_test(table(0, 6, 0, 0), case_id="a", key=None),  # alone in its key
    ]
    adjusted = adjust_per_case(tests)
    assert adjusted[0] == tests[0]
    # BH: sorted p (1/64, 1/32, 1) times m/rank (3, 3/2, 1), then the running minimum from the top.
    assert [t.p_adjusted for t in adjusted[1:4]] == pytest.approx([3 / 64, 3 / 64, 1.0])
    assert [t.significant for t in adjusted[1:4]] == [True, True, False]
    assert adjusted[4].p_adjusted == pytest.approx(1 / 32)
