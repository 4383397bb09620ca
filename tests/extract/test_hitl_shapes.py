"""HITL thread shapes (graphs/shapes.py), each pinned exactly: steps in both resume
conventions, statuses, edits and answers, on every saver, sync and async, through both
readers (the live-stream check in test_live_stream.py covers the same threads against
LangGraph's own task stream)."""

from __future__ import annotations

import re
import sqlite3
import warnings
from typing import Any

import pytest
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import START, MessagesState, StateGraph

from graphs.scenarios import SHAPES
from lg_eval import ExtractionWarning, aextract_thread, extract_thread
from lg_eval.errors import GraphMismatchError, InvalidConfigError
from lg_eval.extract import thread as thread_module
from tests.benchmarks.bench_extract import build_agent, run_thread

CONFIG = {"configurable": {"thread_id": "t"}}
READERS = ["fast", "generic"]


def extract(graph: Any, reader: str) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ExtractionWarning)
        return extract_thread(graph, CONFIG, reader=reader)


def both(graph: Any) -> Any:
    fast, generic = (extract(graph, r) for r in READERS)
    assert fast.model_dump() == generic.model_dump()
    return fast


def steps(trajectory: Any, resumed: str = "omit") -> list[list[str]]:
    return trajectory.to_graph_trajectory(resumed=resumed).steps


EXPECTED: dict[str, tuple[list[list[str]], list[list[str]]]] = {
    # (resumed="omit", resumed="repeat")
    "subgraph_breakpoint": (
        [
            ["__start__", "mailer", "mailer:__start__", "mailer:draft", "__interrupt__"],
            ["mailer:send", "done"],
        ],
        [
            ["__start__", "mailer", "mailer:__start__", "mailer:draft", "__interrupt__"],
            ["mailer", "mailer:send", "done"],
        ],
    ),
    "parallel_subgraph_breakpoint": (
        [
            ["__start__", "mailer", "mailer:__start__", "mailer:draft", "audit", "__interrupt__"],
            ["mailer:send", "done"],
        ],
        [
            ["__start__", "mailer", "mailer:__start__", "mailer:draft", "audit", "__interrupt__"],
            ["mailer", "mailer:send", "done"],
        ],
    ),
    "recursion_limit": (
        [["__start__", *["tick"] * 12], ["tick"] * 8],
        [["__start__", *["tick"] * 12], ["tick"] * 8],
    ),
    "time_travel": (
        [
            ["__start__", "first", "__interrupt__"],
            ["first", "__interrupt__"],
            ["second", "__interrupt__"],
            ["finish"],
        ],
        [
            ["__start__", "first", "__interrupt__"],
            ["first", "__interrupt__"],
            ["first", "second", "__interrupt__"],
            ["second", "finish"],
        ],
    ),
    "breakpoint_as_node": (
        [["__start__", "plan", "__interrupt__"], ["execute"]],
        [["__start__", "plan", "__interrupt__"], ["execute"]],
    ),
    "parallel_one_at_a_time": (
        [["__start__", "legal", "__interrupt__", "finance", "__interrupt__"], ["decide"]],
        [
            ["__start__", "legal", "__interrupt__", "finance", "__interrupt__"],
            ["legal", "finance", "decide"],
        ],
    ),
    "send_answers": (
        [["__start__", "split", "check", "__interrupt__", "check", "__interrupt__"], ["merge"]],
        [
            ["__start__", "split", "check", "__interrupt__", "check", "__interrupt__"],
            ["check", "check", "merge"],
        ],
    ),
    "edit_while_paused": (
        [["__start__", "ask", "__interrupt__"], ["after"]],
        [["__start__", "ask", "__interrupt__"], ["ask", "after"]],
    ),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_shape_steps_on_every_sync_saver(name: str, saver: Any) -> None:
    trajectory = both(SHAPES[name].played(saver))
    omit, repeat = EXPECTED[name]
    assert steps(trajectory) == omit
    assert steps(trajectory, "repeat") == repeat


@pytest.mark.parametrize("name", sorted(EXPECTED))
async def test_shape_steps_on_every_async_saver(name: str, async_saver: Any) -> None:
    graph = await SHAPES[name].aplayed(async_saver)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ExtractionWarning)
        found = [await aextract_thread(graph, CONFIG, reader=r) for r in READERS]
    assert found[0].model_dump() == found[1].model_dump()
    omit, repeat = EXPECTED[name]
    assert (steps(found[0]), steps(found[0], "repeat")) == (omit, repeat)


@pytest.mark.parametrize("reader", READERS)
def test_subgraph_breakpoint_pauses_and_records_the_subgraph_edit(reader: str) -> None:
    from langgraph.checkpoint.memory import InMemorySaver

    trajectory = extract(SHAPES["subgraph_breakpoint"].played(InMemorySaver()), reader)
    paused, resumed = trajectory.turns
    assert (paused.status, paused.breakpoint, paused.next_nodes) == (
        "interrupted",
        True,
        ["mailer"],
    )
    [edit] = resumed.edits
    assert edit.values == {"log": ["fixed"]} and edit.checkpoint_ns.startswith("mailer:")
    assert resumed.state["log"] == ["draft", "fixed", "send", "done"]


