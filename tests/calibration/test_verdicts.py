"""verdict_agreement against hand-computed tables and against scikit-learn's kappa and the
krippendorff package's alpha; its intervals resample cases, a case's turns together."""

from __future__ import annotations

import json
import math
import random
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from krippendorff import alpha as reference_alpha
from sklearn.metrics import cohen_kappa_score

from lg_eval.calibration import LabeledPair, VerdictAgreement, verdict_agreement
from lg_eval.errors import InvalidOptionError


def pairs_of(table: dict[tuple[Any, Any], int], turns: int = 1) -> list[dict[str, Any]]:
    """``table[(human, judge)]`` pairs, one case each (or ``turns`` alike per case)."""
    out = []
    for (human, judge), n in table.items():
        for _ in range(n):
            case = f"c{len(out) // turns if turns > 1 else len(out)}"
            for turn in range(turns):
                out.append({"case_id": f"{case}-{human}-{judge}", "turn": turn, "human": human,
                            "judge": judge})  # fmt: skip
    return out


def test_a_two_by_two_table_gives_the_hand_computed_numbers() -> None:
    # human False: 40 judged False, 10 True; human True: 5 judged False, 45 True
    found = verdict_agreement(pairs_of({(False, False): 40, (False, True): 10,
                                        (True, False): 5, (True, True): 45}))  # fmt: skip
    assert found.labels == [False, True] and found.confusion == [[40, 10], [5, 45]]
    assert (found.true_positive, found.false_positive) == (45, 10)
    assert (found.false_negative, found.true_negative) == (5, 40)
    assert (found.pairs, found.cases, found.disagreements()) == (100, 100, 15)
    assert found.agreement.value == pytest.approx(0.85)
    assert found.tpr.value == pytest.approx(45 / 50)
    assert found.tnr.value == pytest.approx(40 / 50)
    assert found.precision.value == pytest.approx(45 / 55)
    # chance: (50·45 + 50·55) / 100² = 0.5 -> kappa (0.85 - 0.5) / 0.5 = 0.7
    assert found.kappa.value == pytest.approx(0.7)
    # alpha: n = 200 values, 95 False and 105 True; 1 - 199 · 30 / (200² - 95² - 105²)
    assert found.alpha.value == pytest.approx(1 - 199 * 30 / (200**2 - 95**2 - 105**2))
    for name in ("agreement", "tpr", "tnr", "precision", "kappa", "alpha"):
        estimate = getattr(found, name)
        assert estimate.interval is not None and estimate.reason is None, name
        assert estimate.interval.method == "cluster_bootstrap"
        assert estimate.interval.low <= estimate.value <= estimate.interval.high, name


def test_a_judge_that_agrees_on_a_known_fraction_gives_the_kappa_it_implies() -> None:
    # balanced human labels; the judge flips 15% of each class: agreement 0.85, chance
    # agreement 0.5, so kappa = (0.85 - 0.5) / (1 - 0.5) = 0.7
    pairs = []
    for index in range(200):
        human = index % 2 == 0
        flipped = (index // 2) % 20 < 3  # 3 of every 20 of each class
        pairs.append(LabeledPair(case_id=f"c{index}", judge=human != flipped, human=human))
    found = verdict_agreement(pairs)
    assert found.agreement.value == pytest.approx(0.85)
    assert found.kappa.value == pytest.approx(0.7)
    humans = [p.human for p in pairs]
    judges = [p.judge for p in pairs]
    assert found.kappa.value == pytest.approx(cohen_kappa_score(humans, judges), abs=1e-12)


verdicts = st.lists(st.tuples(st.booleans(), st.booleans()), min_size=1, max_size=60)
categories = st.lists(
    st.tuples(*[st.sampled_from(["approve", "edit", "reject"])] * 2), min_size=1, max_size=60
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(verdicts, categories))
def test_kappa_is_scikit_learns_cohen_kappa_score(drawn: list[tuple[Any, Any]]) -> None:
    pairs = [{"case_id": f"c{i}", "human": h, "judge": j} for i, (h, j) in enumerate(drawn)]
    found = verdict_agreement(pairs, resamples=50)
    humans, judges = [h for h, _ in drawn], [j for _, j in drawn]
    with _quiet():
        expected = cohen_kappa_score(humans, judges)
    if math.isnan(expected):  # every verdict one and the same: undefined
        assert found.kappa.value is None and "undefined" in (found.kappa.reason or "")
    else:
        assert found.kappa.value == pytest.approx(expected, abs=1e-12)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(verdicts, categories))
