"""Differential tests of the drop-in extraction (lg_eval.compat.agentevals) against
agentevals 0.0.9: identical where it is right, and the documented corrections where it
is wrong."""

from __future__ import annotations

from typing import Any

import pytest
from agentevals.graph_trajectory.utils import (
    _get_langgraph_state_history_recursive,
)
from agentevals.graph_trajectory.utils import (
    extract_langgraph_trajectory_from_thread as agentevals_extract,
)
from langgraph.checkpoint.memory import InMemorySaver

from graphs.scenarios import SCENARIOS
from lg_eval.compat.agentevals import (
    aextract_langgraph_trajectory_from_thread,
    extract_langgraph_trajectory_from_snapshots,
    extract_langgraph_trajectory_from_thread,
)

CONFIG = {"configurable": {"thread_id": "t"}}
SHAPES_AGENTEVALS_HANDLES = ["weather", "map_reduce", "command_goto", "hitl_agent"]


def run(name: str, saver: Any = None) -> Any:
    return SCENARIOS[name].played(saver or InMemorySaver())


@pytest.mark.parametrize("name", SHAPES_AGENTEVALS_HANDLES)
def test_identical_to_agentevals_where_it_is_right(name: str) -> None:
    graph = run(name)
    assert extract_langgraph_trajectory_from_thread(graph, CONFIG) == agentevals_extract(
        graph, CONFIG
    )


@pytest.mark.parametrize("name", SHAPES_AGENTEVALS_HANDLES)
def test_identical_to_agentevals_on_sqlite(name: str, sqlite_saver: Any) -> None:
    graph = run(name, sqlite_saver)
    assert extract_langgraph_trajectory_from_thread(graph, CONFIG) == agentevals_extract(
        graph, CONFIG
    )


async def test_async_twin_matches(memory_saver: Any) -> None:
    graph = SCENARIOS["weather"].build(checkpointer=memory_saver)
    await SCENARIOS["weather"].arun(graph, "t")
    assert await aextract_langgraph_trajectory_from_thread(graph, CONFIG) == agentevals_extract(
        graph, CONFIG
    )


def test_agentevals_readme_example_exactly() -> None:
    extracted = extract_langgraph_trajectory_from_thread(run("weather"), CONFIG)
    assert extracted["outputs"]["steps"] == [
        ["__start__", "agent", "tools", "__interrupt__"],
        ["agent"],
    ]
    assert extracted["outputs"]["inputs"] == []
    assert extracted["inputs"][1] == "__resuming__"


@pytest.mark.parametrize("name", [*SHAPES_AGENTEVALS_HANDLES, "approval", "research"])
def test_snapshot_entry_point_matches_thread_entry_point(name: str) -> None:
    graph = run(name)
    history = _get_langgraph_state_history_recursive(graph, CONFIG)
    assert extract_langgraph_trajectory_from_snapshots(history) == (
        extract_langgraph_trajectory_from_thread(graph, CONFIG)
    )


# --- where agentevals is wrong: each case states its answer and ours ---------------------


def both(name: str) -> tuple[list[list[str]], list[list[str]]]:
    graph = run(name)
    ours = extract_langgraph_trajectory_from_thread(graph, CONFIG)["outputs"]["steps"]
    theirs = agentevals_extract(graph, CONFIG)["outputs"]["steps"]
    return ours, theirs


def test_subgraph_pause_is_not_a_turn_boundary_and_paths_are_full() -> None:
    ours, theirs = both("research")
    assert len(theirs) > 3  # agentevals splits at subgraph checkpoints
    assert "researcher:dig" in theirs[3]  # and cuts nested paths to one level
    assert len(ours) == 3
    assert "researcher:deep_dive:dig" in ours[1]


def test_parallel_siblings_come_in_the_order_the_run_planned_them() -> None:
    """By name (the graph adds ``legal_review`` first), as LangGraph plans them in a run."""
    ours, theirs = both("approval")
    assert ours[0][2:] == ["finance_review", "__interrupt__", "legal_review", "__interrupt__"]
    assert theirs[0][2:] == ours[0][2:]


def test_static_breakpoint_is_visible() -> None:
    ours, theirs = both("breakpoint")
    assert theirs == [["__start__", "draft_email", "send_email"]]
    assert ours == [["__start__", "draft_email", "__interrupt__"], ["send_email"]]


def test_error_and_retry_are_two_turns() -> None:
    ours, theirs = both("flaky")
    assert theirs == [["__start__", "prepare", "fetch", "answer"]]
    assert ours == [["__start__", "prepare", "fetch"], ["fetch", "answer"]]


def test_two_interrupts_in_one_node_are_two_turns() -> None:
    ours, theirs = both("double_check")
    assert theirs == [["__start__", "confirm_payment", "__interrupt__"], ["pay"]]
    assert ours == [
        ["__start__", "confirm_payment", "__interrupt__"],
        ["confirm_payment", "__interrupt__"],
        ["pay"],
    ]


def test_functional_api_threads() -> None:
    graph = run("functional")
    theirs = agentevals_extract(graph, CONFIG)
    ours = extract_langgraph_trajectory_from_thread(graph, CONFIG)
    assert theirs["outputs"]["steps"][0][0] == "essay_workflow"  # no __start__, no @task calls
    assert ours["outputs"]["steps"] == [
        ["__start__", "essay_workflow", "write_draft", "__interrupt__"],
        ["revise"],
    ]
    assert ours["inputs"] == [{"__start__": {"topic": "cats"}}, "__resuming__"]
