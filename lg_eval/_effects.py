"""One implementation, two entry points: sync and async from a single core.

A core that needs I/O is written once as a generator that *yields*
:class:`Effect` objects (a request for I/O, with a sync and an async way to
perform it) and receives each effect's result back. :func:`drive` performs the
effects with blocking calls, :func:`adrive` awaits them. Everything that
decides (parsing, retries, scoring) lives in the generator, so the sync and
async variants cannot drift apart (the httpx ``BaseClient`` idea, applied to
functions).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Generator
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, cast

T = TypeVar("T")
R = TypeVar("R")


@dataclass(frozen=True)
class Effect(Generic[T]):
    """An I/O step a core asks its driver to perform."""

    run: Callable[[], T]
    arun: Callable[[], Awaitable[T]]


def sleep(seconds: float) -> Effect[None]:
    """An effect that waits (``time.sleep`` when sync, ``asyncio.sleep`` when async)."""
    return Effect(lambda: time.sleep(seconds), lambda: asyncio.sleep(seconds))


Core = Generator[Effect[Any], Any, R]


def drive(core: Core[R]) -> R:
    """Run a core to completion, performing each effect with a blocking call.

    The driver keeps no reference to what it handed the core once the core is done: a
    result may hold an error caught as a value (an evaluator's outcome), whose traceback
    leads back to this frame, and keeping it would make a reference cycle per error that
    only the cyclic garbage collector frees, with everything the error's frames held (the
    thread being scored)."""
    result: Any = None
    try:
        effect = next(core)
        while True:
            try:
                result = effect.run()
            except Exception as exc:  # handed back so the core decides
                effect = core.throw(exc)
            else:
                effect = core.send(result)
    except StopIteration as stop:
        return cast(R, stop.value)  # the generator's return value, typed by Core[R]
    finally:
        result = None  # no cycle through this frame (see above)


def driven(make: Callable[[], Core[R]]) -> Effect[R]:
    """An effect that drives a fresh core from ``make`` (blocking or awaited) and closes it
    however that ends, so a caller that gives up (a cancelled task) still runs the core's
    ``finally`` (a rate limiter settling its grant)."""

    def run() -> R:
        core = make()
        try:
            return drive(core)
        finally:
            core.close()

    async def arun() -> R:
        core = make()
        try:
            return await adrive(core)
        finally:
            core.close()

    return Effect(run, arun)


async def adrive(core: Core[R]) -> R:
    """Run a core to completion, awaiting each effect."""
    try:
        effect = next(core)
        while True:
            try:
                result = await effect.arun()
            except Exception as exc:  # handed back so the core decides
                effect = core.throw(exc)
            else:
                effect = core.send(result)
    except StopIteration as stop:
        return cast(R, stop.value)  # the generator's return value, typed by Core[R]
