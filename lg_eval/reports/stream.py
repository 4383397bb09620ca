"""``stream_report``: the report of a stored run of any size, in bounded memory.

:func:`~lg_eval.reports.build.build_report` needs the whole run in memory and lists
every result; for a 100,000-thread sweep that is neither possible on a small driver
nor readable. :func:`stream_report` reads the run from the results store a page at a
time (:meth:`~lg_eval.experiments.ResultStore.iter_results`) through the same
:class:`~lg_eval.reports.tally.RunTally` as ``build_report``, takes the percentiles,
pass@k and the latency range from SQL, and keeps only the ``worst`` results (a bounded
heap). The numbers equal ``build_report``'s; ``cases`` holds the worst results and
``cases_total`` says how many there are, which every renderer can lay out as usual.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator

from lg_eval.arguments import checked_count, checked_instance
from lg_eval.experiments import CaseResult, ResultStore, StoreError
from lg_eval.reports.build import case_report
from lg_eval.reports.model import Report, TrendPoint
from lg_eval.reports.tally import (
    Binner,
    RunTally,
    histogram_bounds,
    numeric_score,
    rate,
)

SEVERITY = {"error": 0, "timeout": 1, "failed": 2, "passed": 3}
"""Worst first: a result that raised, then one that timed out, then a failed one."""


def worst_key(index: int, result: CaseResult) -> tuple[int, float, int]:
    """How bad a result is, smallest worst: status, then the mean of its scores (booleans
    count 1 and 0; none: last), then its position in the run."""
    values = [float(r.score) for r in result.scores if r.score is not None and r.error is None]
    mean = sum(values) / len(values) if values else float("inf")
    return SEVERITY.get(result.status, 0), mean, index


def stream_report(
    store: ResultStore, run_id: str, *, worst: int = 20, history: int = 10, batch: int = 500
) -> Report:
    """The report of ``run_id`` read from ``store`` page by page: every aggregate and both
    distributions exactly as :func:`~lg_eval.reports.build.build_report` computes them,
    the ``worst`` worst results as ``cases`` (worst first), and the trend over the
    ``history`` latest runs of the same dataset (counted in SQL).

    Raises:
        StoreError: no run ``run_id`` is stored.
        InvalidOptionError: ``store`` is no :class:`ResultStore`, ``run_id`` no text,
            ``worst`` or ``history`` negative, ``batch`` below 1.
    """
    checked_instance(store, ResultStore, "store", "a ResultStore (open_store)")
    checked_instance(run_id, str, "run_id", "the run id as text")
    checked_count(worst, "worst", 0)
    checked_count(history, "history", 0)
    checked_count(batch, "batch", 1)
    info = store.run_info(run_id)
    if info is None:
        raise StoreError(f"No run {run_id!r} in {store.url}.")
    tally = RunTally()
    latency = Binner(*histogram_bounds(None, store.latency_max(run_id), in_unit=False,
                                       from_zero=True))  # fmt: skip

    def counted() -> Iterator[tuple[int, CaseResult]]:
        for index, result in enumerate(store.iter_results(run_id, batch=batch)):
            tally.add(result)
            latency.add(result.latency_s)
            yield index, result

    kept = heapq.nsmallest(worst, counted(), key=lambda pair: worst_key(*pair))
    if worst == 0:  # nsmallest(0, ...) does not consume its input
        for _ in counted():
            pass
    lo, hi = tally.score_bounds()
    scores = tally.unit_bins if (lo, hi) == (0.0, 1.0) else _score_bins(store, run_id, lo, hi)
    summary = tally.summary(store.case_counts(run_id), store.latencies(run_id))
    return Report(
        info=info,
        summary=summary,
        evaluators=tally.evaluator_summaries(),
        tags=tally.tag_summaries(),
        cases=[case_report(i, result) for i, (_, result) in enumerate(kept)],
        score_histogram=scores.histogram("numeric scores"),
        latency_histogram=latency.histogram("latency (s)"),
        trend=stored_trend(store, info.dataset, run_id, history) if history else [],
        cases_total=tally.results,
    )


def _score_bins(store: ResultStore, run_id: str, lo: float, hi: float) -> Binner:
    """A second pass, only for scores outside [0, 1] (their range is known after the first)."""
    bins = Binner(lo, hi)
    for result in store.iter_results(run_id):
        for row in result.scores:
            value = numeric_score(row)
            if value is not None:
                bins.add(value)
    return bins


def stored_trend(store: ResultStore, dataset: str, run_id: str, n: int) -> list[TrendPoint]:
    """The ``n`` latest runs of ``dataset`` and ``run_id``, oldest first, each counted in SQL
    (as ``build_report``'s trend, without loading any run)."""
    rows = store.query(
        "SELECT run_id FROM lg_eval_runs WHERE dataset = ? ORDER BY started_at DESC, run_id"
        " DESC LIMIT ?",
        (dataset, n),
    )
    ids = dict.fromkeys([str(r) for (r,) in reversed(rows)] + [run_id])
    points = []
    for rid in ids:
        info = store.run_info(rid)
        if info is None:
            continue
        tally = store.status_counts(rid)
        total = sum(tally.values())
        points.append(
            TrendPoint(
                run_id=rid,
                started_at=info.started_at,
                pass_rate=rate(tally.get("passed", 0), total),
                results=total,
                current=rid == run_id,
                dataset_hash=info.dataset_hash,
            )
        )
    return sorted(points, key=lambda p: p.started_at)


__all__ = ["SEVERITY", "stored_trend", "stream_report", "worst_key"]
