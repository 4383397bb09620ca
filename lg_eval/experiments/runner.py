"""Run a graph over a dataset: every case × repetition played, scored and stored as it finishes.

One orchestrator (:func:`_experiment`, a coroutine) holds every decision: what
is left to run (a resumed run skips what the store has), the concurrency bound,
timeouts, progress, the judge cache, the run record. The two entry points
differ in one thing only, how a case's effect core is driven:
:func:`arun_experiment` awaits it (``ainvoke`` on an async checkpointer),
:func:`run_experiment` drives it with blocking calls in a thread per case
(``invoke`` on a sync checkpointer) under ``asyncio.run``; with the scoring process, each
worker's cases run on one thread of their own. A case that runs past
``timeout`` is cancelled (async) or abandoned (sync: its thread's late result is
dropped); either way only the ``timeout`` result is ever stored.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import importlib.metadata
import platform
import queue
import secrets
import subprocess
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine, Iterator, Mapping
from contextlib import AsyncExitStack, ExitStack, closing, nullcontext
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast

from langgraph.checkpoint.base import BaseCheckpointSaver

from lg_eval._effects import Core, adrive, drive
from lg_eval._heap import frozen_heap
from lg_eval.errors import InvalidOptionError
from lg_eval.experiments._case import CaseContext, CasePlan, plan_for, run_case, timed_out
from lg_eval.experiments._scoring_choice import Scoring, scoring_spec
from lg_eval.experiments._scoring_process import ScoringProcess, serving
from lg_eval.experiments._targets import CaseTargets
from lg_eval.experiments._upstream import (
    DEFAULT_CHECKPOINTER,
    Dataset,
    aopen_checkpointer,
    dataset_hash,
    load_dataset,
    open_checkpointer,
    redact_url,
)
from lg_eval.experiments._writer import BatchWriter
from lg_eval.experiments.judge_cache import DEFAULT_CACHE, JudgeCache
from lg_eval.experiments.redaction import RedactOption, make_redactor, scrub_secrets
from lg_eval.experiments.results import CaseResult, CaseStatus, ExperimentRun, RunInfo
from lg_eval.experiments.scoring import EvaluatorResolver
from lg_eval.experiments.store import ResultStore, open_store
from lg_eval.judges import RateLimiter, RateLimits
from lg_eval.langsmith import offline
from lg_eval.play import Reviewer

if TYPE_CHECKING:
    from lg_eval.executors import Executor

Progress = Callable[[int, int, int, int], None]
"""``progress(done, total, passed, failed)``, called as each case finishes (``failed``
counts every status but ``passed``; a resumed run starts from what the store holds)."""


@dataclass(frozen=True)
class _Options:
    target: Any
    dataset: Dataset | str | Path
    checkpointer: BaseCheckpointSaver[Any] | str | None
    store: ResultStore | str | Path | None
    run_id: str | None
    concurrency: int
    repetitions: int
    timeout: float | None
    retries: int
    thresholds: Mapping[str, float] | None
    fail_under: float | None
    judge_cache: bool | str | Path | JudgeCache
    progress: Progress | None
    redact: RedactOption
    langsmith: bool = False
    reviewer: Reviewer | None = None
    judge_limits: RateLimits | None = None
    scoring: Scoring = "auto"


def run_experiment(
    target: Any,
    dataset: Dataset | str | Path,
    *,
    checkpointer: BaseCheckpointSaver[Any] | str | None = None,
    store: ResultStore | str | Path | None = None,
    run_id: str | None = None,
    concurrency: int = 4,
    repetitions: int = 1,
    timeout: float | None = None,
    retries: int = 1,
    thresholds: Mapping[str, float] | None = None,
    fail_under: float | None = None,
    judge_cache: bool | str | Path | JudgeCache = True,
    progress: Progress | None = None,
    redact: RedactOption = None,
    langsmith: bool = False,
    reviewer: Reviewer | None = None,
    judge_limits: RateLimits | Mapping[str, Any] | None = None,
    executor: str | Executor | None = "local",
    ray_address: str | None = None,
    partition_size: int | None = None,
    scoring: Scoring = "auto",
) -> ExperimentRun:
    """Play every case of ``dataset`` on ``target``, score it, store it; return the run.

    Args:
        target: a compiled graph, a ``StateGraph`` builder, a factory
            ``f(checkpointer=saver)`` or ``"module:attr"``; None uses the dataset's ``graph``.
        dataset: a :class:`~lg_eval.datasets.Dataset` or the path of a dataset file.
        checkpointer: a sync saver, or a URL (``sqlite:///...``, ``postgresql://...``);
            default the embedded SQLite file ``.lg_eval/checkpoints.sqlite``.
        store: a :class:`ResultStore` or its URL; default ``.lg_eval/results.sqlite``.
        run_id: names the run; running again with the same id resumes it (cases already
            stored are not run again). Default: ``<dataset>-<UTC time>-<random>``.
        concurrency: cases played at once (with the scoring process, each worker also has
            at most one case being scored meanwhile).
        repetitions: runs of each case (see :mod:`lg_eval.experiments.aggregate`).
        timeout: seconds per case (all its attempts) before it is cancelled (``timeout``).
        retries: extra attempts after an infrastructure error (never after a low score).
        thresholds: ``{feedback key or evaluator name: minimum}`` for numeric scores
            (default 1.0); a bool score passes when True.
        fail_under: the pass rate below which :attr:`ExperimentRun.gate_failed` is True.
        judge_cache: cache judge answers (True: ``.lg_eval/judge_cache.sqlite``; a path;
            a :class:`JudgeCache`; False: call the models every time).
        progress: ``progress(done, total, passed, failed)`` after each case.
        redact: a ``str -> str`` function or regex patterns, applied to every string
            taken from a thread before it is stored.
        reviewer: answers turns written ``resume: {reviewer: true}``, e.g. a
            :class:`~lg_eval.play.SimulatedReviewer` (a chat model playing a persona).
        langsmith: let the graph's and the judges' runs be traced to LangSmith as the
            environment says; by default the run sends nothing (:func:`lg_eval.langsmith.offline`).
        judge_limits: the judge provider's limits (:class:`~lg_eval.judges.RateLimits` or
            its dict: requests and tokens per minute, calls in flight), held for the whole
            run, across every worker with ``executor="ray"``; cache hits spend none.
        executor: ``"local"`` (this process), ``"ray"`` or an Executor object: cases cut into
            partitions of ``partition_size`` played by workers, stored here
            (:mod:`lg_eval.experiments.distributed`; target and checkpointer as names).
        ray_address: with ``executor="ray"``, the cluster (default a local Ray).
        partition_size: with another executor, cases per task (default ``2 * concurrency``).
        scoring: where cases are read back, scored and stored: ``"process"`` in a second
            process while this one plays the next cases, ``"inline"`` on the thread that
            played the case, ``"auto"`` (default) the process whenever it changes nothing
            but speed (named checkpointer and store, built-in evaluators, no ``timeout``,
            Linux, no other Python thread, 64 cases or more), else inline.

    Raises:
        InvalidOptionError: a bad option, no target, or an evaluator that cannot be built.
        StoreError: the store cannot be opened, or ``run_id`` belongs to another dataset.
    """
    options = _Options(
        target, dataset, checkpointer, store, run_id, concurrency, repetitions, timeout,
        retries, thresholds, fail_under, judge_cache, progress, redact, langsmith, reviewer,
        _limits(judge_limits), scoring,
    )  # fmt: skip
    if executor not in (None, "local"):
        from lg_eval.experiments.distributed import run_distributed

        return run_distributed(
            options, executor, ray_address=ray_address, partition_size=partition_size
        )
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_blocking(options)).run
    # Called from inside an event loop (a notebook): run on a loop of our own.
    box: list[ExperimentRun | BaseException] = []

    def main() -> None:
        try:
            box.append(asyncio.run(_blocking(options)).run)
        except BaseException as exc:
            box.append(exc)

    worker = threading.Thread(target=main, name="lg_eval-experiment")
    worker.start()
    worker.join()
    if isinstance(box[0], BaseException):
        raise box[0]
    return box[0]


async def arun_experiment(
    target: Any,
    dataset: Dataset | str | Path,
    *,
    checkpointer: BaseCheckpointSaver[Any] | str | None = None,
    store: ResultStore | str | Path | None = None,
    run_id: str | None = None,
    concurrency: int = 4,
    repetitions: int = 1,
    timeout: float | None = None,
    retries: int = 1,
    thresholds: Mapping[str, float] | None = None,
    fail_under: float | None = None,
    judge_cache: bool | str | Path | JudgeCache = True,
    progress: Progress | None = None,
    redact: RedactOption = None,
    langsmith: bool = False,
    reviewer: Reviewer | None = None,
    judge_limits: RateLimits | Mapping[str, Any] | None = None,
    scoring: Scoring = "auto",
) -> ExperimentRun:
    """:func:`run_experiment`, awaited: the graph is run with ``ainvoke`` on an async
    checkpointer (a saver you pass must be async-capable), evaluators with ``aevaluate``
    (the scoring process, when the run has one, reads and scores with blocking calls)."""
    options = _Options(
        target, dataset, checkpointer, store, run_id, concurrency, repetitions, timeout,
        retries, thresholds, fail_under, judge_cache, progress, redact, langsmith, reviewer,
        _limits(judge_limits), scoring,
    )  # fmt: skip
    return await _experiment(options, blocking=False)


# --------------------------------------------------------------------------- the orchestrator


class _Outcome:
    """The run, wrapped so the main task's result has a short ``repr``: at exit
    ``asyncio.run`` (Python 3.11) formats the task, result included, into an error
    message it discards; a run's repr costs about 0.07 ms per result."""

    __slots__ = ("run",)

    def __init__(self, run: ExperimentRun) -> None:
        self.run = run


