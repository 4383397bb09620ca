"""How a run's cases get done: workers taking plans from one shared iterator.

A *worker* takes case plans from the run's shared iterator until it is exhausted
(:func:`run_all` starts ``concurrency`` of them). :func:`one_at_a_time` makes a worker of
an *execute* step (:func:`inline`: play and score a case here, then hand its result to a
*sink* such as :func:`stored`); :func:`handed` is the worker of a run with a scoring
process. A case's effect core is driven with blocking calls on a case thread, or awaited
on the loop (:func:`driven`).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from typing import Any, TypeVar

from lg_eval._effects import Core, adrive, drive
from lg_eval.experiments._case import CaseContext, CasePlan, run_case, timed_out
from lg_eval.experiments._scoring_process import ScoringProcess, serving
from lg_eval.experiments._writer import BatchWriter
from lg_eval.experiments.case_threads import CaseThreads
from lg_eval.experiments.lifecycle import Tally
from lg_eval.experiments.results import CaseResult

Execute = Callable[[CasePlan], Awaitable[None]]
"""Runs one case to the end: played, scored, stored, counted."""
Sink = Callable[[CasePlan, CaseResult], Awaitable[None]]
"""Takes a finished case's result (stores it, or collects it for the driver)."""


def inline(
    context: CaseContext, timeout: float | None, threads: CaseThreads | None, sink: Sink
) -> Execute:
    """Each case played and scored in this process (on a case thread when ``threads`` is
    given, else awaited on the loop), cancelled after ``timeout``, then given to ``sink``."""

    async def execute(plan: CasePlan) -> None:
        running = driven(run_case(context, plan), threads)
        if timeout is None:
            result = await running
        else:
            try:
                result = await asyncio.wait_for(running, timeout)
            except TimeoutError:
                result = timed_out(context, plan, timeout)
        await sink(plan, result)

    return execute


def stored(writer: BatchWriter, tally: Tally) -> Sink:
    """A sink that keeps a case in flight until its rows are committed, so a kill loses
    only the cases in flight (see :class:`BatchWriter`), then counts it."""

    async def sink(plan: CasePlan, result: CaseResult) -> None:
        await asyncio.wrap_future(writer.put(plan.ordinal, result))
        tally.add(result.status)

    return sink


def handed(
    context: CaseContext, scorer: ScoringProcess, threads: CaseThreads | None, tally: Tally
) -> Worker:
    """A worker that plays its cases here and has the scoring process score and store them
    (:func:`serving`, on a lane of its own): on one case thread for the whole run, or awaited
    on the loop."""

    async def worker(source: Iterator[CasePlan]) -> None:
        await driven(serving(context, source, scorer.lane(), tally.add), threads)

    return worker


R = TypeVar("R")


def driven(core: Core[R], threads: CaseThreads | None) -> Awaitable[R]:
    """``core`` driven with blocking calls on a case thread, or awaited on the loop."""
    if threads is None:
        return adrive(core)
    return threads.submit(lambda: drive(core))


Worker = Callable[[Iterator[CasePlan]], Coroutine[Any, Any, None]]
"""Runs the plans it takes from the run's shared iterator, until it is exhausted."""


def one_at_a_time(execute: Execute) -> Worker:
    """A worker that takes its next plan once ``execute`` finished the last one (stored)."""

    async def worker(source: Iterator[CasePlan]) -> None:
        for plan in source:
            await execute(plan)

    return worker


async def run_all(plans: list[CasePlan], worker: Worker, concurrency: int) -> None:
    """Run ``plans`` on ``concurrency`` workers sharing one iterator of them."""
    source = _Plans(plans)
    try:
        async with asyncio.TaskGroup() as group:
            for _ in range(min(concurrency, len(plans))):
                group.create_task(worker(source))
    except BaseExceptionGroup as failed:  # the first worker's error stopped them all
        raise failed.exceptions[0] from None
    finally:
        source.stop()  # a worker on a case thread takes no new case once the run stops


class _Plans(Iterator[CasePlan]):
    """The run's plans, shared by its workers (on the loop or on case threads) until they
    are taken or :meth:`stop` is called."""

    def __init__(self, plans: list[CasePlan]) -> None:
        self._plans = iter(plans)
        self._lock = threading.Lock()
        self._stopped = False

    def __next__(self) -> CasePlan:
        with self._lock:
            if self._stopped:
                raise StopIteration
            return next(self._plans)

    def stop(self) -> None:
        with self._lock:
            self._stopped = True


__all__ = [
    "Execute",
    "Sink",
    "Worker",
    "driven",
    "handed",
    "inline",
    "one_at_a_time",
    "run_all",
    "stored",
]
