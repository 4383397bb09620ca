"""A checkpoint where a turn paused and the next turn resumed is planned from its writes."""

from __future__ import annotations

from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.pregel._algo import prepare_next_tasks

from graphs.scenarios import SCENARIOS
from lg_eval.extract import extract_thread
from lg_eval.extract.fast import planning


@pytest.fixture
def planned_by_langgraph(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the checkpoints the fast reader hands to LangGraph's ``prepare_next_tasks``."""
    calls: list[int] = []

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return prepare_next_tasks(*args, **kwargs)

    monkeypatch.setattr(planning, "prepare_next_tasks", counted)
    return calls


def test_a_resumed_pause_is_named_from_writes(planned_by_langgraph: list[int]) -> None:
    graph = SCENARIOS["weather"].played(InMemorySaver(), "a")  # pauses, then resumes
    thread = extract_thread(graph, {"configurable": {"thread_id": "a"}}, reader="fast")
    assert [turn.status for turn in thread.turns] == ["interrupted", "completed"]
    assert planned_by_langgraph == []
