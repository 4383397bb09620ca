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

A case holds its worker until the scoring process has committed its result, so a killed
run re-runs at most ``concurrency`` cases, as when scoring inline. An infrastructure
error while scoring comes back as :class:`~lg_eval.experiments._case.InfrastructureError`,
so the attempt is played again exactly as inline.

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
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from contextlib import ExitStack
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from lg_eval._effects import Core, Effect, drive
from lg_eval.errors import ScoringProcessError
from lg_eval.experiments._case import (
    CaseContext,
    CasePlan,
    InfrastructureError,
    PlayedAttempt,
    describe_error,
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
from lg_eval.experiments.redaction import Redactor
from lg_eval.experiments.results import CaseResult, CaseStatus
from lg_eval.experiments.scoring import EvaluatorResolver
from lg_eval.experiments.store import ResultStore, open_store


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
    """The scoring process, and this side of its pipe: jobs out, replies in.

    Any thread may send; one reader thread settles each job's future as its reply comes.
    """

    def __init__(self, spec: ScoringSpec) -> None:
        context = multiprocessing.get_context("fork")
        ours, theirs = context.Pipe()
        self._process = context.Process(
            target=_serve,
            args=(theirs, ours, spec, os.getpid()),
            name="lg_eval-scoring",
            daemon=True,
        )
        self._process.start()
        theirs.close()
        self._conn = ours
        self._lock = threading.Lock()
        self._sending = threading.Lock()
        self._closed = False
        self._pending: dict[int, Future[_Reply]] = {}
        self._sent = 0
        self._lost: ScoringProcessError | None = None
        self._reader = threading.Thread(
            target=self._read, name="lg_eval-scoring-replies", daemon=True
        )
        self._reader.start()

    def score(self, plan: CasePlan, played: PlayedAttempt, elapsed: float) -> Effect[CaseStatus]:
        """Score and store the attempt there; its status.

        Raises (when performed):
            InfrastructureError: scoring met an infrastructure error; play it again.
            ScoringProcessError: the scoring process failed, or is gone.
        """
        return self._effect(_Score(plan.ordinal, plan.repetition, played, elapsed))

    def store(self, plan: CasePlan, result: CaseResult) -> Effect[CaseStatus]:
        """Store a finished result there (an attempt that failed in play); its status."""
        return self._effect(_Store(plan.ordinal, result))

    def close(self) -> None:
        """Let the process finish what it was sent, then wait for it to exit (once)."""
        with self._sending:
            if self._closed:
                return
            self._closed = True
            with contextlib.suppress(OSError):
                self._conn.send(None)
        self._process.join()
        self._reader.join()
        self._conn.close()

    def _effect(self, job: _Job) -> Effect[CaseStatus]:
        def run() -> CaseStatus:
            return _answer(self._send(job).result())

        async def arun() -> CaseStatus:
            return _answer(await asyncio.wrap_future(self._send(job)))

        return Effect(run, arun)

    def _send(self, job: _Job) -> Future[_Reply]:
        reply: Future[_Reply] = Future()
        with self._lock:  # the reader takes this one only, never the sending lock
            if self._lost is not None:
                raise self._lost
            self._sent += 1
            number = self._sent
            self._pending[number] = reply
        try:
            with self._sending:
                self._conn.send((number, job))
        except OSError as exc:
            with self._lock:
                self._pending.pop(number, None)
            raise self._gone() from exc
        return reply

    def _read(self) -> None:
        while True:
            try:
                number, reply = self._conn.recv()
            except (EOFError, OSError):
                break
            with self._lock:
                waiting = self._pending.pop(number)
            waiting.set_result(reply)
        lost = self._gone()
        with self._lock:
            self._lost = lost
            waiting_now, self._pending = list(self._pending.values()), {}
        for waiting in waiting_now:
            waiting.set_exception(lost)

    def _gone(self) -> ScoringProcessError:
        self._process.join(timeout=1.0)
        return ScoringProcessError(
            f"The scoring process exited (exit code {self._process.exitcode}) before it "
            "answered; run again with the same run_id to resume the run."
        )


def _answer(reply: _Reply) -> CaseStatus:
    if isinstance(reply, _Retry):
        raise InfrastructureError(reply.error)
    if isinstance(reply, _Broken):
        raise ScoringProcessError(f"The scoring process failed: {reply.error}")
    return reply  # type: ignore[return-value]  # a CaseStatus string


def handed_case(
    ctx: CaseContext,
    plan: CasePlan,
    scoring: ScoringProcess,
    handed: Callable[[], None] | None = None,
) -> Core[CaseStatus]:
    """:func:`~lg_eval.experiments._case.run_case` with its scoring and storing done by
    ``scoring``: this side plays each attempt, the scoring process does the rest.
    ``handed()`` is called as an attempt's play is handed over (the play is done)."""
    started = time.perf_counter()

    def attempt(thread_id: str, number: int) -> Core[CaseStatus]:
        graph = ctx.targets.for_case(plan.case)
        played = yield from play_attempt(ctx, plan, graph, thread_id, number)
        if handed is not None:
            handed()
        status: CaseStatus = yield scoring.score(plan, played, time.perf_counter() - started)
        return status

    outcome, attempts = yield from retrying(ctx, plan, attempt)
    if isinstance(outcome, CaseResult):  # the play raised for good: nothing to score
        result = finish(ctx, outcome, attempts, time.perf_counter() - started, CacheStats())
        stored: CaseStatus = yield scoring.store(plan, result)
        return stored
    return outcome


# --------------------------------------------------------------------------- the child


def _serve(conn: Connection, parents_end: Connection, spec: ScoringSpec, parent: int) -> None:
    """The scoring process: jobs until the run says stop or goes away."""
    parents_end.close()  # so that the run's exit, however it ends, reaches us as EOF
    _die_with(parent)
    with contextlib.suppress(OSError):
        os.nice(_NICENESS)
    gc.freeze()  # what the fork copied is never collected here: no scans, no page copies
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the run's: it stops us
    with contextlib.suppress(ValueError):
        signal.set_wakeup_fd(-1)  # the fd is the run's event loop, not ours
    with _Scorer(spec) as scorer:
        for number, job in _jobs(conn):
            try:
                conn.send((number, scorer.handle(job)))
            except OSError:
                return


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


def _jobs(conn: Connection) -> Iterator[tuple[int, _Job]]:
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            return
        if message is None:
            return
        yield message


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

    def handle(self, job: _Job) -> _Reply:
        try:
            ctx, store = self._open()
            result = job.result if isinstance(job, _Store) else self._scored(ctx, job)
            if isinstance(result, _Retry):
                return result
            store.write([(job.ordinal, result)])
        except Exception as exc:
            return _Broken(describe_error(exc))
        return result.status

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
            context = CaseContext(
                run_id=spec.run_id,
                targets=CaseTargets(spec.target, spec.dataset, saver),
                saver=saver,
                thresholds=spec.thresholds,
                retries=spec.retries,
                redactor=spec.redactor,
                fresh_threads=False,
            )
            self._ready = context, store
        return self._ready


__all__ = [
    "ScoringProcess",
    "ScoringSpec",
    "can_fork",
    "fork_is_safe",
    "handed_case",
]
