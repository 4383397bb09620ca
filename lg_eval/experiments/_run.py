"""Run a graph over a dataset: every case × repetition played, scored and stored as it finishes.

The two entry points take the run's options as ``**options`` (:class:`RunOptions`,
validated where they are called) and differ in one thing only, how a case's effect core is
driven: :func:`arun_experiment` awaits it (``ainvoke`` on an async checkpointer),
:func:`run_experiment` drives it with blocking calls on a daemon OS thread per case in
flight (``invoke`` on a sync checkpointer) under ``asyncio.run``. One orchestrator
(:func:`_orchestrate`) holds every decision of a local run: it opens the store and the
checkpointer, begins the run (:class:`~lg_eval.experiments._lifecycle.RunLifecycle`: what
is left, the count, the record), enters the judge services and plays the cases with
:func:`~lg_eval.experiments._case.play_cases`, each stored by the :class:`BatchWriter`
while its worker plays the next. A case that runs past ``timeout`` is cancelled (async) or
abandoned (sync: its thread's late result is dropped); either way only the ``timeout``
result is ever stored. With another executor the run is
:func:`~lg_eval.experiments._distributed.run_distributed`'s.

**The writer**: finished cases go to the store in group commits, off the runner's path.

The runner hands each finished case to :meth:`BatchWriter.put`, which returns a future,
and goes on with its next case; it waits only when :data:`~lg_eval.experiments._case.AHEAD`
of its cases are handed over and not yet stored. One thread commits them, at once when the
last commit was ``linger`` (50 ms) ago or more; else it waits for those 50 ms to pass for
more cases to share the commit, unless ``group`` (16) are queued, the writer is closing or
a worker waits; then it settles each case's future. A commit costs about as much for 16
small cases as for one (each writes every page it changes to the log whole): quick cases
share commits, and a case that comes alone is stored at once.

The guarantee this gives a killed run (``kill -9``, a crashed machine): a case counts as in
flight until its future is settled, that is until its rows are committed; a worker holds
at most ``AHEAD + 1`` cases not yet stored (the one it plays and those handed over), and a
finished case is stored within ``linger`` unless the store is slower than the cases. A
resumed run therefore re-runs only the cases that were in flight (a finished one is read
back and scored again, its graph not run again), and never finds one half-stored (each
write is one transaction). :meth:`close` writes what is still queued and re-raises a write
error, if there was one; a failed write also fails the futures of its cases.
"""

from __future__ import annotations

import asyncio
import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from contextlib import AsyncExitStack, closing, nullcontext
from pathlib import Path
from typing import Any, Unpack

from langgraph.checkpoint.base import BaseCheckpointSaver

from lg_eval._arguments import validated
from lg_eval._daemons import DaemonPool
from lg_eval._effects import adrive, drive
from lg_eval._heap import frozen_heap
from lg_eval._offline import offline
from lg_eval.datasets import Dataset, load_dataset
from lg_eval.experiments._case import CaseContext, CasePlan, CaseTargets, plan_for, play_cases
from lg_eval.experiments._judges import judge_cache_of, judge_services, services_record
from lg_eval.experiments._lifecycle import RunLifecycle, new_run_id, run_info
from lg_eval.experiments._options import (
    DatasetLike,
    ExecutorOptions,
    RunOptions,
    check_evaluators,
)
from lg_eval.experiments._results import CaseResult, CaseStatus, ExperimentRun
from lg_eval.experiments._score import EvaluatorResolver
from lg_eval.experiments._store import ResultStore, open_store
from lg_eval.play import aopen_checkpointer, open_checkpointer


