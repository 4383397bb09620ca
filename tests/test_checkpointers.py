"""Every checkpointer fixture from conftest.py drives a real two-node StateGraph."""

from __future__ import annotations

import operator
from typing import Annotated, TypedDict

import pytest
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph


class State(TypedDict):
    n: int
    trail: Annotated[list[str], operator.add]


def add_one(state: State) -> dict:
    return {"n": state["n"] + 1, "trail": ["add_one"]}


def times_ten(state: State) -> dict:
    return {"n": state["n"] * 10, "trail": ["times_ten"]}


def build(saver: BaseCheckpointSaver):
    builder = StateGraph(State)
    builder.add_node("add_one", add_one)
    builder.add_node("times_ten", times_ten)
    builder.add_edge(START, "add_one")
    builder.add_edge("add_one", "times_ten")
    builder.add_edge("times_ten", END)
    return builder.compile(checkpointer=saver)


CONFIG = {"configurable": {"thread_id": "t1"}}
# Per invoke: the input checkpoint (step -1) + one per superstep: __start__, add_one, times_ten.
STEPS_PER_RUN = [-1, 0, 1, 2]
# A second run on the same thread: n = (2 + 1) * 10; the `trail` reducer keeps run 1's entries.
AFTER_FIRST = {"n": 20, "trail": ["add_one", "times_ten"]}
AFTER_SECOND = {"n": 30, "trail": ["add_one", "times_ten", "add_one", "times_ten"]}


def _steps(history) -> list[int]:
    return [snapshot.metadata["step"] for snapshot in reversed(history)]  # oldest first


def test_saver_runs_graph(saver: BaseCheckpointSaver) -> None:
    graph = build(saver)
    assert list(saver.list(None)) == []  # fixtures hand out an empty store

    assert graph.invoke({"n": 1, "trail": []}, CONFIG) == AFTER_FIRST
    assert graph.get_state(CONFIG).values == AFTER_FIRST
    assert graph.get_state(CONFIG).next == ()
    history = list(graph.get_state_history(CONFIG))
    assert len(history) == 4
    assert _steps(history) == STEPS_PER_RUN

    # The same thread resumes from the stored state: history grows by another 4 checkpoints.
    assert graph.invoke({"n": 2, "trail": []}, CONFIG) == AFTER_SECOND
    assert graph.get_state(CONFIG).values == AFTER_SECOND
    history = list(graph.get_state_history(CONFIG))
    assert len(history) == 8
    assert _steps(history) == [*STEPS_PER_RUN, 3, 4, 5, 6]

    # Threads are isolated.
    other = {"configurable": {"thread_id": "t2"}}
    assert graph.get_state(other).values == {}
    assert list(graph.get_state_history(other)) == []


async def test_async_saver_runs_graph(async_saver: BaseCheckpointSaver) -> None:
    graph = build(async_saver)
    assert [c async for c in async_saver.alist(None)] == []

    assert await graph.ainvoke({"n": 1, "trail": []}, CONFIG) == AFTER_FIRST
    assert (await graph.aget_state(CONFIG)).values == AFTER_FIRST
    history = [s async for s in graph.aget_state_history(CONFIG)]
    assert len(history) == 4
    assert _steps(history) == STEPS_PER_RUN

    assert await graph.ainvoke({"n": 2, "trail": []}, CONFIG) == AFTER_SECOND
    assert (await graph.aget_state(CONFIG)).values == AFTER_SECOND
    history = [s async for s in graph.aget_state_history(CONFIG)]
    assert len(history) == 8

    other = {"configurable": {"thread_id": "t2"}}
    assert (await graph.aget_state(other)).values == {}


@pytest.mark.parametrize("thread", ["a", "b"])
def test_postgres_saver_starts_clean(
    request: pytest.FixtureRequest, postgres_saver: BaseCheckpointSaver, thread: str
) -> None:
    """Two tests writing to one database: the second must not see the first one's rows.

    Using a Postgres fixture directly marks the test `postgres` too (see conftest).
    """
    assert request.node.get_closest_marker("postgres") is not None
    assert list(postgres_saver.list(None)) == []
    build(postgres_saver).invoke({"n": 0, "trail": []}, {"configurable": {"thread_id": thread}})
    assert len(list(postgres_saver.list(None))) == 4


def test_postgres_params_carry_marker(request: pytest.FixtureRequest, saver) -> None:
    is_pg = request.node.callspec.params["saver"] == "postgres"
    assert (request.node.get_closest_marker("postgres") is not None) is is_pg
