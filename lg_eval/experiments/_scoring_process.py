"""Scoring in a second process, so that lg_eval's work per case overlaps the graph's.

On a scripted or local model a case is CPU-bound Python, and Python runs one thread at a
time: whatever the runner does per case (read the thread back, assemble the trajectory,
run the evaluators, store the result) adds to the run's wall time however many threads
play. With the scoring process, case threads here only play: each attempt's play, as a
:class:`~lg_eval.experiments._case.PlayedAttempt` (plain data), goes to one scoring
process, which reads the thread from the same checkpointer (its own connection, by URL),
scores it with the same core (:func:`~lg_eval.experiments._case.score_attempt`), commits
the result to the results store (its own connection) and answers with the case's status.
The graph keeps one core busy here while the cases already played are scored on another.

Each worker of the run has a lane of its own to the process (a pipe) and runs
:func:`serving`: it plays a case, sends it down its lane, plays its next case while the
last one is scored, and reads the replies back on its own thread, in the order it sent
the jobs. A case is finished once the process has committed its result, so a killed run
re-runs at most two cases per worker. An infrastructure error while scoring comes back
as :class:`~lg_eval.experiments._case.InfrastructureError`, so the attempt is played
again exactly as inline.

The process is forked when the run starts, before the run opens its checkpointer and
store: it has the run's target, dataset, evaluators and redactor as they are here (no
pickling), shares no database connection with this process, and opens its own on the
first case (after this process set the tables up). :func:`fork_is_safe` says when
forking is safe enough to do unasked.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import gc
import multiprocessing
import os
import signal
import sys
import threading
import time
import warnings
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any, cast

from lg_eval._effects import Core, Effect, drive
from lg_eval.errors import ScoringProcessError
from lg_eval.experiments._case import (
    CaseContext,
    CasePlan,
    InfrastructureError,
    PlayedAttempt,
    failed_attempt,
    finish,
    plan_for,
    play_attempt,
    retryable,
    retrying,
    score_attempt,
)
from lg_eval.experiments._targets import CaseTargets
from lg_eval.experiments._upstream import Dataset, open_checkpointer
from lg_eval.experiments.judge_cache import CASE_STATS, CacheStats
from lg_eval.experiments.lease import fence
from lg_eval.experiments.redaction import Redactor
from lg_eval.experiments.results import CaseResult, CaseStatus
from lg_eval.experiments.scoring import EvaluatorResolver
from lg_eval.experiments.store import ResultStore, open_store
from lg_eval.feedback import describe_error


@dataclass(frozen=True)
class ScoringSpec:
    """What the scoring process needs of the run; inherited by the fork, never pickled."""

    run_id: str
    target: Any
    dataset: Dataset
    checkpointer: str | None
    """The run's checkpointer URL (None: the embedded default)."""
    store: str | Path | None
    """The run's results store URL or path (None: the default file)."""
    thresholds: dict[str, float]
    retries: int
    redactor: Redactor | None
    require_verdict: bool = False
    lease_token: str = ""
    """The token the run holds its lease under: the process fences its store with it, so
    it stores nothing once the run has lost the lease (:func:`.lease.fence`)."""


@dataclass(frozen=True)
class _Score:
    ordinal: int
    repetition: int
    played: PlayedAttempt
    elapsed: float
    """Seconds the case had run when it was handed over (its play, and earlier attempts)."""


@dataclass(frozen=True)
class _Store:
    ordinal: int
    result: CaseResult


@dataclass(frozen=True)
class _Retry:
    error: str


@dataclass(frozen=True)
class _Broken:
    error: str


_Job = _Score | _Store
_Reply = str | _Retry | _Broken


@dataclass(frozen=True)
class _Warned:
    """A warning raised while the scoring process handled a job, to be raised again here:
    what the run's caller sees (``pytest.warns``, ``catch_warnings``, its filters) is then
    the same as when the run scores inline."""

    message: str
    category: type[Warning]
    filename: str
    lineno: int

    @classmethod
    def of(cls, caught: warnings.WarningMessage) -> _Warned:
        category = caught.category
        if getattr(sys.modules.get(category.__module__), category.__qualname__, None) is not (
            category
        ):
            category = UserWarning  # a class the pipe cannot name (defined in a function)
        return cls(str(caught.message), category, caught.filename, caught.lineno)

    def reissue(self) -> None:
        """Warn here, under this process's filters (once per place and text, as Python's
        ``default`` action does for a module). A filter that turns it into an error raised
        it there already, where the case recorded it; it is not raised a second time."""
        with contextlib.suppress(Warning):
            warnings.warn_explicit(
                self.message, self.category, self.filename, self.lineno, registry=_REISSUED
            )