@validated
def run_experiment(
    target: Any, dataset: DatasetLike, **options: Unpack[ExecutorOptions]
) -> ExperimentRun:
    """Play every case of ``dataset`` on ``target``, score it, store it; return the run.

    ``target``: a compiled graph, a ``StateGraph`` builder, a factory
    ``f(checkpointer=saver)``, ``"module:attr"``, or a deployed assistant
    (:func:`~lg_eval.server.server_target`); None uses the dataset's ``graph``.
    ``dataset``: a :class:`~lg_eval.datasets.Dataset` or the path of a dataset file.
    ``options``: :class:`~lg_eval.experiments.RunOptions` (each option's contract and
    default are written there) and ``executor``, ``ray_address``, ``partition_size``
    (:class:`~lg_eval.experiments.ExecutorOptions`).

    Raises:
        InvalidOptionError: a bad option, no target, or an evaluator that cannot be built.
        StoreError: the store cannot be opened, or ``run_id`` belongs to another dataset.
        RunInUseError: another live run holds ``run_id``.
    """
    if options["executor"] not in (None, "local"):
        from lg_eval.experiments._distributed import run_distributed

        return run_distributed(target, dataset, options)
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_blocking(target, dataset, options)).run
    # Called from inside an event loop (a notebook): run on a loop of our own.
    box: list[ExperimentRun | BaseException] = []

    def main() -> None:
        try:
            box.append(asyncio.run(_blocking(target, dataset, options)).run)
        except BaseException as exc:
            box.append(exc)

    worker = threading.Thread(target=main, name="lg_eval-experiment")
    worker.start()
    worker.join()
    if isinstance(box[0], BaseException):
        raise box[0]
    return box[0]


@validated
async def arun_experiment(
    target: Any, dataset: DatasetLike, **options: Unpack[RunOptions]
) -> ExperimentRun:
    """:func:`run_experiment`, awaited: the graph is run with ``ainvoke`` on an async
    checkpointer (a saver you pass must be async-capable), evaluators with ``aevaluate``."""
    with nullcontext() if options["langsmith"] else offline():
        return await _orchestrate(target, dataset, options, blocking=False)


class _Outcome:
    """The run, wrapped so the main task's result has a short ``repr``: at exit
    ``asyncio.run`` (Python 3.11) formats the task, result included, into an error
    message it discards; a run's repr costs about 0.07 ms per result."""

    __slots__ = ("run",)

    def __init__(self, run: ExperimentRun) -> None:
        self.run = run


async def _blocking(target: Any, dataset: Dataset | str | Path, options: RunOptions) -> _Outcome:
    with nullcontext() if options["langsmith"] else offline():
        return _Outcome(await _orchestrate(target, dataset, options, blocking=True))


async def _orchestrate(
    target: Any, dataset: Dataset | str | Path, options: RunOptions, *, blocking: bool
) -> ExperimentRun:
    if not isinstance(dataset, Dataset):
        dataset = load_dataset(dataset)
    run_id = options["run_id"] or new_run_id(dataset.name)
    # A typo in a target or an evaluator fails here, before a file is opened or a run stored.
    resolver = EvaluatorResolver(dataset)
    check_evaluators(dataset, resolver)
    CaseTargets(target, dataset, None)
    async with AsyncExitStack() as stack:
        store = options["store"]
        if not isinstance(store, ResultStore):
            store = stack.enter_context(closing(open_store(store)))
        saver = options["checkpointer"]
        if not isinstance(saver, BaseCheckpointSaver):
            if blocking:
                saver = stack.enter_context(open_checkpointer(saver))
            else:
                saver = await stack.enter_async_context(aopen_checkpointer(saver))
        targets = CaseTargets(target, dataset, saver)
        if blocking:  # this loop is the run's own: nothing else waits on it yet
            drive(targets.ready())
        else:
            await adrive(targets.ready())
        judges = stack.enter_context(
            judge_services(None, options["judge_limits"], judge_cache_of(options["judge_cache"]))
        )
        info = run_info(options, dataset, run_id, targets.describe(), store)
        run = RunLifecycle.begin(store, info, options["progress"])
        stack.callback(run.release)  # if setup fails before the run is recorded
        left = run.left(dataset, options["repetitions"])
        plans = (  # made as the workers take them: nothing per case is held ahead
            plan_for(resolver, ordinal, dataset.cases[ordinal], repetition)
            for ordinal, repetition in left
        )
        context = CaseContext.of_run(options, run_id, targets, resume_threads=run.resumed)
        pool = DaemonPool(asyncio.get_running_loop()) if blocking else None
        if pool is not None:
            stack.callback(pool.close)
        stack.enter_context(frozen_heap())  # the setup above is alive for the whole run
        # a case is in flight until its rows are committed, so a kill loses only those
        writer = BatchWriter(store, stored=run.counter.add)

        def stored(plan: CasePlan, result: CaseResult) -> Future[None]:
            return writer.put(plan.ordinal, result)

        def learned() -> dict[str, Any]:
            return {} if judges is None else services_record(judges.stats())

        with run.recording(learned):
            try:
                with nullcontext() if judges is None else judges.active():
                    await play_cases(
                        plans,
                        context,
                        options,
                        pool=pool,
                        finished=stored,
                        hurry=writer.hurry,
                        count=len(left),
                    )
            finally:
                writer.close()
        return run.result(owned=not isinstance(options["store"], ResultStore))


