"""``build_report``: a run (and optionally its history and a comparison) → one :class:`Report`.

Every aggregate of every rendering is computed here and only here: status counts, pass
rates (overall, pass@k, pass^k, per feedback key, per tag), score statistics, latency
percentiles, tokens and cost, chart bins, the trend across stored runs and the grouped
comparison. (The runner's ``lg_eval.experiments`` has no aggregate helpers yet; when it
gains them, this module is the one place to switch over.)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from lg_eval.experiments.aggregate import by_case, percentile
from lg_eval.experiments.results import (
    CaseResult,
    Comparison,
    ExperimentRun,
    PlayedTurnRecord,
    ScoreRow,
)
from lg_eval.reports._text import value_text
from lg_eval.reports.diff import diff_turns, sides
from lg_eval.reports.model import (
    AskedInterrupt,
    CaseReport,
    ComparisonReport,
    EvaluatorSummary,
    Histogram,
    PlayedTurn,
    Report,
    ScoreLine,
    StatusCounts,
    Summary,
    TagSummary,
    TrendPoint,
)

BINS = 10


def build_report(
    run: ExperimentRun,
    *,
    history: Sequence[ExperimentRun] = (),
    comparison: Comparison | None = None,
) -> Report:
    """The report of ``run``.

    ``history``: other stored runs; those of the same dataset (by name) make the trend,
    oldest first, with ``run`` itself marked current. ``comparison``: ``run`` against a
    baseline (from the store's compare), grouped into regressions, improvements, added
    and removed cases.
    """
    results = run.results
    cases = [_case(index, result) for index, result in enumerate(results)]
    numeric = [
        float(line.score)
        for case in cases
        for line in case.scores
        if isinstance(line.score, int | float) and not isinstance(line.score, bool)
    ]
    latencies = [result.latency_s for result in results]
    return Report(
        info=run.info,
        summary=_summary(results),
        evaluators=_evaluators(results),
        tags=_tags(results),
        cases=cases,
        score_histogram=histogram("numeric scores", numeric, unit_interval=True),
        latency_histogram=histogram("latency (s)", latencies, from_zero=True),
        trend=_trend(run, history) if history else [],
        comparison=_comparison(comparison) if comparison else None,
    )


# --------------------------------------------------------------------------- aggregates


def counts(results: Iterable[CaseResult]) -> StatusCounts:
    """Results per status."""
    tally = StatusCounts()
    for result in results:
        setattr(tally, result.status, tally.of(result.status) + 1)
    return tally


def rate(part: int, whole: int) -> float | None:
    """``part / whole``, None when ``whole`` is 0."""
    return part / whole if whole else None


def histogram(
    label: str, values: Sequence[float], *, unit_interval: bool = False, from_zero: bool = False
) -> Histogram:
    """Equal-width bins of ``values``.

    ``unit_interval``: bins over [0, 1] when every value lies there (scores);
    ``from_zero``: bins start at 0 (latencies). An empty or single-valued range is
    widened so every bin has a width.
    """
    if unit_interval and all(0.0 <= v <= 1.0 for v in values):
        lo, hi = 0.0, 1.0
    else:
        lo = 0.0 if from_zero else min(values, default=0.0)
        hi = max(values, default=1.0)
    if hi <= lo:
        lo, hi = (lo - 0.5, hi + 0.5) if not from_zero else (0.0, max(hi, 1.0))
    tally = [0] * BINS
    width = (hi - lo) / BINS
    for value in values:
        tally[min(int((value - lo) / width), BINS - 1)] += 1
    return Histogram(label=label, lo=lo, hi=hi, counts=tally)


def _summary(results: list[CaseResult]) -> Summary:
    cases = by_case(results)
    latencies = [result.latency_s for result in results]
    costs = [result.cost for result in results if result.cost is not None]
    tally = counts(results)
    return Summary(
        results=len(results),
        cases=len(cases),
        k=max((len(reps) for reps in cases.values()), default=0),
        counts=tally,
        pass_rate=rate(tally.passed, len(results)),
        pass_at_k=rate(
            sum(any(r.status == "passed" for r in reps) for reps in cases.values()),
            len(cases),
        ),
        pass_hat_k=rate(
            sum(all(r.status == "passed" for r in reps) for reps in cases.values()),
            len(cases),
        ),
        latency_p50_s=percentile(latencies, 50),
        latency_p95_s=percentile(latencies, 95),
        latency_mean_s=sum(latencies) / len(latencies) if latencies else None,
        latency_max_s=max(latencies, default=None),
        tokens=sum(result.tokens for result in results),
        cost=sum(costs) if costs else None,
        model_calls=sum(result.model_calls for result in results),
        retries=sum(max(result.attempts - 1, 0) for result in results),
    )


def _evaluators(results: list[CaseResult]) -> list[EvaluatorSummary]:
    rows: dict[str, list[ScoreRow]] = {}
    for result in results:
        for row in result.scores:
            rows.setdefault(row.key, []).append(row)
    summaries = []
    for key, group in rows.items():
        scores = [float(r.score) for r in group if r.score is not None and r.error is None]
        passed = sum(r.passed is True for r in group)
        failed = sum(r.passed is False for r in group)
        summaries.append(
            EvaluatorSummary(
                key=key,
                evaluator=group[0].evaluator,
                rows=len(group),
                passed=passed,
                failed=failed,
                no_verdict=sum(r.passed is None and r.error is None for r in group),
                errors=sum(r.error is not None for r in group),
                pass_rate=rate(passed, passed + failed),
                mean=sum(scores) / len(scores) if scores else None,
                min=min(scores, default=None),
                max=max(scores, default=None),
            )
        )
    return summaries


def _tags(results: list[CaseResult]) -> list[TagSummary]:
    tagged: dict[str, list[CaseResult]] = {}
    for result in results:
        for tag in dict.fromkeys(result.tags):
            tagged.setdefault(tag, []).append(result)
    return [
        TagSummary(tag=tag, counts=counts(group), pass_rate=rate(counts(group).passed, len(group)))
        for tag, group in sorted(tagged.items())
    ]


def _trend(run: ExperimentRun, history: Sequence[ExperimentRun]) -> list[TrendPoint]:
    runs = {r.info.run_id: r for r in history if r.info.dataset == run.info.dataset}
    runs[run.info.run_id] = run
    return [
        TrendPoint(
            run_id=r.info.run_id,
            started_at=r.info.started_at,
            pass_rate=r.pass_rate,
            results=len(r.results),
            current=r.info.run_id == run.info.run_id,
        )
        for r in sorted(runs.values(), key=lambda r: r.info.started_at)
    ]


def _comparison(comparison: Comparison) -> ComparisonReport:
    def of(change: str) -> list[Any]:
        return [c for c in comparison.cases if c.change == change]

    return ComparisonReport(
        run_a=comparison.run_a,
        run_b=comparison.run_b,
        tolerance=comparison.tolerance,
        pass_rate_a=comparison.pass_rate_a,
        pass_rate_b=comparison.pass_rate_b,
        regressions=of("regressed"),
        improvements=of("improved"),
        added=of("added"),
        removed=of("removed"),
        unchanged=len(of("unchanged")),
        evaluator_deltas=comparison.evaluator_deltas,
        latency_p50_delta_s=comparison.latency_p50_delta_s,
        cost_delta=comparison.cost_delta,
    )


# --------------------------------------------------------------------------- per case


def _case(index: int, result: CaseResult) -> CaseReport:
    both = sides(result)
    return CaseReport(
        index=index,
        case_id=result.case_id,
        repetition=result.repetition,
        status=result.status,
        tags=list(result.tags),
        scores=[_line(row) for row in result.scores],
        latency_s=result.latency_s,
        tokens=result.tokens,
        cost=result.cost,
        attempts=result.attempts,
        thread_id=result.thread_id,
        error=result.error,
        diff=diff_turns(*both) if both else [],
        turns=[_played(turn) for turn in result.turns],
    )


def _line(row: ScoreRow) -> ScoreLine:
    meta = row.metadata or {}
    return ScoreLine(
        key=row.key,
        evaluator=row.evaluator,
        score=row.score,
        passed=row.passed,
        comment=row.comment,
        error=row.error,
        # lg_eval's judges record the model and its usage on every feedback they return.
        judge="model" in meta and "usage" in meta,
    )


def _played(turn: PlayedTurnRecord) -> PlayedTurn:
    return PlayedTurn(
        index=turn.index,
        kind=turn.kind,
        sent=None if turn.sent is None else value_text(turn.sent),
        asked=[
            AskedInterrupt(
                id=None if ask.get("id") is None else str(ask["id"]),
                path=None if ask.get("path") is None else value_text(ask["path"]),
                value=value_text(ask.get("value")),
            )
            for ask in turn.asked
        ],
        error=turn.error,
    )


__all__ = ["build_report", "counts", "histogram", "rate"]
