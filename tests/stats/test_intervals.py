"""Confidence intervals against textbook values and their defining properties."""

from __future__ import annotations

import math
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lg_eval.errors import InvalidOptionError
from lg_eval.stats import BOOTSTRAP_LIMIT, MeanSample, mean_interval, wilson_interval

Z95 = 1.959963984540054  # the 0.975 quantile of the standard normal


def wilson_by_hand(k: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson (1927): (p + z²/2n ± z·sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n)."""
    p = k / n
    centre = p + z * z / (2 * n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (centre - half) / (1 + z * z / n), (centre + half) / (1 + z * z / n)


def test_wilson_interval_matches_newcombes_worked_example() -> None:
    # Newcombe (1998), Statistics in Medicine 17:857, table II: 81/263 -> 0.2553 to 0.3662.
    interval = wilson_interval(81, 263)
    assert interval is not None
    assert (round(interval.low, 4), round(interval.high, 4)) == (0.2553, 0.3662)
    assert interval.method == "wilson" and interval.confidence == 0.95


def test_wilson_interval_of_eight_in_ten_is_the_hand_computed_one() -> None:
    interval = wilson_interval(8, 10)
    assert interval is not None
    low, high = wilson_by_hand(8, 10)
    assert interval.low == pytest.approx(low, abs=1e-12)
    assert interval.high == pytest.approx(high, abs=1e-12)
    assert (round(interval.low, 4), round(interval.high, 4)) == (0.4902, 0.9433)


def test_wilson_interval_of_no_trials_is_none() -> None:
    assert wilson_interval(0, 0) is None


@given(n=st.integers(1, 2000), data=st.data())
def test_wilson_interval_contains_the_observed_rate_and_stays_in_the_unit_range(
    n: int, data: st.DataObject
) -> None:
    k = data.draw(st.integers(0, n))
    interval = wilson_interval(k, n)
    assert interval is not None
    low, high = wilson_by_hand(k, n)
    assert interval.low == pytest.approx(max(low, 0.0), abs=1e-9)
    assert interval.high == pytest.approx(min(high, 1.0), abs=1e-9)
    assert 0.0 <= interval.low <= k / n <= interval.high <= 1.0


@given(k=st.integers(0, 50), extra=st.integers(0, 50))
def test_wilson_interval_widens_with_the_confidence(k: int, extra: int) -> None:
    n = k + extra + 1
    wide, narrow = wilson_interval(k, n, confidence=0.99), wilson_interval(k, n, confidence=0.8)
    assert wide is not None and narrow is not None
    assert wide.low <= narrow.low and narrow.high <= wide.high


@pytest.mark.parametrize(
    ("successes", "trials", "confidence", "named"),
    [
        (-1, 5, 0.95, "successes=-1"),
        (6, 5, 0.95, "successes=6 exceeds trials=5"),
        (1, 2.5, 0.95, "trials=2.5"),
        (True, 5, 0.95, "successes=True"),
        (1, 5, 1.0, "confidence=1.0"),
        (1, 5, 0.0, "confidence=0.0"),
        (1, 5, "0.9", "confidence='0.9'"),
    ],
)
def test_wilson_interval_refuses_bad_counts_naming_the_argument(
    successes: object, trials: object, confidence: object, named: str
) -> None:
    with pytest.raises(InvalidOptionError, match=named.replace("(", r"\(")):
        wilson_interval(successes, trials, confidence=confidence)  # type: ignore[arg-type]


def test_mean_interval_is_seeded_and_ignores_the_order_of_the_values() -> None:
    values = [0.1, 0.4, 0.35, 0.8, 0.9, 0.2, 0.55, 0.6, 0.05, 1.0]
    shuffled = values[:]
    random.Random(3).shuffle(shuffled)
    first, again, reordered = mean_interval(values), mean_interval(values), mean_interval(shuffled)
    assert first == again == reordered
    assert first is not None and first.method == "bootstrap"
    assert first.low < sum(values) / len(values) < first.high


def test_mean_interval_agrees_with_the_normal_interval_for_many_values() -> None:
    rng = random.Random(7)
    values = [rng.random() for _ in range(500)]
    mean = sum(values) / len(values)
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))
    half = Z95 * sd / math.sqrt(len(values))
    interval = mean_interval(values)
    assert interval is not None
    # The bootstrap of 500 uniform values is the normal interval to within a tenth of its width.
    assert interval.low == pytest.approx(mean - half, abs=0.2 * half)
    assert interval.high == pytest.approx(mean + half, abs=0.2 * half)


def test_mean_interval_past_the_bootstrap_limit_is_the_clipped_normal_interval() -> None:
    values = [1.0] * BOOTSTRAP_LIMIT + [0.0]
    interval = mean_interval(values)
    n = len(values)
    mean = BOOTSTRAP_LIMIT / n
    sd = math.sqrt((BOOTSTRAP_LIMIT * (1 - mean) ** 2 + mean**2) / (n - 1))
    assert interval is not None and interval.method == "normal"
    assert interval.low == pytest.approx(mean - Z95 * sd / math.sqrt(n), abs=1e-12)
    assert interval.high == 1.0  # clipped to the largest value seen


def test_mean_interval_of_equal_values_is_that_value_and_of_one_value_none() -> None:
    interval = mean_interval([0.5, 0.5, 0.5])
    assert interval is not None and (interval.low, interval.high) == (0.5, 0.5)
    assert mean_interval([0.5]) is None
    assert mean_interval([]) is None


@pytest.mark.parametrize("bad", [math.nan, math.inf, "0.5", None])
def test_mean_interval_refuses_a_value_that_is_not_a_finite_number(bad: object) -> None:
    with pytest.raises(InvalidOptionError, match=r"values\[1\]"):
        mean_interval([0.2, bad])  # type: ignore[list-item]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=2, max_size=60))
def test_mean_interval_lies_within_the_values_and_a_sample_gives_the_same(
    values: list[float],
) -> None:
    interval = mean_interval(values)
    assert interval is not None
    assert min(values) <= interval.low <= interval.high <= max(values)
    sample = MeanSample()
    for value in values:
        sample.add(value)
    assert sample.interval() == interval


def test_a_sample_past_the_limit_keeps_no_values_and_gives_the_normal_interval() -> None:
    rng = random.Random(11)
    values = [rng.random() for _ in range(BOOTSTRAP_LIMIT + 50)]
    sample = MeanSample()
    for value in values:
        sample.add(value)
    assert sample.values is None
    streamed, whole = sample.interval(), mean_interval(values)
    assert streamed is not None and whole is not None and streamed.method == "normal"
    assert streamed.low == pytest.approx(whole.low, abs=1e-12)
    assert streamed.high == pytest.approx(whole.high, abs=1e-12)


def test_a_sample_of_moments_gives_the_normal_interval_of_its_values() -> None:
    values = [(i * 7919 % 1000) / 1000 for i in range(BOOTSTRAP_LIMIT + 1)]
    mean = sum(values) / len(values)
    m2 = sum((v - mean) ** 2 for v in values)
    sample = MeanSample.from_moments(len(values), mean, m2, min(values), max(values))
    interval, expected = sample.interval(), mean_interval(values)
    assert interval is not None and expected is not None and interval.method == "normal"
    assert interval.low == pytest.approx(expected.low, rel=1e-12)
    assert interval.high == pytest.approx(expected.high, rel=1e-12)


@pytest.mark.parametrize(
    ("args", "named"),
    [
        ((BOOTSTRAP_LIMIT, 0.5, 1.0, 0.0, 1.0), "n=1000"),
        ((BOOTSTRAP_LIMIT + 1, float("nan"), 1.0, 0.0, 1.0), "mean=nan"),
        ((BOOTSTRAP_LIMIT + 1, 0.5, float("inf"), 0.0, 1.0), "m2=inf"),
        ((BOOTSTRAP_LIMIT + 1, 0.5, 1.0, "0", 1.0), "lo='0'"),
    ],
)
def test_moments_that_cannot_make_an_interval_are_refused_by_name(
    args: tuple[Any, ...], named: str
) -> None:
    with pytest.raises(InvalidOptionError, match=named):
        MeanSample.from_moments(*args)
