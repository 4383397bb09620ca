"""Bad extraction requests get typed errors whose messages say what to do."""

from __future__ import annotations

import re

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from graphs import weather
from graphs.scenarios import SCENARIOS
from lg_eval import InvalidOptionError, aextract_thread, extract_thread
from lg_eval.errors import (
    CheckpointNotFoundError,
    InvalidConfigError,
    MissingCheckpointerError,
    ThreadNotFoundError,
)
from lg_eval.extract._agentevals_compat import extract_langgraph_trajectory_from_snapshots


@pytest.fixture
def weather_graph():
    graph = weather.build(checkpointer=InMemorySaver())
    SCENARIOS["weather"].run(graph, "t")
    return graph


def test_graph_without_checkpointer() -> None:
    with pytest.raises(MissingCheckpointerError, match=r"Compile it with one, e\.g\. builder"):
        extract_thread(weather.build(), {"configurable": {"thread_id": "t"}})


@pytest.mark.parametrize("config", [{}, {"configurable": {}}, {"configurable": {"thread_id": ""}}])
def test_config_without_thread_id(weather_graph, config) -> None:
    with pytest.raises(InvalidConfigError, match="The config has no thread_id"):
        extract_thread(weather_graph, config)


def test_unknown_thread(weather_graph) -> None:
    with pytest.raises(ThreadNotFoundError, match=r"Thread 'nope' has no checkpoints"):
        extract_thread(weather_graph, {"configurable": {"thread_id": "nope"}})


async def test_unknown_thread_async(weather_graph) -> None:
    with pytest.raises(ThreadNotFoundError, match=r"Thread 'nope' has no checkpoints"):
        await aextract_thread(weather_graph, {"configurable": {"thread_id": "nope"}})


def test_checkpoint_id_not_in_thread(weather_graph) -> None:
    config = {"configurable": {"thread_id": "t", "checkpoint_id": "1ef-not-there"}}
    with pytest.raises(
        CheckpointNotFoundError,
        match=re.escape("Checkpoint '1ef-not-there' is not part of thread 't'"),
    ):
        extract_thread(weather_graph, config)


def test_unknown_resumed_mode(weather_graph) -> None:
    trajectory = extract_thread(weather_graph, {"configurable": {"thread_id": "t"}})
    with pytest.raises(
        InvalidOptionError,
        match=re.escape("resumed='skip' is not allowed; use one of omit, repeat"),
    ):
        trajectory.to_graph_trajectory(resumed="skip")  # type: ignore[arg-type]


def test_unknown_reader(weather_graph) -> None:
    with pytest.raises(InvalidOptionError, match=re.escape("reader='turbo' is not allowed")):
        extract_thread(weather_graph, {"configurable": {"thread_id": "t"}}, reader="turbo")  # type: ignore[arg-type]


def test_errors_are_value_and_lookup_errors_for_generic_handlers(weather_graph) -> None:
    with pytest.raises(LookupError):
        extract_thread(weather_graph, {"configurable": {"thread_id": "nope"}})
    with pytest.raises(ValueError):
        extract_thread(weather_graph, {})


def test_no_snapshots() -> None:
    with pytest.raises(ThreadNotFoundError, match="No snapshots were given"):
        extract_langgraph_trajectory_from_snapshots([])
