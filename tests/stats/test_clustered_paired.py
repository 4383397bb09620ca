"""Paired tests that pair by case: Durkalski's clustered McNemar statistic by its
definition, and the plain tests, unchanged, when no case has more than one pair."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as scipy_stats

from lg_eval.errors import InvalidOptionError
from lg_eval.stats import (
    clustered_difference_test,
    clustered_mcnemar_test,
    mcnemar_test,
    wilcoxon_test,
)
from tests.stats.test_paired import table


def durkalski(sums: list[float]) -> float:
    """(Σd)² / Σd² against χ² with one degree of freedom (1.0 when every d is 0)."""
    squares = sum(d * d for d in sums)
    return 1.0 if not squares else float(scipy_stats.chi2.sf(sum(sums) ** 2 / squares, 1))


def test_five_cases_that_each_lose_six_of_ten_give_durkalskis_bound() -> None:
    # every case: 6 pairs passed in A only, 4 in both; d = -6 each, X² = 30² / 180 = 5
    clusters = [table(4, 6, 0, 0) for _ in range(5)]
    test = clustered_mcnemar_test(clusters, key="strict")
    assert test.test == "clustered_mcnemar" and test.pairs == 50 and test.key == "strict"
    assert test.effect == pytest.approx(-0.6)
    assert test.p_value == pytest.approx(float(scipy_stats.chi2.sf(5.0, 1)), rel=1e-12)
    assert test.significant and test.regression
    # the same 50 pairs as independent trials: a p-value a hundred million times smaller
    assert mcnemar_test([pair for pairs in clusters for pair in pairs]).p_value < 1e-8


def test_no_number_of_repetitions_makes_three_cases_significant() -> None:
    # X² = (Σd)²/Σd² can never exceed the number of cases: with three, p > 0.08
    clusters = [table(0, 100, 0, 0) for _ in range(3)]
    test = clustered_mcnemar_test(clusters)
    assert test.p_value == pytest.approx(float(scipy_stats.chi2.sf(3.0, 1)), rel=1e-12)
    assert test.p_value > 0.08 and not test.significant


def test_cases_that_move_both_ways_cancel() -> None:
    clusters = [table(2, 5, 0, 3), table(2, 0, 5, 3), table(10, 0, 0, 0)]
    test = clustered_mcnemar_test(clusters)
    assert (test.effect, test.p_value, test.significant) == (0.0, 1.0, False)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.lists(st.tuples(st.booleans(), st.booleans()), min_size=1, max_size=8),
        min_size=2,
        max_size=12,
    )
)
def test_the_clustered_mcnemar_p_value_is_durkalskis(
    clusters: list[list[tuple[bool, bool]]],
) -> None:
    test = clustered_mcnemar_test(clusters)
    pairs = [pair for pairs in clusters for pair in pairs]
    if max(len(pairs) for pairs in clusters) == 1:
        assert test == mcnemar_test(pairs)
        return
    sums = [sum(int(b) - int(a) for a, b in pairs) for pairs in clusters]
    assert test.test == "clustered_mcnemar"
    assert test.p_value == pytest.approx(durkalski(sums), rel=1e-12)
    assert test.effect == pytest.approx(sum(sums) / len(pairs))
    assert 0.0 <= test.p_value <= 1.0


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.booleans()), min_size=1, max_size=40))
def test_one_pair_per_case_is_the_exact_mcnemar_test_unchanged(
    pairs: list[tuple[bool, bool]],
) -> None:
    assert clustered_mcnemar_test([[pair] for pair in pairs], key="k") == mcnemar_test(
        pairs, key="k"
    )


def test_one_case_alone_is_tested_over_its_repetitions() -> None:
    pairs = table(4, 6, 0, 0)
    assert clustered_mcnemar_test([pairs]) == mcnemar_test(pairs)
    scores = [(0.9, 0.1 * i) for i in range(1, 7)]
    assert clustered_difference_test([scores]) == wilcoxon_test(scores)


def test_score_differences_summed_per_case_give_the_same_statistic() -> None:
    clusters = [
        [(0.9, 0.5), (0.8, 0.6)],  # d = -0.6
        [(0.7, 0.7), (0.6, 0.2), (0.5, 0.4)],  # d = -0.5
        [(0.3, 0.4)],  # d = +0.1
        [(1.0, 0.2), (0.9, 0.4)],  # d = -1.3
    ]
    test = clustered_difference_test(clusters, key="judge")
    assert test.test == "clustered_difference" and test.pairs == 8
    assert test.effect == pytest.approx(-2.3 / 8)
    assert test.p_value == pytest.approx(durkalski([-0.6, -0.5, 0.1, -1.3]), rel=1e-12)
    interval = test.effect_interval
    assert interval is not None and interval.method == "cluster_bootstrap"
    assert interval.low <= test.effect <= interval.high
    assert clustered_difference_test(clusters, interval=False).effect_interval is None


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 1), st.floats(0, 1)), min_size=1, max_size=20))
def test_one_score_pair_per_case_is_the_wilcoxon_test_unchanged(
    pairs: list[tuple[float, float]],
) -> None:
    assert clustered_difference_test([[pair] for pair in pairs]) == wilcoxon_test(pairs)


@pytest.mark.parametrize(
    ("call", "named"),
    [
        (lambda: clustered_mcnemar_test([]), r"clusters=\[\]"),
        (lambda: clustered_mcnemar_test([[(True, False)], []]), r"clusters\[1\]=\[\]"),
        (
            lambda: clustered_mcnemar_test([[(True, False)], [(True, True), (True, 1)]]),
            r"clusters\[1\]\[1\]\[1\]=",
        ),
        (lambda: clustered_mcnemar_test("ab"), "clusters='ab'"),  # type: ignore[arg-type]
        (lambda: clustered_mcnemar_test([[(True, True)]], alpha=0), "alpha=0"),
        (
            lambda: clustered_difference_test([[(0.1, 0.2)], [(0.1, float("nan"))]]),
            r"clusters\[1\]\[0\]\[1\]=nan",
        ),
        (
            lambda: clustered_difference_test([[(0.1, 0.2)], [(0.1, 0.3), (0.1, None)]]),
            r"clusters\[1\]\[1\]\[1\]=",
        ),
        (lambda: clustered_difference_test([[(0.1, 0.2)]], confidence=2), "confidence=2"),
    ],
)
def test_bad_clusters_are_refused_naming_the_case_and_pair(call: object, named: str) -> None:
    with pytest.raises(InvalidOptionError, match=named):
        call()  # type: ignore[operator]
