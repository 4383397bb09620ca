"""Calls in daemon OS threads: waited for with a timeout, awaited, or pooled for an event loop;
never keeping a process alive.

``concurrent.futures`` workers and ``asyncio.to_thread`` use threads that are
joined at interpreter exit (and by ``asyncio.run``), so a call that hangs there
hangs the process after its work is done. Judges' model calls, eval nodes'
evaluators (:func:`run_in_daemon`, :func:`athread`) and a blocking experiment run's
cases (:class:`DaemonPool`) use these instead: an abandoned call's thread is a daemon.
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

T = TypeVar("T")
R = TypeVar("R")


class _Box:
    """The outcome of a call made in another thread."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.value: Any = None
        self.error: BaseException | None = None


def _start(call: Callable[[], Any], name: str, on_done: Callable[[_Box], None] | None) -> _Box:
    box = _Box()
    context = contextvars.copy_context()  # tracing and LangGraph config follow the call

    def target() -> None:
        try:
            box.value = context.run(call)
        except BaseException as exc:  # handed to the waiting thread
            box.error = exc
        finally:
            box.done.set()
            if on_done is not None:
                on_done(box)

    threading.Thread(target=target, name=name, daemon=True).start()
    return box


def run_in_daemon(
    call: Callable[[], T],
    timeout: float | None,
    *,
    name: str = "lg-eval-call",
    on_timeout: Callable[[], BaseException] | None = None,
) -> T:
    """``call()`` in a daemon thread, waited for at most ``timeout`` seconds.

    The result or exception is handed back; after ``timeout`` the thread is
    abandoned (it cannot be stopped, but being a daemon it never keeps the
    process alive) and ``on_timeout()`` is raised (default ``TimeoutError``).
    """
    box = _start(call, name, None)
    if not box.done.wait(timeout):
        if on_timeout is not None:
            raise on_timeout()
        raise TimeoutError(f"the call did not finish within {timeout} seconds")
    if box.error is not None:
        raise box.error
    return box.value  # type: ignore[no-any-return]


async def athread(call: Callable[[], T], *, name: str = "lg-eval-call") -> T:
    """Await ``call()`` run in a daemon thread (unlike ``asyncio.to_thread``, whose
    default-executor worker would be joined at exit, and by ``asyncio.run``, if it hangs).

    Cancelling the await abandons the thread.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()

    def settle(box: _Box) -> None:
        if not future.done():
            if box.error is not None:
                future.set_exception(box.error)
            else:
                future.set_result(box.value)

    def hand_over(box: _Box) -> None:
        with contextlib.suppress(RuntimeError):  # a closed loop: nobody is waiting any more
            loop.call_soon_threadsafe(settle, box)

    _start(call, name, hand_over)
    return await future  # type: ignore[no-any-return]


CLOSE_GRACE = 10.0
"""Seconds :meth:`DaemonPool.close` waits for threads still running given-up jobs."""


class DaemonPool:
    """Daemon OS threads running blocking work for an event loop, as many as are busy at once.

    :meth:`submit` returns a future settled on the loop; an idle thread takes the next job.
    A job abandoned (its future cancelled, after a timeout) keeps its thread until it
    returns; that thread then exits (its late result is dropped) and a new thread takes its
    place, so a stuck job never holds a slot. A blocking experiment run plays its cases on
    such a pool, one thread per case in flight, while its event loop keeps the bounds
    (concurrency, timeouts).
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
            thread = threading.Thread(target=self._serve, name="lg_eval-pool", daemon=True)
            with self._lock:
                self._threads.append(thread)
            thread.start()
        return future

    def close(self, grace: float = CLOSE_GRACE) -> None:
        """Stop the idle threads and wait for every thread to exit, so that none is left
        behind using what the caller closes next (a run's checkpointer); a thread still
        running a job that was given up is waited for up to ``grace`` seconds, and one stuck
        for longer is left to exit when its job returns."""
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