async def _blocking(options: _Options) -> _Outcome:
    return _Outcome(await _experiment(options, blocking=True))


async def _experiment(options: _Options, *, blocking: bool) -> ExperimentRun:
    with nullcontext() if options.langsmith else offline():
        return await _orchestrate(options, blocking=blocking)


async def _orchestrate(options: _Options, *, blocking: bool) -> ExperimentRun:
    _check(options)
    dataset = options.dataset
    if not isinstance(dataset, Dataset):
        dataset = load_dataset(dataset)
    run_id = options.run_id or _new_run_id(dataset.name)
    redactor = make_redactor(options.redact)
    async with AsyncExitStack() as stack:
        spec = scoring_spec(
            options.scoring, run_id=run_id, target=options.target, dataset=dataset,
            checkpointer=options.checkpointer, store=options.store, timeout=options.timeout,
            repetitions=options.repetitions, thresholds=options.thresholds,
            retries=options.retries, redactor=redactor,
        )  # fmt: skip
        # Forked before this process opens a connection, so it shares none of them.
        scorer = None if spec is None else ScoringProcess(spec, options.concurrency)
        if scorer is not None:
            stack.callback(scorer.close)  # if setup fails; the run closes it before its record
        store = options.store
        if not isinstance(store, ResultStore):
            store = stack.enter_context(closing(open_store(store)))
        saver = options.checkpointer
        if not isinstance(saver, BaseCheckpointSaver):
            if blocking:
                saver = stack.enter_context(open_checkpointer(saver))
            else:
                saver = await stack.enter_async_context(aopen_checkpointer(saver))
        targets = CaseTargets(options.target, dataset, saver)
        cache = _judge_cache(options.judge_cache)
        if cache is not None and not isinstance(options.judge_cache, JudgeCache):
            stack.callback(cache.close)
        limiter = None if options.judge_limits is None else RateLimiter(options.judge_limits)
        resolver = EvaluatorResolver(dataset)
        scoring = "inline" if scorer is None else "process"
        info, resumed = store.begin_run(
            _run_info(options, dataset, run_id, targets.describe(), store, scoring)
        )
        stored = store.finished(run_id)
        plans = [
            plan_for(resolver, ordinal, case, repetition)
            for ordinal, case in enumerate(dataset.cases)
            for repetition in range(options.repetitions)
            if (case.id, repetition) not in stored
        ]
        context = CaseContext(
            run_id=run_id,
            targets=targets,
            saver=saver,
            thresholds=dict(options.thresholds or {}),
            retries=options.retries,
            redactor=redactor,
            reviewer=options.reviewer,
            fresh_threads=resumed,
        )
        tally = _Tally(info.cases, options.progress, list(stored.values()))
        threads = _CaseThreads(asyncio.get_running_loop()) if blocking else None
        if threads is not None:
            stack.callback(threads.close)
        stack.enter_context(frozen_heap())  # the setup above is alive for the whole run
        writer = None  # the scoring process, if any, stores its own results
        if scorer is None:
            writer = BatchWriter(store)
            worker = one_at_a_time(
                inline(context, options.timeout, threads, _stored(writer, tally))
            )
        else:
            worker = _handed(context, scorer, threads, tally)

        status: Any = "interrupted"
        try:
            with ExitStack() as judges:  # the limiter first: cache hits spend no budget
                if limiter is not None:
                    judges.enter_context(limiter.active())
                if cache is not None:
                    judges.enter_context(cache.active())
                await run_all(plans, worker, options.concurrency)
            status = "finished"
        finally:
            if writer is not None:
                writer.close()
            if scorer is not None:
                scorer.close()  # every result it was sent is committed when it exits
            config = dict(info.config)
            if cache is not None:
                config["judge_cache"] = {"enabled": True, **cache.stats.as_dict()}
            if limiter is not None:
                config["judge_limiter"] = limiter.stats().as_dict()
            done = info.model_copy(
                update={"status": status, "finished_at": datetime.now(UTC), "config": config}
            )
            store.update_run(done)
        return store.load_run(run_id)


