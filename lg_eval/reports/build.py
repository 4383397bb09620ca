"""``build_report``: a run (and optionally its history and a comparison) → one :class:`Report`.

Every aggregate of every rendering is computed here and only here: status counts, pass
rates (overall, pass@k, pass^k, per feedback key, per tag), score statistics, latency
percentiles, tokens and cost, chart bins, the trend across stored runs and the grouped
comparison. The summary is :meth:`~lg_eval.reports.tally.RunTally.summary` over the
results in memory, the same one :func:`~lg_eval.reports.stream.stream_report` feeds from
SQL.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from lg_eval.arguments import checked_instance, checked_sequence
from lg_eval.errors import InvalidOptionError
from lg_eval.experiments import (
    CaseResult,
    Comparison,
    ExperimentRun,
    PlayedTurnRecord,
    ScoreRow,
    by_case,
    case_counts,
)
from lg_eval.experiments import latencies as latency_order
from lg_eval.reports._text import value_text
from lg_eval.reports.diff import diff_turns, sides
from lg_eval.reports.model import (
    AskedInterrupt,
    CaseReport,
    ComparisonReport,
    Histogram,
    PlayedTurn,
    Report,
    ScoreLine,
    StatusCounts,
    TrendPoint,
)
from lg_eval.reports.tally import (
    BINS,
    Binner,
    RunTally,
    histogram_bounds,
    numeric_score,
    rate,
)


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

    Raises:
        InvalidOptionError: ``run`` or an item of ``history`` is no
            :class:`~lg_eval.experiments.ExperimentRun`, or ``comparison`` no
            :class:`~lg_eval.experiments.Comparison`.
    """
    checked_instance(run, ExperimentRun, "run", "an ExperimentRun (ResultStore.load_run)")
    checked_sequence(history, "history", "a list of ExperimentRun")
    if not all(isinstance(item, ExperimentRun) for item in history):
        raise InvalidOptionError(f"history={history!r:.80}: use a list of ExperimentRun.")
    if comparison is not None:
        checked_instance(comparison, Comparison, "comparison", "a Comparison (compare_runs)")
    results = run.results
    tally = RunTally()
    for group in by_case(results).values():  # a case's repetitions together
        for result in group:
            tally.add(result)
    cases = [case_report(index, result) for index, result in enumerate(results)]
    numeric = [
        value for result in results for row in result.scores
        if (value := numeric_score(row)) is not None
    ]  # fmt: skip
    latencies = [result.latency_s for result in results]
    return Report(
        info=run.info,
        summary=tally.summary(case_counts(results), latency_order(results)),
        evaluators=tally.evaluator_summaries(),
        tags=tally.tag_summaries(),
        cases=cases,
        score_histogram=histogram("numeric scores", numeric, unit_interval=True),
        latency_histogram=histogram("latency (s)", latencies, from_zero=True),
        trend=_trend(run, history) if history else [],
        comparison=_comparison(comparison) if comparison else None,
    )


# --------------------------------------------------------------------------- aggregates


def counts(results: Iterable[CaseResult]) -> StatusCounts:
    """Results per status."""
    tally = RunTally()
    for result in results:
        tally.add(result)
    return tally.counts


def histogram(
    label: str, values: Sequence[float], *, unit_interval: bool = False, from_zero: bool = False
) -> Histogram:
    """Equal-width bins of ``values``.

    ``unit_interval``: bins over [0, 1] when every value lies there (scores);
    ``from_zero``: bins start at 0 (latencies). An empty or single-valued range is
    widened so every bin has a width.
    """
    lo, hi = histogram_bounds(
        min(values, default=None),
        max(values, default=None),
        in_unit=all(0.0 <= v <= 1.0 for v in values),
        unit_interval=unit_interval,
        from_zero=from_zero,
    )
    bins = Binner(lo, hi)
    for value in values:
        bins.add(value)
    return bins.histogram(label)


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
            dataset_hash=r.info.dataset_hash,
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
        alpha=comparison.alpha,
        tests=comparison.tests,
    )


# --------------------------------------------------------------------------- per case


def case_report(index: int, result: CaseResult) -> CaseReport:
    """One result as the report shows it (``index``: its position in the report)."""
    both = sides(result)
    trajectory = result.trajectory if result.trajectory is not None else (both[1] if both else None)
    return CaseReport(
        index=index,
        run_id=result.run_id,
        case_id=result.case_id,
        repetition=result.repetition,
        status=result.status,
        tags=list(result.tags),
        scores=[_line(row) for row in result.scores],
        latency_s=result.latency_s,
        tokens=result.tokens,
        cost=result.cost,
        model_calls=result.model_calls,
        attempts=result.attempts,
        thread_id=result.thread_id,
        error=result.error,
        finished_at=result.finished_at,
        trajectory=trajectory or None,
        trajectory_flat=None if not trajectory else [step for turn in trajectory for step in turn],
        reference=result.expected_trajectory if both is None else both[0],
        expected_tool_calls=result.expected_tool_calls,
        tool_calls=result.tool_calls,
        output=result.output,
        expected_output=result.expected_output,
        answers=list(result.answers or []),
        diff=diff_turns(*both) if both else [],
        turns=[_played(turn) for turn in result.turns],
        simulation=result.simulation,
    )


def _line(row: ScoreRow) -> ScoreLine:
    meta = row.metadata or {}
    return ScoreLine(
        key=row.key,
        evaluator=row.evaluator,
        score=row.score,
        passed=row.passed,
        comment=row.comment,
        metadata=row.metadata,
        error=row.error,
        # lg_eval's judges record the model and its usage on every feedback they return.
        judge="model" in meta and "usage" in meta,
    )


def _played(turn: PlayedTurnRecord) -> PlayedTurn:
    return PlayedTurn(
        index=turn.index,
        kind=turn.kind,
        sent=turn.sent,
        asked=[
            AskedInterrupt(
                id=None if ask.get("id") is None else str(ask["id"]),
                path=None if ask.get("path") is None else value_text(ask["path"]),
                value=ask.get("value"),
            )
            for ask in turn.asked
        ],
        error=turn.error,
        by=turn.by,
        reply=turn.reply,
    )


__all__ = ["BINS", "build_report", "case_report", "counts", "histogram", "rate"]