def test_alpha_is_the_krippendorff_packages_nominal_alpha(drawn: list[tuple[Any, Any]]) -> None:
    pairs = [{"case_id": f"c{i}", "human": h, "judge": j} for i, (h, j) in enumerate(drawn)]
    found = verdict_agreement(pairs, resamples=50)
    codes = {label: float(i) for i, label in enumerate(found.labels)}
    data = np.array([[codes[h] for h, _ in drawn], [codes[j] for _, j in drawn]])
    if len({value for pair in drawn for value in pair}) == 1:
        assert found.alpha.value is None and "undefined" in (found.alpha.reason or "")
        return
    expected = reference_alpha(reliability_data=data, level_of_measurement="nominal")
    assert found.alpha.value == pytest.approx(expected, abs=1e-12)


class _quiet:
    """scikit-learn warns when kappa is undefined; the test reads its NaN."""

    def __enter__(self) -> None:
        import warnings

        self._catch = warnings.catch_warnings()
        self._catch.__enter__()
        warnings.simplefilter("ignore")

    def __exit__(self, *exc: object) -> None:
        self._catch.__exit__(*exc)


def test_text_verdicts_count_the_positive_one_against_the_rest() -> None:
    table = {("approve", "approve"): 30, ("approve", "edit"): 5, ("edit", "edit"): 10,
             ("reject", "approve"): 4, ("reject", "reject"): 11}  # fmt: skip
    found = verdict_agreement(pairs_of(table), positive="approve")
    assert found.labels == ["approve", "edit", "reject"]
    assert found.confusion == [[30, 5, 0], [0, 10, 0], [4, 0, 11]]
    assert (found.true_positive, found.false_negative, found.false_positive) == (30, 5, 4)
    assert found.true_negative == 21
    assert found.tpr.value == pytest.approx(30 / 35)
    assert found.precision.value == pytest.approx(30 / 34)
    without = verdict_agreement(pairs_of(table))
    assert without.positive is None and without.true_positive is None
    assert without.tpr.value is None and "positive=" in (without.tpr.reason or "")
    assert without.kappa == found.kappa


def test_every_verdict_one_class_gives_none_with_reasons_never_nan() -> None:
    found = verdict_agreement(pairs_of({(True, True): 12}))
    assert found.agreement.value == 1.0
    assert found.kappa.value is None and found.kappa.interval is None
    assert found.kappa.reason == (
        "every verdict is True on both sides: kappa is undefined when chance agreement is certain"
    )
    assert found.alpha.value is None and "undefined" in (found.alpha.reason or "")
    assert found.tnr.value is None and found.tnr.reason == "the person labelled every pair True"
    assert found.tpr.value == 1.0 and found.precision.value == 1.0
    document = json.loads(found.model_dump_json())  # plain JSON: no NaN anywhere
    assert document["kappa"] == {"value": None, "interval": None, "reason": found.kappa.reason}
    assert VerdictAgreement.model_validate_json(found.model_dump_json()) == found


def test_a_positive_verdict_no_one_gave_makes_its_rates_none() -> None:
    found = verdict_agreement(pairs_of({(False, False): 3, (False, True): 2}))
    assert found.labels == [False, True] and found.confusion == [[3, 2], [0, 0]]
    assert found.tpr.value is None and found.tpr.reason == "the person never labelled True"
    assert found.precision.value == 0.0
    assert found.kappa.value == pytest.approx(0.0)


def test_no_pairs_give_every_number_none_with_the_reason() -> None:
    found = verdict_agreement([])
    assert (found.pairs, found.cases, found.labels, found.confusion) == (0, 0, [], [])
    for name in ("agreement", "tpr", "tnr", "precision", "kappa", "alpha"):
        assert getattr(found, name).value is None
        assert getattr(found, name).reason == "no labelled pairs"


def test_turns_of_one_case_are_resampled_together() -> None:
    # 20 cases whose 10 turns are labelled alike carry what 20 cases of one turn carry:
    # the same rates and kappa, with the same intervals (alpha's small-sample term counts
    # values, so it moves a little); 200 cases of one turn give narrower ones
    table = {(True, True): 8, (True, False): 2, (False, False): 7, (False, True): 3}
    by_case = verdict_agreement(pairs_of(table, turns=10))
    once = verdict_agreement(pairs_of(table))
    assert (by_case.pairs, by_case.cases, once.cases) == (200, 20, 20)
    assert by_case.alpha.value == pytest.approx(once.alpha.value, abs=0.03)
    for name in ("agreement", "tpr", "tnr", "precision", "kappa"):
        assert getattr(by_case, name).value == pytest.approx(getattr(once, name).value)
        assert getattr(by_case, name).interval == getattr(once, name).interval, name
    independent = verdict_agreement(pairs_of({k: 10 * n for k, n in table.items()}))
    wide, narrow = by_case.kappa.interval, independent.kappa.interval
    assert wide is not None and narrow is not None
    assert wide.high - wide.low > 2.5 * (narrow.high - narrow.low)