_REISSUED: dict[Any, Any] = {}
"""The warning registry of warnings raised again from the scoring process."""


def fork_is_safe() -> bool:
    """Whether this process can fork the scoring process unasked: on Linux, and from the
    process's only Python thread. A thread that holds a lock at the moment of a fork (in
    SQLite, say) leaves it held forever in the child, so with other threads about the
    runner scores inline unless ``scoring="process"`` asks for the fork."""
    return sys.platform == "linux" and can_fork() and threading.active_count() == 1


def can_fork() -> bool:
    """Whether this platform's ``multiprocessing`` can fork at all."""
    return "fork" in multiprocessing.get_all_start_methods()


class ScoringProcess:
    """The scoring process, and this side of its lanes.

    A lane is one pipe to the process, owned by one worker of the run (:meth:`lane`): the
    worker sends its jobs down it and reads the replies back in the order it sent them, on
    its own thread, so a case costs this process no thread hop and no event-loop wakeup.
    """

    def __init__(self, spec: ScoringSpec, lanes: int) -> None:
        context = multiprocessing.get_context("fork")
        pipes = [context.Pipe() for _ in range(max(1, lanes))]
        ours = [end for end, _ in pipes]
        theirs = [end for _, end in pipes]
        self._process = context.Process(
            target=_serve,
            args=(theirs, ours, spec, os.getpid()),
            name="lg_eval-scoring",
            daemon=True,
        )
        self._process.start()
        for end in theirs:
            end.close()
        self._lanes = [Lane(end, self._process) for end in ours]
        self._free = list(reversed(self._lanes))
        self._lock = threading.Lock()
        self._closed = False

    def lane(self) -> Lane:
        """A lane of its own for one worker (there are as many as the run's concurrency)."""
        with self._lock:
            return self._free.pop()

    def close(self) -> None:
        """Let the process finish what it was sent, then wait for it to exit (once)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        for lane in self._lanes:
            lane.end()
        self._process.join()
        for lane in self._lanes:
            lane.close()


class Lane:
    """One worker's pipe to the scoring process: jobs out, replies back in sending order."""

    def __init__(self, conn: Connection, process: BaseProcess) -> None:
        self._conn = conn
        self._process = process

    def send(self, job: _Job) -> Effect[None]:
        """Send ``job`` (its reply comes after those of the jobs sent before it)."""

        def run() -> None:
            try:
                self._conn.send(job)
            except OSError as exc:
                raise self._gone() from exc

        async def arun() -> None:
            run()  # a small write the process reads promptly

        return Effect(run, arun)

    def reply(self) -> Effect[_Reply]:
        """The reply to the oldest job sent and not yet answered.

        Raises (when performed):
            ScoringProcessError: the process is gone.
        """

        async def arun() -> _Reply:
            loop = asyncio.get_running_loop()
            readable: asyncio.Future[None] = loop.create_future()
            fd = self._conn.fileno()
            loop.add_reader(fd, _done, readable)
            try:
                await readable
            finally:
                loop.remove_reader(fd)
            return self._receive()

        return Effect(self._receive, arun)

    def end(self) -> None:
        """Tell the process this lane sends no more (it answers what came before)."""
        with contextlib.suppress(OSError):
            self._conn.send(None)

    def close(self) -> None:
        self._conn.close()

    def _receive(self) -> _Reply:
        try:
            reply, warned = self._conn.recv()
        except (EOFError, OSError) as exc:
            raise self._gone() from exc
        for warning in warned:
            warning.reissue()
        return cast(_Reply, reply)

    def _gone(self) -> ScoringProcessError:
        self._process.join(timeout=1.0)
        return ScoringProcessError(
            f"The scoring process exited (exit code {self._process.exitcode}) before it "
            "answered; run again with the same run_id to resume the run."
        )


