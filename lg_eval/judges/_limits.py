"""Limits on judge calls: how many may be in flight at once, and how long each may take.

The async side waits for a slot of a shared :class:`JudgeConcurrency` (one
semaphore per event loop) and for the call under ``asyncio.wait_for``; the sync
side needs no slot (one call at a time per thread) and runs a call that has a
timeout in a worker thread it abandons when the time is up.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import os
import threading
import weakref
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from lg_eval.errors import InvalidOptionError

T = TypeVar("T")

CONCURRENCY_ENV = "LG_EVAL_JUDGE_CONCURRENCY"
DEFAULT_LIMIT = 8


class JudgeConcurrency:
    """A cap on judge calls in flight at once, shared by every judge that uses it.

    Async judge calls wait for a free slot (an ``asyncio.Semaphore`` per event
    loop); sync calls run one at a time per thread and need none. ``limit=None``
    reads ``LG_EVAL_JUDGE_CONCURRENCY`` when first used, else 8.
    """

    def __init__(self, limit: int | None = None) -> None:
        self._limit = None if limit is None else _checked_limit(limit, "limit")
        self._semaphores: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any]
        self._semaphores = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()

    @property
    def limit(self) -> int:
        if self._limit is None:
            raw = os.environ.get(CONCURRENCY_ENV, "").strip()
            self._limit = _checked_limit(raw, CONCURRENCY_ENV) if raw else DEFAULT_LIMIT
        return self._limit

    @limit.setter
    def limit(self, value: int) -> None:
        """Change the limit; calls already waiting keep the old one."""
        with self._lock:
            self._limit = _checked_limit(value, "limit")
            self._semaphores = weakref.WeakKeyDictionary()

    def semaphore(self) -> asyncio.Semaphore:
        """The running loop's semaphore."""
        loop = asyncio.get_running_loop()
        with self._lock:
            semaphore = self._semaphores.get(loop)
            if semaphore is None:
                semaphore = self._semaphores[loop] = asyncio.Semaphore(self.limit)
            return semaphore

    def __repr__(self) -> str:
        return f"JudgeConcurrency(limit={self._limit})"


def _checked_limit(value: Any, name: str) -> int:
    try:
        limit = int(value)
    except (TypeError, ValueError):
        limit = 0
    if limit < 1 or isinstance(value, bool):
        raise InvalidOptionError(f"{name}={value!r} is not a usable limit; use an integer >= 1.")
    return limit


DEFAULT_CONCURRENCY = JudgeConcurrency()


def set_judge_concurrency(limit: int) -> None:
    """Set the process-wide limit on async judge calls in flight (default 8)."""
    DEFAULT_CONCURRENCY.limit = limit


# --- timeouts --------------------------------------------------------------------------------


def blocking(call: Callable[[], T], timeout: float | None) -> T:
    """``call()``, abandoned with ``TimeoutError`` after ``timeout`` seconds."""
    if timeout is None:
        return call()
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)
    future = pool.submit(contextvars.copy_context().run, call)
    try:
        return future.result(timeout=timeout)
    except concurrent.futures.TimeoutError:
        future.cancel()
        raise TimeoutError(f"the judge model did not answer within {timeout} seconds") from None
    finally:
        pool.shutdown(wait=False)


async def limited(
    limit: JudgeConcurrency, call: Callable[[], Awaitable[T]], timeout: float | None
) -> T:
    """Await ``call()`` inside a concurrency slot, bounded by ``timeout`` seconds."""
    async with limit.semaphore():
        try:
            return await asyncio.wait_for(call(), timeout)
        except TimeoutError:
            raise TimeoutError(f"the judge model did not answer within {timeout} seconds") from None


__all__ = [
    "CONCURRENCY_ENV",
    "DEFAULT_CONCURRENCY",
    "JudgeConcurrency",
    "blocking",
    "limited",
    "set_judge_concurrency",
]