Execute = Callable[[CasePlan], Awaitable[None]]
"""Runs one case to the end: played, scored, stored, counted."""
Sink = Callable[[CasePlan, CaseResult], Awaitable[None]]
"""Takes a finished case's result (stores it, or collects it for the driver)."""


def inline(
    context: CaseContext, timeout: float | None, threads: _CaseThreads | None, sink: Sink
) -> Execute:
    """Each case played and scored in this process (on a case thread when ``threads`` is
    given, else awaited on the loop), cancelled after ``timeout``, then given to ``sink``."""

    async def execute(plan: CasePlan) -> None:
        running = _driven(run_case(context, plan), threads)
        if timeout is None:
            result = await running
        else:
            try:
                result = await asyncio.wait_for(running, timeout)
            except TimeoutError:
                result = timed_out(context, plan, timeout)
        await sink(plan, result)

    return execute


def _stored(writer: BatchWriter, tally: _Tally) -> Sink:
    """A sink that keeps a case in flight until its rows are committed, so a kill loses
    only the cases in flight (see :class:`BatchWriter`), then counts it."""

    async def sink(plan: CasePlan, result: CaseResult) -> None:
        await asyncio.wrap_future(writer.put(plan.ordinal, result))
        tally.add(result.status)

    return sink


def _handed(
    context: CaseContext, scorer: ScoringProcess, threads: _CaseThreads | None, tally: _Tally
) -> Worker:
    """A worker that plays its cases here and has the scoring process score and store them
    (:func:`serving`, on a lane of its own): on one case thread for the whole run, or awaited
    on the loop."""

    async def worker(source: Iterator[CasePlan]) -> None:
        await _driven(serving(context, source, scorer.lane(), tally.add), threads)

    return worker


