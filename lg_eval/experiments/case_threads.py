"""Daemon threads that run a blocking run's cases, one per worker, settled on the event loop.

A blocking run (:func:`~lg_eval.experiments.run_experiment`) plays each case with
blocking calls on a case thread while its event loop keeps the bounds (concurrency,
timeouts); this is the pool those threads come from.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, cast

R = TypeVar("R")

CLOSE_GRACE = 10.0
"""Seconds a finished run waits for case threads still running given-up cases."""


class CaseThreads:
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


__all__ = ["CLOSE_GRACE", "CaseThreads"]
