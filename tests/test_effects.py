"""The effect drivers: drive, and driven (a fresh core per run, closed however it ends)."""

from __future__ import annotations

import asyncio
import gc
import weakref
from functools import partial
from typing import Any

import pytest

from lg_eval._effects import Core, Effect, adrive, drive, driven


async def _unused() -> Any:
    raise AssertionError("only the sync driver runs here")


MARK: Effect[Any] = Effect(lambda: "performed", _unused)


def _value(value: Any) -> Effect[Any]:
    return Effect(lambda: value, _unused)


def _boom() -> Effect[Any]:
    def fail() -> Any:
        raise ValueError("no")

    return Effect(fail, _unused)


def core(log: list[Any]) -> Core[str]:
    log.append((yield _value(1)))
    log.append((yield MARK))
    try:
        yield _boom()
    except ValueError as exc:
        log.append(str(exc))
    return "done"


def test_drive_performs_each_effect_and_hands_errors_back_to_the_core() -> None:
    log: list[Any] = []
    assert (drive(core(log)), log) == ("done", [1, "performed", "no"])


def test_an_error_the_core_does_not_catch_leaves_the_driver() -> None:
    def failing() -> Core[None]:
        yield _boom()

    with pytest.raises(ValueError, match="no"):
        drive(failing())


def test_driven_runs_a_fresh_core_each_time_and_closes_one_that_was_given_up() -> None:
    closed: list[str] = []

    def counting(log: list[Any]) -> Core[int]:
        try:
            log.append((yield _value(len(log))))
            return len(log)
        finally:
            closed.append("closed")

    log: list[Any] = []
    effect = driven(lambda: counting(log))
    assert (effect.run(), effect.run(), log, closed) == (1, 2, [0, 1], ["closed", "closed"])

    async def given_up() -> None:
        def slow_core() -> Core[None]:
            try:
                yield Effect(lambda: None, lambda: asyncio.sleep(10))
            finally:
                closed.append("cancelled")

        task = asyncio.ensure_future(driven(slow_core).arun())
        await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(given_up())
    assert closed[-1] == "cancelled"


class _Held:
    """Something an error's frames hold (as an evaluator's frames hold the thread it scores)."""


def _fail_holding(held: _Held) -> Any:
    raise ValueError(f"no ({type(held).__name__})")


async def _afail_holding(held: _Held) -> Any:
    _fail_holding(held)


def _error_as_value(held: _Held) -> Core[Exception]:
    """A core that catches its effect's error and returns it (as the scoring step's
    evaluator calls do: an outcome ``(None, error)``)."""
    try:
        yield Effect(partial(_fail_holding, held), partial(_afail_holding, held))
    except ValueError as exc:
        return exc
    raise AssertionError("the effect raises")


def _outer(held: _Held) -> Core[str]:
    """A core whose effect drives the inner one: the inner error's traceback leads back
    through the effect's frames to the outer driver's frame."""
    error = yield Effect(
        lambda: drive(_error_as_value(held)), lambda: adrive(_error_as_value(held))
    )
    return str(error)


def test_an_error_handed_back_as_a_value_is_freed_without_the_cyclic_collector() -> None:
    """Neither driver keeps what it handed the core: the error (and what its frames held)
    is freed when the last reference goes, not left in a cycle for the collector."""
    for run in (drive, lambda core: asyncio.run(adrive(core))):
        held = _Held()
        alive = weakref.ref(held)
        enabled = gc.isenabled()
        gc.disable()
        try:
            assert run(_outer(held)) == "no (_Held)"
            del held
            assert alive() is None
        finally:
            if enabled:
                gc.enable()