R = TypeVar("R")


def _driven(core: Core[R], threads: _CaseThreads | None) -> Awaitable[R]:
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


CLOSE_GRACE = 10.0
"""Seconds a finished run waits for case threads still running given-up cases."""


class _CaseThreads:
    """Daemon threads running blocking cases, one per worker (``concurrency``).

    :meth:`submit` returns a future settled on the event loop. A case abandoned after its
    timeout keeps its thread until it returns; that thread then exits (its late result is
    dropped) and a new thread takes its place, so a stuck case never holds a slot.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._jobs: queue.SimpleQueue[_Job[Any] | None] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._idle = 0
        self._threads: list[threading.Thread] = []

    def submit(self, work: Callable[[], R]) -> asyncio.Future[R]:
        future: asyncio.Future[R] = self._loop.create_future()
        with self._lock:
            start = self._idle == 0
            if not start:
                self._idle -= 1
        self._jobs.put(_Job(work, future, contextvars.copy_context()))
        if start:
            thread = threading.Thread(target=self._serve, name="lg_eval-case", daemon=True)
            with self._lock:
                self._threads.append(thread)
            thread.start()
        return future

    def close(self, grace: float = CLOSE_GRACE) -> None:
        """Stop the idle threads and wait for every thread to exit, so that none is left
        behind using the run's checkpointer once it is closed (a thread still running a case
        that was given up, after a timeout or when the run failed, is waited for up to
        ``grace`` seconds; one stuck for longer is left to exit when its case returns)."""
        with self._lock:
            idle, self._idle = self._idle, 0
            threads = list(self._threads)
        for _ in range(idle):
            self._jobs.put(None)
        deadline = time.monotonic() + grace
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))

    def _serve(self) -> None:
        while (job := self._jobs.get()) is not None:
            if job.future.cancelled():
                return  # given up before it started (the run was stopped)
            result, error = None, None
            try:
                result = job.context.run(job.work)
            except BaseException as exc:
                error = exc
            if job.future.cancelled():
                return  # abandoned after a timeout: a new thread took its place meanwhile
            with self._lock:  # idle before the loop hears of the result and submits more
                self._idle += 1
            with contextlib.suppress(RuntimeError):  # the loop is closed: the run is over
                self._loop.call_soon_threadsafe(_settle, job.future, result, error)


@dataclass(frozen=True)
class _Job(Generic[R]):
    work: Callable[[], R]
    future: asyncio.Future[R]
    context: contextvars.Context


def _settle(future: asyncio.Future[R], result: R | None, error: BaseException | None) -> None:
    if future.done():  # cancelled by a timeout: the late result is dropped
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(cast(R, result))


@dataclass
class _Tally:
    total: int
    progress: Progress | None
    stored: list[str] = field(default_factory=list)
    done: int = 0
    passed: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.done = len(self.stored)
        self.passed = sum(status == "passed" for status in self.stored)

    def add(self, status: CaseStatus) -> None:
        """Count a finished case (from the loop or a case thread) and report progress."""
        with self.lock:
            self.done += 1
            self.passed += status == "passed"
            if self.progress is not None:
                self.progress(self.done, self.total, self.passed, self.done - self.passed)


# --------------------------------------------------------------------------- helpers


def _check(options: _Options) -> None:
    def positive_int(name: str, value: Any, minimum: int) -> None:
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise InvalidOptionError(f"{name}={value!r}: use an integer >= {minimum}.")

    positive_int("concurrency", options.concurrency, 1)
    positive_int("repetitions", options.repetitions, 1)
    positive_int("retries", options.retries, 0)
    if options.timeout is not None and not options.timeout > 0:
        raise InvalidOptionError(f"timeout={options.timeout!r}: use seconds > 0, or None.")
    if options.fail_under is not None and not 0 <= options.fail_under <= 1:
        raise InvalidOptionError(f"fail_under={options.fail_under!r}: use a pass rate in [0, 1].")
    if options.progress is not None and not callable(options.progress):
        raise InvalidOptionError("progress= takes a function (done, total, passed, failed).")


def _limits(option: RateLimits | Mapping[str, Any] | None) -> RateLimits | None:
    """``judge_limits=`` checked (InvalidOptionError naming the field) before anything runs."""
    return None if option is None else RateLimits.of(option)


def _judge_cache(option: bool | str | Path | JudgeCache) -> JudgeCache | None:
    if isinstance(option, JudgeCache):
        return option
    if option is False:
        return None
    return JudgeCache(DEFAULT_CACHE if option is True else Path(option))


def _new_run_id(dataset: str) -> str:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    return f"{dataset}-{stamp}-{secrets.token_hex(3)}"


def _run_info(
    options: _Options,
    dataset: Dataset,
    run_id: str,
    target: str,
    store: ResultStore,
    scoring: str = "inline",
) -> RunInfo:
    saver = options.checkpointer
    if isinstance(saver, BaseCheckpointSaver):
        checkpointer = type(saver).__name__
    else:
        checkpointer = redact_url(saver or DEFAULT_CHECKPOINTER)
    redact = options.redact
    config: dict[str, Any] = {
        "concurrency": options.concurrency,
        "repetitions": options.repetitions,
        "timeout": options.timeout,
        "retries": options.retries,
        "thresholds": dict(options.thresholds or {}),
        "fail_under": options.fail_under,
        "judge_cache": {"enabled": options.judge_cache is not False},
        "judge_limits": None if options.judge_limits is None else options.judge_limits.model_dump(),
        "store": store.url,
        "scoring": scoring,
        "redact": None if redact is None else "function" if callable(redact) else "patterns",
    }
    info = RunInfo(
        run_id=run_id,
        dataset=dataset.name,
        dataset_hash=dataset_hash(dataset),
        target=target,
        checkpointer=checkpointer,
        config=config,
        git_commit=_git_commit(dataset.source),
        versions=_versions(),
        started_at=datetime.now(UTC),
        cases=len(dataset.cases) * options.repetitions,
    )
    return RunInfo.model_validate(scrub_secrets(info.model_dump(mode="json")))


def _git_commit(source: Path | None) -> str | None:
    where = source.parent if source is not None else Path.cwd()
    try:
        done = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=where, capture_output=True, text=True, timeout=5
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() or None if done.returncode == 0 else None


def _versions() -> dict[str, str]:
    found = {"python": platform.python_version()}
    for package in ("lg-eval", "langgraph", "langchain-core"):
        try:
            found[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            continue
    return found


__all__ = ["Progress", "arun_experiment", "run_experiment"]
