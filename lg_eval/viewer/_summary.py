"""A run's aggregates for the run page, and the comparison counts of two runs, computed
once per finished run.

The run page's header (status counts, the per-evaluator table with its intervals, the
latency/token/cost bins) and a comparison's counts per change read every row of the
runs: for 100,000 cases that is most of a page's time, while a page of cases is a few
milliseconds. A run whose status is ``finished`` no longer changes, so its aggregates are
kept in memory (:class:`AggregateCache`: the last :data:`KEPT` of them) and the next page
of that run — another page, a filter, a search — reads only its page of cases. A run
still running (or interrupted, which a resume continues) is never cached: every page
reads its aggregates afresh. An entry is keyed by the run's status and ``finished_at``
as well, so a run resumed and finished again is counted again.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar, cast

from lg_eval.experiments import ResultStore, RunInfo
from lg_eval.reports import EvaluatorSummary, Histogram, StatusCounts
from lg_eval.reports._keys import evaluator_table
from lg_eval.reports._stored import column_histograms, status_counts
from lg_eval.viewer._compare import change_counts

KEPT = 64
"""How many runs' (and comparisons') aggregates a viewer keeps."""

T = TypeVar("T")


@dataclass(frozen=True)
class RunSummary:
    """What the run page shows of the whole run: counts, evaluators and the charts' bins."""

    counts: StatusCounts
    evaluators: list[EvaluatorSummary]
    histograms: dict[str, Histogram]


def run_summary(store: ResultStore, run_id: str) -> RunSummary:
    """The run's aggregates, each counted in SQL by the report's queries (the SQL path of
    :func:`~lg_eval.reports.stream_report`)."""
    return RunSummary(
        counts=status_counts(store, run_id),
        evaluators=evaluator_table(store, run_id),
        histograms=column_histograms(store, run_id),
    )


class AggregateCache:
    """Aggregates of finished runs, least recently used dropped beyond :data:`KEPT`;
    safe to share between the server's threads."""

    def __init__(self, store: ResultStore, kept: int = KEPT) -> None:
        self.store, self.kept = store, kept
        self._entries: OrderedDict[tuple[object, ...], object] = OrderedDict()
        self._lock = threading.Lock()

    def summary(self, info: RunInfo, *, store: ResultStore | None = None) -> RunSummary:
        """``info``'s run aggregates (cached when the run is finished), read through
        ``store`` when one is given (a connection of the calling thread's own)."""
        key = ("run", *_version(info))
        reading = store or self.store
        return self._get(key, [info], lambda: run_summary(reading, info.run_id))

    def changes(
        self,
        a: RunInfo,
        b: RunInfo,
        *,
        tolerance: float = 0.0,
        store: ResultStore | None = None,
    ) -> dict[str, int]:
        """Cases of run ``b`` against run ``a`` per change (cached when both are finished)."""
        key = ("compare", *_version(a), *_version(b), tolerance)
        reading = store or self.store
        return self._get(
            key, [a, b], lambda: change_counts(reading, a.run_id, b.run_id, tolerance=tolerance)
        )

    def _get(self, key: tuple[object, ...], runs: list[RunInfo], compute: Callable[[], T]) -> T:
        if any(run.status != "finished" for run in runs):
            return compute()
        with self._lock:
            if key in self._entries:
                self._entries.move_to_end(key)
                return cast(T, self._entries[key])
        value = compute()  # outside the lock: another run's page is not held up
        with self._lock:
            self._entries[key] = value
            while len(self._entries) > self.kept:
                self._entries.popitem(last=False)
        return value


def _version(info: RunInfo) -> tuple[object, ...]:
    return (info.run_id, info.status, info.finished_at)
