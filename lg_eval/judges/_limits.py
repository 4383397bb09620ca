"""Limits on judge calls: how many may be in flight at once, and how long each may take.

Concurrency: a :class:`JudgeConcurrency` is one ``threading.BoundedSemaphore``
for the whole process, so its cap holds across event loops (every sync node
running an async judge on a loop of its own) and threads (a sync judge called
from 16 threads). It is the cap a judge call holds unless a rate limiter that caps
the calls in flight (``RateLimits.max_concurrent``, a run's ``judge_limits``) is in
force (:func:`limiter_caps`): then the limiter's slot is the one cap, and the
judge's own is not taken as well. A sync call blocks its thread on the semaphore; an async call
first tries to take a slot without waiting (the uncontended path costs one
non-blocking acquire) and otherwise polls for one without blocking its event
loop, so a waiting call can be cancelled without leaking a slot.

Timeouts: a call with a timeout runs in a *daemon* thread (:func:`run_in_daemon`)
that is abandoned when the time is up. ``concurrent.futures`` workers are joined
when the interpreter exits, so a model call that never returns would keep the
process alive after its caller gave up; a daemon thread does not.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TypeVar

from lg_eval._arguments import Count, validated
from lg_eval._daemons import run_in_daemon
from lg_eval.errors import InvalidOptionError

T = TypeVar("T")

CONCURRENCY_ENV = "LG_EVAL_JUDGE_CONCURRENCY"
DEFAULT_LIMIT = 8
POLL_MIN = 0.001
POLL_MAX = 0.02


class JudgeConcurrency:
    """A cap on judge calls in flight at once, shared by every judge that uses it.

    The cap holds for the whole process: across threads, and across event
    loops (one ``threading.BoundedSemaphore``, not one ``asyncio.Semaphore``
    per loop). Sync and async judge calls both take a slot. ``limit=None``
    reads ``LG_EVAL_JUDGE_CONCURRENCY`` when first used, else 8.
    """

    @validated
    def __init__(self, limit: Count | None = None) -> None:
        self._limit = limit
        self._semaphore: threading.BoundedSemaphore | None = None
        self._lock = threading.Lock()

    @property
    def limit(self) -> int:
        if self._limit is None:
            self._limit = _environment_limit()
        return self._limit

    @limit.setter
    @validated
    def limit(self, limit: Count) -> None:
        """Change the limit; calls already in flight or waiting keep the old one."""
        with self._lock:
            self._limit = limit
            self._semaphore = None

    def slots(self) -> threading.BoundedSemaphore:
        """The semaphore of the current limit (a call releases the one it acquired)."""
        with self._lock:
            if self._semaphore is None:
                self._semaphore = threading.BoundedSemaphore(self.limit)
            return self._semaphore

    def acquire(self) -> threading.BoundedSemaphore:
        """Wait (blocking this thread) for a slot; release the returned semaphore."""
        semaphore = self.slots()
        semaphore.acquire()
        return semaphore

    async def aacquire(self) -> threading.BoundedSemaphore:
        """Wait for a slot without blocking the event loop; release the returned semaphore."""
        semaphore = self.slots()
        pause = POLL_MIN
        while not semaphore.acquire(blocking=False):
            await asyncio.sleep(pause)  # cancellable: nothing is held while waiting
            pause = min(pause * 2, POLL_MAX)
        return semaphore

    def __repr__(self) -> str:
        return f"JudgeConcurrency(limit={self._limit})"


def _environment_limit() -> int:
    """``$LG_EVAL_JUDGE_CONCURRENCY`` as a limit (unset or blank: the default, 8)."""
    raw = os.environ.get(CONCURRENCY_ENV, "").strip()
    if not raw:
        return DEFAULT_LIMIT
    if not (raw.isdecimal() and int(raw) >= 1):
        raise InvalidOptionError(f"{CONCURRENCY_ENV}={raw!r}: use an integer >= 1.")
    return int(raw)


DEFAULT_CONCURRENCY = JudgeConcurrency()


def set_judge_concurrency(limit: Count) -> None:
    """Set the process-wide limit on judge calls in flight (default 8)."""
    DEFAULT_CONCURRENCY.limit = limit


_LIMITER_CAPS: ContextVar[bool] = ContextVar("lg_eval_limiter_caps", default=False)


@contextmanager
def limiter_caps() -> Iterator[None]:
    """Inside, a rate limiter caps the judge calls in flight: it is the one cap a call holds,
    so :func:`blocking` and :func:`limited` take no :class:`JudgeConcurrency` slot."""
    token = _LIMITER_CAPS.set(True)
    try:
        yield
    finally:
        _LIMITER_CAPS.reset(token)


class _NoSlot:
    """The slot of a call capped by a rate limiter instead (nothing to release)."""

    def release(self) -> None:
        return None


# --- judge calls -----------------------------------------------------------------------------


def _timed_out(timeout: float | None) -> TimeoutError:
    return TimeoutError(f"the judge model did not answer within {timeout} seconds")


def blocking(limit: JudgeConcurrency, call: Callable[[], T], timeout: float | None) -> T:
    """``call()`` inside a concurrency slot, abandoned with ``TimeoutError`` after ``timeout``.

    The slot is given back when the call returns or is abandoned, so calls that
    hang cannot use the cap up for good.
    """
    semaphore = _NoSlot() if _LIMITER_CAPS.get() else limit.acquire()
    try:
        if timeout is None:
            return call()
        return run_in_daemon(
            call, timeout, name="lg-eval-judge", on_timeout=lambda: _timed_out(timeout)
        )
    finally:
        semaphore.release()


async def limited(
    limit: JudgeConcurrency, call: Callable[[], Awaitable[T]], timeout: float | None
) -> T:
    """Await ``call()`` inside a concurrency slot, bounded by ``timeout`` seconds."""
    semaphore = _NoSlot() if _LIMITER_CAPS.get() else await limit.aacquire()
    try:
        return await asyncio.wait_for(call(), timeout)
    except TimeoutError:
        raise _timed_out(timeout) from None
    finally:
        semaphore.release()