# --------------------------------------------------------------------------- the writer


_Item = tuple[list[tuple[int, CaseResult]], "Future[None]"]
_HURRY: Any = object()
"""Queued by :meth:`BatchWriter.hurry`: commit what is gathered now."""


class BatchWriter:
    """Writes ``(ordinal, result)`` pairs to ``store`` from one thread, in group commits
    (at most one per ``linger`` seconds, unless ``group`` cases are queued);
    ``stored(status)`` is told of each case once it is committed, before its future is
    settled (a run's count and progress)."""

    def __init__(
        self,
        store: ResultStore,
        *,
        group: int = 16,
        linger: float = 0.05,
        stored: Callable[[CaseStatus], None] | None = None,
    ) -> None:
        self._store = store
        self._group = group
        self._linger = linger
        self._last = -linger  # when the last commit began (none yet)
        self._stored = stored
        self._queue: queue.SimpleQueue[_Item | None] = queue.SimpleQueue()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._loop, name="lg_eval-store", daemon=True)
        self._thread.start()

    def put(self, ordinal: int, result: CaseResult) -> Future[None]:
        """Queue ``result`` for the next commit; the future is settled once it is stored.

        Raises:
            BaseException: an earlier write failed (the store's own error).
        """
        return self.put_many([(ordinal, result)])

    def put_many(self, results: list[tuple[int, CaseResult]]) -> Future[None]:
        """Queue ``(ordinal, result)`` pairs for the same commit; one future for them all.

        Raises:
            BaseException: an earlier write failed (the store's own error).
        """
        if self._error is not None:
            raise self._error
        done: Future[None] = Future()
        self._queue.put((results, done))
        return done

    def hurry(self) -> None:
        """Commit what is queued without waiting out ``linger`` (a worker is about to wait
        for one of its cases)."""
        self._queue.put(_HURRY)

    def close(self) -> None:
        """Write every queued case, stop the thread, raise its write error if any."""
        self._queue.put(None)
        self._thread.join()
        if self._error is not None:
            raise self._error

    def _loop(self) -> None:
        stopping = False
        while not stopping:
            items = self._gathered()
            stopping = None in items
            pending = [item for item in items if item is not None]
            if pending:
                self._commit(pending)

    def _gathered(self) -> list[_Item | None]:
        """What the next commit takes: the first item queued and what is queued with it;
        when the last commit was less than ``linger`` ago (cases come quickly), also what
        comes until then, unless ``group`` cases or the closing ``None`` come first."""
        items: list[_Item | None] = []
        while not items:  # block for the first (a hurry with nothing queued has no effect)
            first = self._queue.get()
            items = [] if first is _HURRY else [first]
        deadline = self._last + self._linger  # past (then no wait) unless cases come quickly
        cases = 0 if items[0] is None else len(items[0][0])
        while items[-1] is not None and cases < self._group:
            try:
                item = self._queue.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                break
            if item is _HURRY:
                break
            items.append(item)
            cases += 0 if item is None else len(item[0])
        self._last = time.monotonic()
        return items

    def _commit(self, pending: list[_Item]) -> None:
        # Every queued case is written, even one whose waiter was cancelled (Ctrl-C): its
        # future is just not settled. The rest are marked running, so they can no longer
        # be cancelled between the commit and being settled.
        futures = [done for _, done in pending if done.set_running_or_notify_cancel()]
        error = self._error
        if error is None:
            written = [each for results, _ in pending for each in results]
            try:
                self._store.write(written)
            except BaseException as exc:  # surfaced by the futures, put() and close()
                error = self._error = exc
            else:
                if self._stored is not None:
                    for _, result in written:
                        self._stored(result.status)
        for done in futures:
            if error is None:
                done.set_result(None)
            else:
                done.set_exception(error)
