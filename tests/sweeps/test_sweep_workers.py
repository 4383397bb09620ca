"""How many threads a local sweep scores its partitions on: one (inline) where nothing
waits, the local executor's threads where something may."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from lg_eval import Feedback, sweep_threads
from lg_eval.executors import LocalExecutor
from tests.sweeps import helpers


def _scored_on(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, str]]:
    """``(workers, thread name)`` of each partition a LocalExecutor runs."""
    seen: list[tuple[int, str]] = []
    original = LocalExecutor.map_partitions

    def watched(self: LocalExecutor, fn: Any, partitions: Any) -> Any:
        def recorded(partition: Any) -> Any:
            seen.append((self.workers, threading.current_thread().name))
            return fn(partition)

        return original(self, recorded, partitions)

    monkeypatch.setattr(LocalExecutor, "map_partitions", watched)
    return seen


def test_own_evaluators_over_a_sqlite_file_are_scored_on_the_calling_thread(
    threads: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = _scored_on(monkeypatch)
    result = sweep_threads(
        helpers.build(),
        threads["checkpointer"],
        evaluators=["redundancy", {"name": "call_budget", "options": {"max_tool_calls": 3}}],
        store=threads["store"],
    )
    assert result.scored == 2
    assert seen == [(1, threading.current_thread().name)]


def test_a_users_evaluator_or_an_explicit_executor_keeps_the_thread_pool(
    threads: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = _scored_on(monkeypatch)

    def mine(*, outputs: Any, **_: Any) -> Feedback:  # user code may wait (a network call)
        return Feedback(score=1.0)

    sweep_threads(
        helpers.build(), threads["checkpointer"], evaluators=[mine], store=threads["store"]
    )
    sweep_threads(
        helpers.build(),
        threads["checkpointer"],
        evaluators=["redundancy"],
        executor=LocalExecutor(2),
        store=threads["store"],
        incremental=False,
    )
    assert [workers for workers, _ in seen] == [2, 2]
    assert all(name.startswith("lg-eval-part") for _, name in seen)
