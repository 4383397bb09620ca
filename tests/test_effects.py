"""The effect drivers: drive, and driven (a fresh core per run, closed however it ends)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from lg_eval._effects import Core, Effect, drive, driven


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