def test_the_intervals_are_seeded_and_ignore_the_order_of_the_pairs() -> None:
    rng = random.Random(4)
    pairs = [
        {
            "case_id": f"c{i // 3}",
            "turn": i % 3,
            "human": rng.random() < 0.6,
            "judge": rng.random() < 0.5,
        }
        for i in range(90)
    ]
    shuffled = pairs[:]
    rng.shuffle(shuffled)
    first = verdict_agreement(pairs)
    assert verdict_agreement(shuffled) == first == verdict_agreement(pairs)
    other = verdict_agreement(pairs, seed=1)
    assert other.kappa.value == first.kappa.value and other.kappa.interval != first.kappa.interval
    narrow = verdict_agreement(pairs, confidence=0.5)
    assert narrow.kappa.interval is not None and first.kappa.interval is not None
    assert first.kappa.interval.low <= narrow.kappa.interval.low
    assert narrow.kappa.interval.high <= first.kappa.interval.high


def test_one_case_has_numbers_but_no_interval() -> None:
    found = verdict_agreement(pairs_of({(True, True): 3, (False, True): 1}, turns=1)[:1])
    assert found.agreement.value == 1.0 and found.agreement.interval is None


@pytest.mark.parametrize(
    ("call", "named"),
    [
        (lambda: verdict_agreement("pairs"), "pairs='pairs'"),
        (lambda: verdict_agreement([{"case_id": "a", "judge": True}]), r"pairs\[0\]\['human'\]"),
        (
            lambda: verdict_agreement([{"case_id": "a", "judge": 1, "human": True}]),
            r"pairs\[0\]\['judge'\]=1",
        ),
        (
            lambda: verdict_agreement([{"case_id": "", "judge": True, "human": True}]),
            r"pairs\[0\]\['case_id'\]",
        ),
        (
            lambda: verdict_agreement([{"case_id": "a", "turn": -1, "judge": True, "human": True}]),
            r"pairs\[0\]\['turn'\]",
        ),
        (lambda: verdict_agreement([3]), r"pairs\[0\]=3"),
        (
            lambda: verdict_agreement([{"case_id": "a", "judge": True, "human": True}] * 2),
            r"pairs\[1\]: case 'a', turn None is already pairs\[0\]",
        ),
        (
            lambda: verdict_agreement(
                [
                    {"case_id": "a", "judge": True, "human": True},
                    {"case_id": "b", "judge": True, "human": "pass"},
                ]
            ),
            r"pairs\[1\]\.human='pass'",
        ),
        (
            lambda: verdict_agreement(
                [{"case_id": "a", "judge": True, "human": True}], positive="pass"
            ),
            "positive='pass'",
        ),
        (lambda: verdict_agreement([], confidence=1.0), "confidence=1.0"),
        (lambda: verdict_agreement([], resamples=0), "resamples=0"),
        (lambda: verdict_agreement([], seed=-1), "seed=-1"),
    ],
)
def test_bad_input_is_refused_naming_the_argument(call: Any, named: str) -> None:
    with pytest.raises(InvalidOptionError, match=named):
        call()


junk = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=3), st.just([])
)
items = st.one_of(
    junk,
    st.fixed_dictionaries(
        {"case_id": st.one_of(st.text(max_size=2), junk)},
        optional={"turn": junk, "judge": junk, "human": junk, "rater": junk, "value": junk},
    ),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(junk, st.lists(items, max_size=6)))
def test_any_input_is_an_agreement_or_an_invalid_option_error(given_input: Any) -> None:
    from lg_eval.calibration import krippendorff_alpha

    for call in (
        lambda: verdict_agreement(given_input, resamples=20),
        lambda: krippendorff_alpha(given_input, resamples=20),
        lambda: krippendorff_alpha(given_input, level="interval", resamples=20),
    ):
        try:
            found = call()
        except InvalidOptionError:
            continue
        assert all(_finite(value) for value in _numbers(found.model_dump()))


def _numbers(tree: Any) -> list[Any]:
    if isinstance(tree, dict):
        return [n for value in tree.values() for n in _numbers(value)]
    if isinstance(tree, list):
        return [n for value in tree for n in _numbers(value)]
    return [tree] if isinstance(tree, float) else []


def _finite(value: float) -> bool:
    return math.isfinite(value)
