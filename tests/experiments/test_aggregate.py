"""Aggregates and run comparison on hand-made results (exact numbers)."""

from __future__ import annotations

from datetime import UTC, datetime

from lg_eval.experiments import (
    CaseCounts,
    CaseResult,
    ExperimentRun,
    Latencies,
    RunInfo,
    ScoreRow,
    case_counts,
    compare_runs,
    latencies,
    latency_percentiles,
    mean_scores,
    percentile,
)
from lg_eval.reports import build_report
from lg_eval.stats import RateMoments


def run(run_id: str, *results: tuple[str, str, float, float, float | None]) -> ExperimentRun:
    info = RunInfo(
        run_id=run_id,
        dataset="d",
        dataset_hash="h",
        target="t",
        checkpointer="c",
        started_at=datetime(2025, 1, 1, tzinfo=UTC),
        config={"fail_under": 0.6},
    )
    return ExperimentRun(
        info=info,
        results=[
            CaseResult(
                run_id=run_id,
                case_id=case,
                status=status,
                latency_s=latency,
                cost=cost,
                scores=[ScoreRow(evaluator="e", key="k", score=score, passed=score >= 1)],
            )
            for case, status, score, latency, cost in results
        ],
    )


A = run(
    "a",
    ("x", "passed", 1.0, 1.0, 0.5),
    ("y", "failed", 0.5, 2.0, None),
    ("z", "passed", 1.0, 4.0, 0.25),
)
B = run(
    "b",
    ("x", "failed", 0.6, 3.0, 1.0),
    ("y", "passed", 1.0, 2.0, None),
    ("w", "passed", 1.0, 1.0, None),
)


def test_percentiles_interpolate_between_ranks():
    assert percentile([4.0, 1.0, 2.0], 50) == 2.0
    assert percentile([1.0, 2.0, 4.0], 95) == 3.8
    assert percentile([], 50) is None
    assert latency_percentiles(A) == {"p50": 2.0, "p95": 3.8}


def test_summary_counts_and_means():
    summary = build_report(A).summary
    assert (summary.counts.passed, summary.counts.failed, summary.pass_rate) == (2, 1, 2 / 3)
    assert mean_scores(A) == {"k": 2.5 / 3}
    assert (summary.cost, A.gate_failed) == (0.75, False)
    assert mean_scores(B) == {"k": 2.6 / 3}


def test_case_counts_group_repetitions_by_case():
    results = [
        *A.results,
        A.results[0].model_copy(update={"repetition": 1, "status": "failed"}),
        A.results[1].model_copy(update={"repetition": 1, "status": "passed"}),
    ]
    # x: passed, failed; y: failed, passed; z: passed (one repetition)
    # per case (passed y, results m): (1, 2), (1, 2), (1, 1) -> Σy 3, Σm 5, Σy² 3, Σym 5, Σm² 9
    passes = RateMoments(clusters=3, successes=3, trials=5, successes_sq=3, cross=5,
                         trials_sq=9, largest=2)  # fmt: skip
    assert case_counts(results) == CaseCounts(cases=3, k=2, some=3, every=1, passes=passes)
    assert case_counts([]) == CaseCounts(0, 0, 0, 0, RateMoments())


def test_latencies_are_the_median_p95_and_longest():
    assert latencies(A.results) == Latencies(p50=2.0, p95=3.8, max=4.0)
    assert latencies([]) == Latencies(None, None, None)


def test_compare_finds_regressions_improvements_and_added_cases():
    comparison = compare_runs(A, B, tolerance=0.1)
    changes = {c.case_id: (c.change, c.status_a, c.status_b) for c in comparison.cases}
    assert changes == {
        "x": ("regressed", "passed", "failed"),
        "y": ("improved", "failed", "passed"),
        "z": ("removed", "passed", None),
        "w": ("added", None, "passed"),
    }
    assert comparison.regressed
    x = comparison.cases[0]
    assert (round(x.score_deltas["k"], 6), x.latency_delta_s) == (-0.4, 2.0)
    assert round(comparison.evaluator_deltas["k"], 6) == round(2.6 / 3 - 2.5 / 3, 6)
    assert (comparison.pass_rate_a, comparison.pass_rate_b) == (2 / 3, 2 / 3)
    assert (comparison.latency_p50_delta_s, comparison.cost_delta) == (0.0, 0.25)


def test_a_score_drop_within_the_tolerance_is_unchanged():
    a = run("a", ("x", "passed", 1.0, 1.0, None))
    b = run("b", ("x", "passed", 0.95, 1.0, None))
    assert compare_runs(a, b, tolerance=0.1).cases[0].change == "unchanged"
    assert compare_runs(a, b).cases[0].change == "regressed"


def test_a_row_whose_evaluator_raised_has_no_score_in_any_aggregate() -> None:
    errored = ScoreRow(evaluator="e", key="k", score=0.0, error="ValueError: boom")
    assert errored.score is None and errored.error == "ValueError: boom"
    before = run("before", ("x", "passed", 1.0, 1.0, None))
    after = ExperimentRun(
        info=before.info.model_copy(update={"run_id": "after"}),
        results=[CaseResult(run_id="after", case_id="x", status="error", scores=[errored])],
    )
    (summary,) = build_report(after).evaluators
    assert (summary.errors, summary.no_verdict, summary.mean) == (1, 0, None)
    assert mean_scores(after) == {}
    # the case errored: a regression, with no score delta made of the error's number
    (change,) = compare_runs(before, after).cases
    assert (change.change, change.score_deltas) == ("regressed", {})
