"""krippendorff_alpha against Krippendorff's own worked example and the krippendorff
package, with missing ratings, several raters, nominal and interval ratings."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from krippendorff import alpha as reference_alpha

from lg_eval.calibration import AlphaAgreement, Rating, krippendorff_alpha
from lg_eval.errors import InvalidOptionError

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C: four
# observers, twelve units, values 1-5, None where an observer gave no value.
OBSERVERS = {
    "A": [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    "B": [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    "C": [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    "D": [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
}


def worked_example() -> list[Rating]:
    return [
        Rating(case_id=f"unit-{unit + 1}", rater=rater, value=value)
        for rater, values in OBSERVERS.items()
        for unit, value in enumerate(values)
        if value is not None
    ]


def test_krippendorffs_worked_example_gives_his_published_alphas() -> None:
    nominal = krippendorff_alpha(worked_example())
    interval = krippendorff_alpha(worked_example(), level="interval")
    assert nominal.alpha.value is not None and interval.alpha.value is not None
    assert round(nominal.alpha.value, 3) == 0.743
    assert round(interval.alpha.value, 3) == 0.849
    # unit 12 has one value only: 11 pairable units holding 40 values
    assert (nominal.units, nominal.values, nominal.raters, nominal.cases) == (11, 40, 4, 11)
    assert nominal.alpha.interval is not None
    assert nominal.alpha.interval.low <= nominal.alpha.value <= nominal.alpha.interval.high


def reliability(ratings: list[tuple[int, int, Any]], raters: int, units: int) -> np.ndarray:
    data = np.full((raters, units), np.nan)
    for rater, unit, value in ratings:
        data[rater, unit] = float(value)
    return data


cells = st.dictionaries(
    st.tuples(st.integers(0, 3), st.integers(0, 11)),  # (rater, unit)
    st.integers(1, 4),
    min_size=2,
    max_size=40,
)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cells, st.sampled_from(["nominal", "interval"]))
def test_alpha_is_the_krippendorff_packages(drawn: dict[tuple[int, int], int], level: str) -> None:
    ratings = [
        {"case_id": f"u{unit}", "rater": f"r{rater}", "value": value}
        for (rater, unit), value in drawn.items()
    ]
    found = krippendorff_alpha(ratings, level=level, resamples=30)  # type: ignore[arg-type]
    units: dict[int, list[int]] = {}
    for (_, unit), value in drawn.items():
        units.setdefault(unit, []).append(value)
    pairable = [values for values in units.values() if len(values) >= 2]
    if not pairable:
        assert found.alpha.value is None and "rated twice" in (found.alpha.reason or "")
        return
    if len({v for values in pairable for v in values}) == 1:
        assert found.alpha.value is None and "undefined" in (found.alpha.reason or "")
        return
    data = reliability([(r, u, v) for (r, u), v in drawn.items()], 4, 12)
    expected = reference_alpha(reliability_data=data, level_of_measurement=level)
    assert found.alpha.value == pytest.approx(expected, abs=1e-9)
    assert found.values == sum(len(values) for values in pairable)


def test_turns_are_units_and_cases_are_what_the_bootstrap_resamples() -> None:
    ratings = [
        Rating(case_id=f"c{case}", turn=turn, rater=rater, value=float((case + turn + bias) % 5))
        for case in range(12)
        for turn in range(3)
        for rater, bias in (("judge", 0), ("alice", case % 2), ("bob", 0))
    ]
    found = krippendorff_alpha(ratings, level="interval")
    assert (found.units, found.cases, found.raters, found.values) == (36, 12, 3, 108)
    assert found.alpha.value is not None and found.alpha.interval is not None
    assert found.alpha.interval.method == "cluster_bootstrap"
    assert AlphaAgreement.model_validate_json(found.model_dump_json()) == found


def test_degenerate_ratings_give_none_with_the_reason() -> None:
    same = [Rating(case_id=f"c{i}", rater=r, value="pass") for i in range(3) for r in "ab"]
    found = krippendorff_alpha(same)
    assert found.alpha.value is None and found.alpha.interval is None
    assert found.alpha.reason == "every rating is 'pass': alpha is undefined without variation"
    alone = [Rating(case_id=f"c{i}", rater="a", value=i) for i in range(3)]
    lonely = krippendorff_alpha(alone)
    assert lonely.alpha.value is None and lonely.units == 0
    assert lonely.alpha.reason == (
        "no case is rated twice: alpha needs units with at least two ratings"
    )
    assert krippendorff_alpha([]).alpha.value is None


def test_nominal_categories_keep_true_apart_from_one() -> None:
    ratings = [
        Rating(case_id="c1", rater="a", value=True),
        Rating(case_id="c1", rater="b", value=1),
        Rating(case_id="c2", rater="a", value=1.0),
        Rating(case_id="c2", rater="b", value=1),
    ]
    found = krippendorff_alpha(ratings)
    # c1 disagrees (True is not 1), c2 agrees (1.0 is 1): n = 4, counts 1 and 3
    assert found.alpha.value == pytest.approx(1 - 3 * 2 / (16 - 1 - 9))
    assert not math.isnan(found.alpha.value)


@pytest.mark.parametrize(
    ("call", "named"),
    [
        (lambda: krippendorff_alpha(5), "ratings=5"),  # type: ignore[arg-type]
        (
            lambda: krippendorff_alpha([{"case_id": "c", "rater": "a", "value": None}]),
            r"ratings\[0\]\['value'\]=None",
        ),
        (
            lambda: krippendorff_alpha([{"case_id": "c", "rater": "a", "value": math.nan}]),
            r"ratings\[0\]\['value'\]=nan",
        ),
        (
            lambda: krippendorff_alpha([{"case_id": "c", "rater": "a", "value": 1}] * 2),
            r"ratings\[1\]: 'a' already rated case 'c'",
        ),
        (
            lambda: krippendorff_alpha(
                [{"case_id": "c", "rater": "a", "value": "good"}], level="interval"
            ),
            r"ratings\[0\]\.value='good': interval ratings are numbers",
        ),
        (lambda: krippendorff_alpha([], level="ordinal"), "level='ordinal'"),  # type: ignore[arg-type]
        (lambda: krippendorff_alpha([], confidence=0), "confidence=0"),
    ],
)
def test_bad_ratings_are_refused_naming_the_argument(call: Any, named: str) -> None:
    with pytest.raises(InvalidOptionError, match=named):
        call()