def _done(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


@dataclass(frozen=True)
class _Handoff(Effect[CaseStatus]):
    """A case's request to have ``job`` done by the scoring process: performed by
    :func:`serving`, which sends it down its lane and resumes the case with the reply."""

    job: _Job


def _unperformed() -> Any:
    raise RuntimeError("a scoring handoff is performed by serving() only")


async def _aunperformed() -> Any:
    return _unperformed()


def _handoff(job: _Job) -> _Handoff:
    return _Handoff(_unperformed, _aunperformed, job)


def handed_case(ctx: CaseContext, plan: CasePlan) -> Core[CaseStatus]:
    """:func:`~lg_eval.experiments._case.run_case` with its scoring and storing done by
    the scoring process: this side plays each attempt and hands it over (see
    :func:`serving`), the process does the rest and answers with the status."""
    started = time.perf_counter()

    def attempt(thread_id: str, number: int) -> Core[CaseStatus]:
        graph = ctx.targets.for_case(plan.case)
        played = yield from play_attempt(ctx, plan, graph, thread_id, number)
        elapsed = time.perf_counter() - started
        status: CaseStatus = yield _handoff(_Score(plan.ordinal, plan.repetition, played, elapsed))
        return status

    outcome, attempts = yield from retrying(ctx, plan, attempt)
    if isinstance(outcome, CaseResult):  # the play raised for good: nothing to score
        result = finish(ctx, outcome, attempts, time.perf_counter() - started, CacheStats())
        stored: CaseStatus = yield _handoff(_Store(plan.ordinal, result))
        return stored
    return outcome


IN_FLIGHT = 2
"""Cases a worker has in flight: one being scored there while the next one plays here."""


def serving(
    ctx: CaseContext, plans: Iterator[CasePlan], lane: Lane, done: Callable[[CaseStatus], None]
) -> Core[None]:
    """One worker's core: plays the cases it takes from ``plans`` (shared with the other
    workers) and hands each to the scoring process down ``lane``, playing its next case
    while the last one is scored. A case is finished (``done(status)``) once its result is
    committed there, so a killed run re-runs at most ``IN_FLIGHT`` cases per worker."""
    waiting: deque[Core[CaseStatus]] = deque()  # cases handed over, oldest first

    def advance(case: Core[CaseStatus], reply: _Reply | None) -> Core[None]:
        """Drive ``case`` (from its start, or resumed with ``reply``) to its next handoff,
        which is sent down the lane, or to its end."""
        try:
            effect = next(case) if reply is None else _resumed(case, reply)
            while not isinstance(effect, _Handoff):
                try:
                    result = yield effect
                except Exception as exc:  # handed back so the case decides
                    effect = case.throw(exc)
                else:
                    effect = case.send(result)
        except StopIteration as stop:
            done(stop.value)
            return
        try:
            yield lane.send(effect.job)
        except BaseException:
            case.close()
            raise
        waiting.append(case)

    try:
        for plan in plans:
            yield from advance(handed_case(ctx, plan), None)
            while len(waiting) >= IN_FLIGHT:
                reply = yield lane.reply()
                yield from advance(waiting.popleft(), reply)
        while waiting:
            reply = yield lane.reply()
            yield from advance(waiting.popleft(), reply)
    finally:
        for case in waiting:  # the run stops: give up on them
            case.close()


def _resumed(case: Core[CaseStatus], reply: _Reply) -> Effect[Any]:
    if isinstance(reply, _Retry):
        return case.throw(InfrastructureError(reply.error))
    if isinstance(reply, _Broken):
        return case.throw(ScoringProcessError(f"The scoring process failed: {reply.error}"))
    return case.send(reply)


# --------------------------------------------------------------------------- the child


def _serve(
    lanes: list[Connection], parents_ends: list[Connection], spec: ScoringSpec, parent: int
) -> None:
    """The scoring process: each lane's jobs in order, until every lane has ended (the run
    said stop, or went away)."""
    for end in parents_ends:  # so that the run's exit, however it ends, reaches us as EOF
        end.close()
    _die_with(parent)
    with contextlib.suppress(OSError):
        os.nice(_NICENESS)
    gc.freeze()  # what the fork copied is never collected here: no scans, no page copies
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the run's: it stops us
    with contextlib.suppress(ValueError):
        signal.set_wakeup_fd(-1)  # the fd is the run's event loop, not ours
    open_lanes = list(lanes)
    with _Scorer(spec) as scorer:
        while open_lanes:
            asking: list[Connection] = []
            jobs: list[_Job] = []
            ready = cast(list[Connection], wait(open_lanes))
            for lane in ready:  # the jobs waiting now are stored in one commit
                job = _next_job(lane)
                if job is None:
                    open_lanes.remove(lane)
                else:
                    asking.append(lane)
                    jobs.append(job)
            for lane, reply in zip(asking, scorer.handle_warned(jobs), strict=True):
                try:
                    lane.send(reply)
                except OSError:
                    open_lanes.remove(lane)


def _next_job(lane: Connection) -> _Job | None:
    """The lane's next job; None once it ended (or its worker's process is gone)."""
    try:
        job: _Job | None = lane.recv()
    except (EOFError, OSError):
        return None
    return job


def _die_with(parent: int) -> None:
    """Be killed the moment the run's process dies (Linux), so that a result is never
    committed after a ``kill -9`` of the run: a resumed run must find every case either
    stored or not, and replay only the latter. Elsewhere the process exits at EOF."""
    if sys.platform == "linux":
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # it died before the line above
        os._exit(0)


_PR_SET_PDEATHSIG = 1
_NICENESS = 10
"""Scheduling the scoring process after the run's own threads: the graph and its
checkpoint writes are what the run waits for; scoring only needs to keep up."""


def _reply(outcome: CaseResult | _Reply, failed: _Broken | None) -> _Reply:
    """A job's reply: its result's status once committed (``failed``: the commit failed)."""
    if not isinstance(outcome, CaseResult):
        return outcome
    return failed if failed is not None else outcome.status


class _Scorer:
    """Scores and stores jobs on the process's own connections, opened on first use."""

    def __init__(self, spec: ScoringSpec) -> None:
        self._spec = spec
        self._stack = ExitStack()
        self._ready: tuple[CaseContext, ResultStore] | None = None
        self._resolver = EvaluatorResolver(spec.dataset)

    def __enter__(self) -> _Scorer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stack.close()

    def handle_warned(self, jobs: list[_Job]) -> list[tuple[_Reply, list[_Warned]]]:
        """Each job's reply, with the warnings raised while handling it (the filters this
        process inherited from the run decide which are raised, ignored or errors). The
        jobs' results are committed together, in one transaction, before any reply."""
        outcomes: list[tuple[CaseResult | _Reply, list[_Warned]]] = []
        for job in jobs:
            with warnings.catch_warnings(record=True) as caught:
                outcome = self._outcome(job)
            outcomes.append((outcome, [_Warned.of(warning) for warning in caught]))
        stored = [
            (job.ordinal, outcome)
            for job, (outcome, _) in zip(jobs, outcomes, strict=True)
            if isinstance(outcome, CaseResult)
        ]
        with warnings.catch_warnings(record=True) as caught:
            failed = self._commit(stored)
        if outcomes:
            outcomes[0][1].extend(_Warned.of(warning) for warning in caught)
        return [(_reply(outcome, failed), warned) for outcome, warned in outcomes]

    def _outcome(self, job: _Job) -> CaseResult | _Reply:
        """The job's result to store, or its reply when there is nothing to store."""
        try:
            ctx, _ = self._open()
            return job.result if isinstance(job, _Store) else self._scored(ctx, job)
        except Exception as exc:
            return _Broken(describe_error(exc))

    def _commit(self, stored: list[tuple[int, CaseResult]]) -> _Broken | None:
        if not stored:
            return None
        try:
            _, store = self._open()
            store.write(stored)
        except Exception as exc:
            return _Broken(describe_error(exc))
        return None

    def _scored(self, ctx: CaseContext, job: _Score) -> CaseResult | _Retry:
        started = time.perf_counter()
        case = self._spec.dataset.cases[job.ordinal]
        plan = plan_for(self._resolver, job.ordinal, case, job.repetition)
        cache_stats = CacheStats()
        CASE_STATS.set(cache_stats)
        played = job.played
        try:
            graph = ctx.targets.for_case(plan.case)
            result = drive(score_attempt(ctx, plan, graph, played))
        except Exception as exc:
            if retryable(ctx, exc, played.attempt):
                return _Retry(describe_error(exc))
            result = failed_attempt(ctx, plan, played.thread_id, exc)
        latency = job.elapsed + time.perf_counter() - started
        return finish(ctx, result, played.attempt, latency, cache_stats)

    def _open(self) -> tuple[CaseContext, ResultStore]:
        if self._ready is None:
            spec = self._spec
            saver = self._stack.enter_context(open_checkpointer(spec.checkpointer))
            store = self._stack.enter_context(open_store(spec.store))
            if spec.lease_token:
                fence(store, spec.run_id, spec.lease_token)
            context = CaseContext(
                run_id=spec.run_id,
                targets=CaseTargets(spec.target, spec.dataset, saver),
                saver=saver,
                thresholds=spec.thresholds,
                require_verdict=spec.require_verdict,
                retries=spec.retries,
                redactor=spec.redactor,
                resume_threads=False,
            )
            self._ready = context, store
        return self._ready


__all__ = [
    "Lane",
    "ScoringProcess",
    "ScoringSpec",
    "can_fork",
    "fork_is_safe",
    "serving",
]