@pytest.mark.parametrize("reader", READERS)
def test_recursion_limit_is_an_error_turn_not_a_breakpoint(reader: str, saver: Any) -> None:
    failed, retried = extract(SHAPES["recursion_limit"].played(saver), reader).turns
    assert (failed.status, failed.breakpoint, failed.interrupts) == ("error", False, [])
    assert failed.error.startswith("GraphRecursionError(")
    assert (retried.kind, retried.status) == ("continue", "completed")


def test_breakpoint_answered_as_a_node_keeps_as_node(saver: Any) -> None:
    paused, resumed = both(SHAPES["breakpoint_as_node"].played(saver)).turns
    assert (paused.status, paused.breakpoint, paused.next_nodes) == (
        "interrupted",
        True,
        ["review"],
    )
    [edit] = resumed.edits
    assert (edit.as_node, edit.values) == ("review", {"log": ["approved"]})
    assert resumed.state["log"] == ["plan", "approved", "execute"]


def test_time_travel_drops_the_abandoned_answers(saver: Any) -> None:
    trajectory = both(SHAPES["time_travel"].played(saver))
    assert [t.kind for t in trajectory.turns] == ["input", "continue", "resume", "resume"]
    assert [t.resume_by_node for t in trajectory.turns] == [
        None,
        None,
        {"first": "A"},
        {"second": "B"},
    ]
    assert trajectory.turns[-1].state["log"] == ["first:A", "second:B", "finish"]


def test_parallel_answers_one_at_a_time_warn_that_the_count_is_ambiguous(saver: Any) -> None:
    graph = SHAPES["parallel_one_at_a_time"].played(saver)
    with pytest.warns(ExtractionWarning, match="number of resumes is ambiguous"):
        trajectory = extract_thread(graph, CONFIG)
    assert len(trajectory.turns) == 2  # three invocations: storage cannot tell
    assert any("ambiguous" in w for w in trajectory.warnings)


def test_send_answers_of_one_node_are_all_kept(saver: Any) -> None:
    _, resumed = both(SHAPES["send_answers"].played(saver)).turns
    assert resumed.resume_by_node == {"check[0]": "ok-left", "check[1]": "ok-right"}
    assert sorted(resumed.resume.values()) == ["ok-left", "ok-right"]


def test_an_edit_while_paused_then_a_resume_is_one_resume_turn(saver: Any) -> None:
    paused, resumed = both(SHAPES["edit_while_paused"].played(saver)).turns
    assert (resumed.kind, resumed.status) == ("resume", "completed")
    assert resumed.resume == {paused.interrupts[0].id: "yes"}
    assert [e.values for e in resumed.edits] == [{"log": ["edited"]}]


# --- bad input ----------------------------------------------------------------------------


def renamed_tools(saver: Any) -> Any:
    builder = StateGraph(MessagesState)
    builder.add_node("agent", lambda s: {})
    builder.add_node("tool_node", lambda s: {})
    builder.add_edge(START, "agent")
    return builder.compile(checkpointer=saver)


@pytest.mark.parametrize("reader", ["auto", "generic"])
def test_a_graph_that_did_not_write_the_thread_is_refused(reader: str, saver: Any) -> None:
    run_thread(build_agent(3, 0, saver), "t")
    with pytest.raises(GraphMismatchError, match="nodes 'tools' that the graph does not have"):
        extract_thread(renamed_tools(saver), CONFIG, reader=reader)  # type: ignore[arg-type]


def test_a_string_config_is_a_typed_error(saver: Any) -> None:
    graph = SHAPES["edit_while_paused"].played(saver)
    with pytest.raises(InvalidConfigError, match="must be a dict, not str"):
        extract_thread(graph, "t")  # type: ignore[arg-type]


@pytest.mark.parametrize("reader", ["auto", "fast", "generic"])
async def test_async_extraction_on_a_sync_saver(reader: str, tmp_path: Any) -> None:
    conn = sqlite3.connect(tmp_path / "sync.sqlite", check_same_thread=False)
    graph = SHAPES["edit_while_paused"].played(SqliteSaver(conn))
    assert thread_module.sync_only(graph.checkpointer)
    found = await aextract_thread(graph, CONFIG, reader=reader)  # type: ignore[arg-type]
    assert found.model_dump() == extract_thread(graph, CONFIG, reader=reader).model_dump()
    conn.close()


async def test_async_extraction_on_postgres_saver(postgres_saver: Any) -> None:
    graph = SHAPES["time_travel"].played(postgres_saver)
    found = await aextract_thread(graph, CONFIG)
    assert found.model_dump() == extract_thread(graph, CONFIG).model_dump()


@pytest.mark.parametrize(
    ("name", "warning"),
    [("resume_goto", "Command(goto=...) sent the run to bonus"), ("subgraph_calls", "'|N'")],
)
def test_shapes_not_read_exactly_yet_say_so(name: str, warning: str, saver: Any) -> None:
    graph = SHAPES[name].played(saver)
    for reader in READERS:
        with pytest.warns(ExtractionWarning, match=re.escape(warning)):
            extract_thread(graph, CONFIG, reader=reader)
