"""Aggregates over a run's results, computed once here so every report shows the same numbers.

* per case over its repetitions: :func:`pass_at_k` (some repetition passed),
  :func:`pass_hat_k` (every repetition passed), :func:`case_mean_scores`;
* per run: :func:`mean_scores` per feedback key, :func:`latency_percentiles`
  (p50 / p95), and :func:`summarize` for all of it plus counts, tokens and cost.

Scores count as numbers (a bool is 1.0 or 0.0); a missing score (``None``) is left
out of means. Percentiles interpolate linearly between the closest ranks.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence

from pydantic import BaseModel, ConfigDict

from lg_eval.experiments.results import CaseResult, ExperimentRun
from lg_eval.feedback import ScoreValue


def score_number(score: ScoreValue) -> float | None:
    """``score`` as a float (True 1.0, False 0.0); None stays None."""
    return None if score is None else float(score)


def percentile(values: Sequence[float], q: float) -> float | None:
    """The ``q``-th percentile (0-100) of ``values``, linearly interpolated; None if empty."""
    if not values:
        return None
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100
    low, high = math.floor(rank), math.ceil(rank)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def by_case(results: Iterable[CaseResult]) -> dict[str, list[CaseResult]]:
    """Results grouped by case id (first-seen order), repetitions in order."""
    grouped: dict[str, list[CaseResult]] = {}
    for result in results:
        grouped.setdefault(result.case_id, []).append(result)
    for group in grouped.values():
        group.sort(key=lambda r: r.repetition)
    return grouped


def pass_at_k(run: ExperimentRun) -> dict[str, bool]:
    """Per case: whether at least one repetition passed."""
    return {
        case: any(r.status == "passed" for r in rs) for case, rs in by_case(run.results).items()
    }


def pass_hat_k(run: ExperimentRun) -> dict[str, bool]:
    """Per case: whether every repetition passed (pass^k)."""
    return {
        case: all(r.status == "passed" for r in rs) for case, rs in by_case(run.results).items()
    }


def _means(results: Iterable[CaseResult]) -> dict[str, float]:
    values: dict[str, list[float]] = defaultdict(list)
    for result in results:
        for row in result.scores:
            number = score_number(row.score)
            if number is not None:
                values[row.key].append(number)
    return {key: sum(v) / len(v) for key, v in values.items()}


def mean_scores(run: ExperimentRun) -> dict[str, float]:
    """Per feedback key: the mean score over every result that has one."""
    return _means(run.results)


def case_mean_scores(run: ExperimentRun) -> dict[str, dict[str, float]]:
    """Per case, per feedback key: the mean score over its repetitions."""
    return {case: _means(rs) for case, rs in by_case(run.results).items()}


def latency_percentiles(run: ExperimentRun) -> dict[str, float | None]:
    """``{"p50": ..., "p95": ...}`` of the results' latencies in seconds."""
    latencies = [r.latency_s for r in run.results]
    return {"p50": percentile(latencies, 50), "p95": percentile(latencies, 95)}


def total_cost(run: ExperimentRun) -> float | None:
    """The summed cost of the results that report one (None when none does)."""
    costs = [r.cost for r in run.results if r.cost is not None]
    return sum(costs) if costs else None


def _rate(flags: dict[str, bool]) -> float | None:
    return sum(flags.values()) / len(flags) if flags else None


class RunSummary(BaseModel):
    """A run in numbers: what the reports show in their header and trend charts."""

    model_config = ConfigDict(extra="forbid")

    run_id: str
    results: int
    cases: int
    passed: int
    failed: int
    errors: int
    timeouts: int
    pass_rate: float | None
    pass_at_k: float | None
    pass_hat_k: float | None
    mean_scores: dict[str, float]
    latency_p50_s: float | None
    latency_p95_s: float | None
    tokens: int
    cost: float | None
    model_calls: int
    gate_failed: bool


def summarize(run: ExperimentRun) -> RunSummary:
    """Every aggregate of ``run`` in one model."""
    statuses = [r.status for r in run.results]
    latency = latency_percentiles(run)
    return RunSummary(
        run_id=run.info.run_id,
        results=len(run.results),
        cases=len(by_case(run.results)),
        passed=statuses.count("passed"),
        failed=statuses.count("failed"),
        errors=statuses.count("error"),
        timeouts=statuses.count("timeout"),
        pass_rate=run.pass_rate,
        pass_at_k=_rate(pass_at_k(run)),
        pass_hat_k=_rate(pass_hat_k(run)),
        mean_scores=mean_scores(run),
        latency_p50_s=latency["p50"],
        latency_p95_s=latency["p95"],
        tokens=sum(r.tokens for r in run.results),
        cost=total_cost(run),
        model_calls=sum(r.model_calls for r in run.results),
        gate_failed=run.gate_failed,
    )


__all__ = [
    "RunSummary",
    "by_case",
    "case_mean_scores",
    "latency_percentiles",
    "mean_scores",
    "pass_at_k",
    "pass_hat_k",
    "percentile",
    "score_number",
    "summarize",
    "total_cost",
]
