"""What a sweep returns: its run's aggregates and worst threads, its results on demand.

A sweep may score 100,000 threads, so :class:`SweepResult` holds only what does not
grow with that number: the run's record, the report computed page by page from the
results store (:func:`~lg_eval.reports.stream_report`: counts, per-evaluator
aggregates, distributions, trend) and the worst threads with their checkpoint ids.
The results themselves are read from the store when asked for, a page at a time
(:meth:`SweepResult.results`, :meth:`SweepResult.threads`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from itertools import islice
from pathlib import Path

from lg_eval._feedback import ScoreValue
from lg_eval.experiments import (
    CaseResult,
    CaseStatus,
    ExperimentRun,
    ResultStore,
    RunInfo,
    open_store,
)
from lg_eval.reports import EvaluatorSummary, Report, StatusCounts
from lg_eval.sweeps._state import SweepState


@dataclass(frozen=True)
class WorstThread:
    """One of the sweep's worst threads, with what is needed to open it again."""

    thread_id: str
    checkpoint_id: str | None
    """The newest checkpoint the sweep scored (``extract_thread`` at it shows what was seen)."""
    status: CaseStatus
    scores: dict[str, ScoreValue]
    error: str | None = None


@dataclass(frozen=True)
class SweepResult:
    """A finished (or interrupted) sweep: bounded aggregates, lazily read results.

    ``report`` is the sweep's report with the ``worst`` threads as its cases
    (``report.cases_total`` the number scored); render it with any renderer.
    """

    info: RunInfo
    report: Report
    worst: list[WorstThread]
    store: ResultStore | str | Path | None = field(repr=False, compare=False)
    """Where the results are: the store object the sweep was given, or its URL (reopened
    for each read; left out of ``repr``, as a Postgres URL may carry a password)."""
    stored: bool = True
    """False when the sweep found no thread to score and stored no run."""
    matched: int | None = None
    """With nothing stored: how many threads passed the filters and the sample (0: none
    matched; more: none of them was new or changed)."""

    @property
    def scored(self) -> int:
        """Threads scored in this run (over every resumption)."""
        return self.report.summary.results

    @property
    def counts(self) -> StatusCounts:
        """Threads per status."""
        return self.report.summary.counts

    @property
    def evaluators(self) -> list[EvaluatorSummary]:
        """Per feedback key: verdicts and score statistics over every thread scored."""
        return self.report.evaluators

    def results(self, *, batch: int = 500) -> Iterator[CaseResult]:
        """Every result of the run in the order scored, read ``batch`` at a time."""
        with self._open() as store:
            yield from store.iter_results(self.info.run_id, batch=batch)

    def threads(self, *, batch: int = 500) -> Iterator[tuple[CaseResult, str | None]]:
        """``(result, checkpoint id scored)`` of every thread, read ``batch`` at a time."""
        with self._open() as store:
            state = SweepState(store)
            pages = store.iter_results(self.info.run_id, batch=batch)
            while page := list(islice(pages, batch)):
                marks = state.checkpoints_for(self.info.run_id, [r.case_id for r in page])
                for result in page:
                    yield result, marks.get(result.case_id)

    @cached_property
    def run(self) -> ExperimentRun:
        """The whole run, every result in memory (loaded on first use, then kept).

        For small sweeps and existing callers; a big sweep should use :meth:`results`,
        :meth:`threads` or :attr:`report`, which do not grow with the number of threads.
        """
        if not self.stored:
            return ExperimentRun(info=self.info, results=[])
        with self._open() as store:
            return store.load_run(self.info.run_id)

    @cached_property
    def checkpoints(self) -> dict[str, str]:
        """``thread_id -> checkpoint_id`` of every thread scored (loaded on first use: one
        entry per thread; :meth:`threads` streams the same pairs)."""
        with self._open() as store:
            return SweepState(store).checkpoints_of(self.info.run_id)

    @property
    def thread_ids(self) -> list[str]:
        """The ids of every thread scored, in the order scored (one string per thread)."""
        with self._open() as store:
            rows = store.query(
                "SELECT case_id FROM lg_eval_cases WHERE run_id = ? ORDER BY ordinal, repetition",
                (self.info.run_id,),
            )
        return [str(case_id) for (case_id,) in rows]

    @contextmanager
    def _open(self) -> Iterator[ResultStore]:
        if isinstance(self.store, ResultStore):
            yield self.store
            return
        with open_store(self.store) as store:
            yield store


def worst_threads(report: Report, checkpoints: dict[str, str]) -> list[WorstThread]:
    """The report's (worst) cases as threads, each with its checkpoint id from ``checkpoints``."""
    return [
        WorstThread(
            thread_id=case.result.thread_id or case.result.case_id,
            checkpoint_id=checkpoints.get(case.result.case_id),
            status=case.result.status,
            scores=case.score_map,
            error=case.result.error,
        )
        for case in report.cases
    ]
