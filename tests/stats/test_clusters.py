"""Intervals that count cases: each checked against its definition, against the interval
over independent values it must equal without repetitions, and by its coverage."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lg_eval.errors import InvalidOptionError
from lg_eval.experiments import CaseResult, ExperimentRun, ScoreRow
from lg_eval.reports import build_report
from lg_eval.stats import (
    BOOTSTRAP_LIMIT,
    ClusterTotals,
    MeanSample,
    RateMoments,
    cluster_bootstrap,
    clustered_rate_interval,
    mean_interval,
    wilson_interval,
)
from tests.reports.conftest import T0, info
from tests.stats.test_intervals import Z95, wilson_by_hand


def fixed_outcome_run(cases: int, repetitions: int) -> ExperimentRun:
    """Half the cases always pass, half always fail, every repetition alike."""
    results = [
        CaseResult(
            run_id="fixed",
            case_id=f"c{case}",
            repetition=repetition,
            status="passed" if case % 2 == 0 else "failed",
            scores=[
                ScoreRow(evaluator="s", key="strict", score=case % 2 == 0, passed=case % 2 == 0),
                ScoreRow(evaluator="j", key="judge", score=1.0 if case % 2 == 0 else 0.0),
            ],
        )
        for case in range(cases)
        for repetition in range(repetitions)
    ]
    return ExperimentRun(info=info("fixed", T0), results=results)


def test_twenty_case_fixed_cases_of_ten_repetitions_give_the_interval_of_twenty_cases() -> None:
    # 10 cases always pass, 10 always fail: 20 independent cases stand behind the rate, not
    # 200 results. The interval is the Wilson interval of 10 in 20 (0.40 wide), where the
    # one over results would be 0.14 wide.
    report = build_report(fixed_outcome_run(20, 10))
    interval = report.summary.pass_rate_interval
    assert interval is not None and interval.method == "cluster_wilson"
    assert interval.high - interval.low >= 0.3
    assert (interval.low, interval.high) == pytest.approx(wilson_by_hand(10, 20), abs=1e-12)
    over_results = wilson_interval(100, 200)
    assert over_results is not None and over_results.high - over_results.low < 0.14
    strict = next(e for e in report.evaluators if e.key == "strict")
    assert strict.pass_rate_interval == interval
    judge = next(e for e in report.evaluators if e.key == "judge")
    assert judge.mean_interval is not None and judge.mean_interval.method == "cluster_bootstrap"
    assert judge.mean_interval.high - judge.mean_interval.low >= 0.3


@settings(max_examples=60, deadline=None)
@given(st.lists(st.booleans(), min_size=1, max_size=300))
def test_one_trial_per_cluster_gives_exactly_the_wilson_interval(passes: list[bool]) -> None:
    moments = RateMoments.of([(int(p), 1) for p in passes])
    assert clustered_rate_interval(moments) == wilson_interval(sum(passes), len(passes))


@settings(max_examples=60, deadline=None)
@given(
    passing=st.integers(0, 40),
    failing=st.integers(0, 40),
    repetitions=st.integers(2, 12),
)
def test_cases_that_always_agree_with_themselves_give_the_wilson_interval_over_cases(
    passing: int, failing: int, repetitions: int
) -> None:
    if passing + failing == 0:
        return
    counts = [(repetitions, repetitions)] * passing + [(0, repetitions)] * failing
    interval = clustered_rate_interval(RateMoments.of(counts))
    assert interval is not None and interval.method == "cluster_wilson"
    low, high = wilson_by_hand(passing, passing + failing)
    assert (interval.low, interval.high) == pytest.approx((low, high), abs=1e-12)


def test_cases_that_vary_only_within_count_every_result() -> None:
    # every case passes 5 of 10: no spread between cases, the rate over results holds
    interval = clustered_rate_interval(RateMoments.of([(5, 10)] * 8))
    assert interval is not None
    assert (interval.low, interval.high) == pytest.approx(wilson_by_hand(40, 80), abs=1e-12)


def test_the_effective_trials_follow_the_clustered_variance() -> None:
    # cases (y, m): p = 9/20; Σ(y - p·m)² = 0.75² + 1.75² + 0.65² + 1.8² + 1.35² = 9.11
    counts = [(3, 5), (4, 5), (2, 3), (0, 4), (0, 3)]
    p, spread = 9 / 20, 0.75**2 + 1.75**2 + 0.65**2 + 1.8**2 + 1.35**2
    effective = p * (1 - p) / (spread / 20**2)
    interval = clustered_rate_interval(RateMoments.of(counts))
    assert interval is not None
    centre, scale = p + Z95**2 / (2 * effective), 1 + Z95**2 / effective
    half = Z95 * math.sqrt(p * (1 - p) / effective + Z95**2 / (4 * effective**2))
    assert interval.low == pytest.approx((centre - half) / scale, abs=1e-12)
    assert interval.high == pytest.approx((centre + half) / scale, abs=1e-12)
    assert effective == pytest.approx(10.867, abs=1e-3)  # 20 results, 11 trials' worth


def test_sums_of_moments_are_whole_numbers_and_need_no_order() -> None:
    counts = [(3, 5), (4, 5), (2, 3), (0, 4), (0, 3)]
    assert RateMoments.of(counts) == RateMoments.of(reversed(counts))
    assert RateMoments.of(counts) == RateMoments(5, 9, 20, 29, 41, 84, 5)
    assert clustered_rate_interval(RateMoments()) is None


@pytest.mark.parametrize(
    ("counts", "named"),
    [
        ([(3, 2)], r"counts\[0\]=\(3, 2\): successes exceed trials"),
        ([(1, 2), (-1, 2)], r"counts\[1\]"),
        ([(1.5, 2)], r"counts\[0\]"),
        ([(1,)], r"counts\[0\]"),
    ],
)
def test_bad_counts_are_refused_naming_the_cluster(
    counts: list[tuple[int, ...]], named: str
) -> None:
    with pytest.raises(InvalidOptionError, match=named):
        RateMoments.of(counts)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- means


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=2, max_size=60))
def test_a_mean_of_one_value_per_case_is_the_bootstrap_of_the_values(values: list[float]) -> None:
    sample = MeanSample()
    for index, value in enumerate(values):
        sample.add(value, f"case-{index}")
    assert sample.interval() == mean_interval(values)


def test_past_the_limit_one_value_per_case_is_the_normal_interval_of_the_values() -> None:
    rng = random.Random(5)
    values = [rng.random() for _ in range(BOOTSTRAP_LIMIT + 10)]
    by_case, alone = MeanSample(), MeanSample()
    for index, value in enumerate(values):
        by_case.add(value, index)
        alone.add(value)
    interval = by_case.interval()
    assert interval is not None and interval.method == "normal"
    assert interval == alone.interval()


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.lists(st.floats(-1e3, 1e3, allow_nan=False), min_size=1, max_size=6),
        min_size=1,
        max_size=30,
    )
)
def test_the_streamed_spread_is_the_sum_of_squares_about_the_mean(
    clusters: list[list[float]],
) -> None:
    totals = ClusterTotals()
    for index, values in enumerate(clusters):
        for value in values:
            totals.add(value, index)
    sums = [(math.fsum(values), len(values)) for values in clusters]
    mean = math.fsum(y for y, _ in sums) / sum(m for _, m in sums)
    spread = math.fsum((y - mean * m) ** 2 for y, m in sums)
    moments, _ = totals._final()
    assert moments.clusters == len(clusters)
    assert moments.spread == pytest.approx(spread, rel=1e-9, abs=1e-6)
    assert totals.largest == max(len(values) for values in clusters)


def test_past_the_limit_the_mean_over_cases_is_the_normal_interval_of_the_cases() -> None:
    rng = random.Random(9)
    clusters = [[rng.random()] * 3 for _ in range(BOOTSTRAP_LIMIT + 100)]
    sample = MeanSample()
    for index, values in enumerate(clusters):
        for value in values:
            sample.add(value, index)
    interval = sample.interval()
    assert interval is not None and interval.method == "cluster_normal"
    # every case's three values are equal: the interval is the normal interval of the
    # case means (CR1 variance: G/(G-1) Σ(y - r·m)² / (Σm)²)
    g = len(clusters)
    means = [values[0] for values in clusters]
    mean = math.fsum(means) / g
    half = Z95 * math.sqrt(g / (g - 1) * math.fsum((9 * (x - mean) ** 2) for x in means)) / (3 * g)
    assert interval.low == pytest.approx(mean - half, rel=1e-9)
    assert interval.high == pytest.approx(mean + half, rel=1e-9)
    moments, _ = sample.clusters._final()
    again = ClusterTotals.from_moments(g, 3 * g, moments.total, moments.spread, 3)
    assert again.interval(sample.lo, sample.hi) == interval


def test_one_case_of_many_repetitions_keeps_the_interval_of_its_values() -> None:
    values = [0.2, 0.4, 0.9, 0.7]
    sample = MeanSample()
    for value in values:
        sample.add(value, "only")
    assert sample.interval() == mean_interval(values)


def test_the_cluster_bootstrap_is_seeded_and_ignores_the_order_of_the_cases() -> None:
    pairs = [(1.5, 3), (0.2, 1), (2.0, 2), (0.0, 2), (0.9, 3), (1.1, 2)]
    shuffled = pairs[:]
    random.Random(2).shuffle(shuffled)
    first = ClusterTotals.from_pairs(pairs).interval(0.0, 1.0)
    assert first is not None and first.method == "cluster_bootstrap"
    assert first == ClusterTotals.from_pairs(shuffled).interval(0.0, 1.0)
    mean = 5.7 / 13
    assert first.low < mean < first.high


def test_the_cluster_interval_covers_the_mean_of_the_cases_where_the_plain_one_does_not() -> None:
    # 200 seeded runs of 30 cases × 5 repetitions; each case has its own mean (spread 0.2)
    # and its repetitions vary little around it. The interval over cases should cover the
    # true mean about 95% of the time; the one that takes 150 values as independent does not.
    rng = np.random.default_rng(42)
    covered = plain_covered = 0
    for _ in range(200):
        case_means = rng.normal(0.5, 0.2, size=30)
        values = case_means[:, None] + rng.normal(0.0, 0.02, size=(30, 5))
        sample = MeanSample()
        for case, row in enumerate(values):
            for value in row:
                sample.add(float(value), case)
        interval = sample.interval()
        plain = mean_interval(values.ravel().tolist())
        assert interval is not None and plain is not None
        covered += interval.low <= 0.5 <= interval.high
        plain_covered += plain.low <= 0.5 <= plain.high
    assert 180 <= covered <= 199  # 0.90 .. 0.995 of 200
    assert plain_covered < 150  # the plain interval is too narrow by about √5


def test_a_statistic_undefined_on_some_resamples_is_taken_over_the_others() -> None:
    # cluster rows (positives, trials): a rate that is undefined when a resample draws only
    # the cluster without trials
    sums = [[0.0, 0.0], [1.0, 2.0]]
    interval = cluster_bootstrap(sums, lambda s: s[:, 0] / s[:, 1])
    assert interval is not None and (interval.low, interval.high) == (0.5, 0.5)
    assert cluster_bootstrap([[0.0, 0.0], [0.0, 0.0]], lambda s: s[:, 0] / s[:, 1]) is None
    assert cluster_bootstrap([[1.0, 2.0]], lambda s: s[:, 0] / s[:, 1]) is None


@pytest.mark.parametrize(
    ("call", "named"),
    [
        (lambda: cluster_bootstrap([[1.0], [math.nan]], np.ravel), "sums="),
        (lambda: cluster_bootstrap([1.0, 2.0], np.ravel), "sums="),
        (lambda: cluster_bootstrap([[1.0], [2.0]], np.ravel, resamples=0), "resamples=0"),
        (lambda: cluster_bootstrap([[1.0], [2.0]], np.ravel, confidence=1.0), "confidence=1.0"),
        (lambda: ClusterTotals.from_pairs([(1.0, 0)]), r"pairs\[0\]"),
        (lambda: ClusterTotals.from_pairs([(math.inf, 1)]), r"pairs\[0\]"),
        (lambda: ClusterTotals.from_moments(10, 20, 1.0, 1.0, 2), "clusters=10"),
        (lambda: clustered_rate_interval((1, 2)), "moments="),  # type: ignore[arg-type]
    ],
)
def test_bad_input_to_the_cluster_statistics_is_refused_by_name(call: object, named: str) -> None:
    with pytest.raises(InvalidOptionError, match=named):
        call()  # type: ignore[operator]


@pytest.mark.parametrize("distinct", [True, False])
def test_the_cluster_bootstrap_matches_scipys_percentile_bootstrap(distinct: bool) -> None:
    # 2,000 clusters of (successes, trials): all distinct (drawn cluster by cluster) or four
    # kinds repeated (counts of each kind drawn at once); either way the same bootstrap as
    # scipy's over the clusters, up to the resampling noise of the two
    rng = np.random.default_rng(3)
    trials = rng.integers(1, 6, size=2000) if distinct else np.repeat([1, 2, 3, 4], 500)
    successes = rng.binomial(trials, 0.3 + 0.4 * (np.arange(2000) % 2))
    if distinct:
        successes = successes + rng.random(2000) / 100  # no two rows alike
    sums = np.column_stack([successes, trials]).astype(float)
    ours = cluster_bootstrap(sums, lambda s: s[:, 0] / s[:, 1])
    from scipy import stats as scipy_stats

    reference = scipy_stats.bootstrap(
        (successes, trials),
        lambda y, m, axis: y.sum(axis=axis) / m.sum(axis=axis),
        paired=True,
        vectorized=True,
        method="percentile",
        n_resamples=3999,
        rng=np.random.default_rng(0),
    ).confidence_interval
    assert ours is not None
    width = reference.high - reference.low
    assert ours.low == pytest.approx(reference.low, abs=0.1 * width)
    assert ours.high == pytest.approx(reference.high, abs=0.1 * width)
