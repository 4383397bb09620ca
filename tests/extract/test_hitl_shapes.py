"""HITL thread shapes (graphs/shapes.py), each pinned exactly: steps in both resume
conventions, statuses, edits and answers, on every saver, sync and async, through both
readers (the live-stream check in test_live_stream.py covers the same threads against
LangGraph's own task stream)."""

from __future__ import annotations

import sqlite3
import warnings
from typing import Any

import pytest
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import START, MessagesState, StateGraph

from graphs.scenarios import SHAPES
from lg_eval import ExtractionWarning, aextract_thread, extract_thread
from lg_eval.errors import GraphMismatchError, InvalidConfigError
from lg_eval.extract import _thread as thread_module
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


DEEP = [
    "__start__",
    "desk",
    "desk:__start__",
    "desk:agent",
    "desk:agent:__start__",
    "desk:agent:think",
    "desk:agent:transfer",
    "desk:specialist",
    "report",
]
BATCH_PAUSED = [
    "__start__",
    "batch",
    "batch:__start__",
    "batch:inspect",
    "batch:record",
    "batch:__start__",
    "batch:inspect",
    "__interrupt__",
]

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
            ["__start__", "audit", "mailer", "mailer:__start__", "mailer:draft", "__interrupt__"],
            ["mailer:send", "done"],
        ],
        [
            ["__start__", "audit", "mailer", "mailer:__start__", "mailer:draft", "__interrupt__"],
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
        [["__start__", "finance", "__interrupt__", "legal", "__interrupt__"], ["decide"]],
        [
            ["__start__", "finance", "__interrupt__", "legal", "__interrupt__"],
            ["finance", "legal", "decide"],
        ],
    ),
    "send_answers": (
        [["__start__", "split", "check", "__interrupt__", "check", "__interrupt__"], ["merge"]],
        [
            ["__start__", "split", "check", "__interrupt__", "check", "__interrupt__"],
            ["check", "check", "merge"],
        ],
    ),
    # Written from LangGraph's live task stream (tests/extract/live.py) and its semantics:
    # a Command.PARENT handoff ends the sub-agent's run inside one invoke, so the handing-off
    # tool is listed and the target runs in the same turn.
    "handoff": (
        [
            [
                "__start__",
                "triage",
                "triage:__start__",
                "triage:think",
                "triage:transfer",
                "specialist",
            ]
        ]
        * 2,
        [
            [
                "__start__",
                "triage",
                "triage:__start__",
                "triage:think",
                "triage:transfer",
                "specialist",
            ]
        ]
        * 2,
    ),
    "deep_handoff": (
        [DEEP],
        [DEEP],
    ),
    # Command(resume=..., goto="bonus"): bonus runs in the resuming superstep, next to ask.
    "resume_goto": (
        [["__start__", "ask", "__interrupt__"], ["bonus", "after"]],
        [["__start__", "ask", "__interrupt__"], ["ask", "bonus", "after"]],
    ),
    # batch invokes check three times (namespaces batch:<id>, ...|1, ...|2); call 1 pauses.
    "subgraph_calls": (
        [
            [*BATCH_PAUSED],
            ["batch:record", "batch:__start__", "batch:inspect", "batch:record", "summary"],
        ],
        [
            [*BATCH_PAUSED],
            [
                "batch",
                "batch:inspect",
                "batch:record",
                "batch:__start__",
                "batch:inspect",
                "batch:record",
                "summary",
            ],
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


@pytest.mark.parametrize("reader", ["auto", "fast", "generic"])
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


def test_a_handoff_is_one_turn_listing_the_handing_off_tool(saver: Any) -> None:
    trajectory = both(SHAPES["handoff"].played(saver))
    assert [(t.kind, t.status) for t in trajectory.turns] == [("input", "completed")] * 2
    assert not trajectory.warnings
    triage = trajectory.turns[0].supersteps[1].tasks[0]
    assert [[t.path for t in s.tasks] for s in triage.subgraph] == [
        ["triage:__start__"],
        ["triage:think"],
        ["triage:transfer"],
    ]
    assert trajectory.turns[-1].state["log"][-2:] == ["triage->specialist", "specialist"]


def test_a_deep_handoff_lists_the_node_that_ran_after_it(saver: Any) -> None:
    [turn] = both(SHAPES["deep_handoff"].played(saver)).turns
    desk = turn.supersteps[1].tasks[0]
    assert [[t.path for t in s.tasks] for s in desk.subgraph] == [
        ["desk:__start__"],
        ["desk:agent"],
        ["desk:specialist"],
    ]
    # the sub-agent's own writes stay in its state: only the Command's update reaches desk
    assert turn.state["log"] == ["agent->specialist", "desk.specialist", "report"]


def test_resume_with_goto_runs_the_target_and_records_the_update(saver: Any) -> None:
    trajectory = both(SHAPES["resume_goto"].played(saver))
    paused, resumed = trajectory.turns
    assert not trajectory.warnings
    assert (resumed.kind, resumed.resume_by_node) == ("resume", {"ask": "yes"})
    assert resumed.resume == {paused.interrupts[0].id: "yes"}
    assert (resumed.update, resumed.edits) == ({"log": ["noted"]}, [])
    first = resumed.supersteps[0]
    assert [(t.path, t.resumed) for t in first.tasks] == [("ask", True), ("bonus", False)]
    assert first.checkpoint_id == paused.end_checkpoint_id
    assert resumed.state["log"] == ["noted", "yes", "bonus", "after"]


def test_every_call_of_a_subgraph_is_listed_in_order(saver: Any) -> None:
    trajectory = both(SHAPES["subgraph_calls"].played(saver))
    paused, resumed = trajectory.turns
    assert not trajectory.warnings
    [interrupt] = paused.interrupts
    assert (interrupt.path, interrupt.value) == ("batch:inspect", "Is bread fine?")
    assert (resumed.kind, resumed.resume_by_node) == ("resume", {"batch:inspect": "stale"})
    batch = resumed.supersteps[0].tasks[0]
    assert [(t.path, t.resumed) for s in batch.subgraph for t in s.tasks] == [
        ("batch:inspect", True),
        ("batch:record", False),
        ("batch:__start__", False),
        ("batch:inspect", False),
        ("batch:record", False),
    ]


def test_a_resume_answers_the_call_that_asked_two_call_counters_down(saver: Any) -> None:
    trajectory = both(SHAPES["nested_subgraph_calls"].played(saver))
    paused, resumed = trajectory.turns
    assert not trajectory.warnings
    [interrupt] = paused.interrupts
    assert (interrupt.path, interrupt.value) == ("rounds:batch:inspect", "Is evening/bread fine?")
    assert resumed.resume_by_node == {"rounds:batch:inspect": "fresh"}
    rounds, summary = (t for s in resumed.supersteps for t in s.tasks)
    [[batch]] = [s.tasks for s in rounds.subgraph]
    [[inspect]] = [s.tasks for s in batch.subgraph]
    assert [(t.path, t.resumed) for t in (rounds, batch, inspect, summary)] == [
        ("rounds", True),
        ("rounds:batch", True),
        ("rounds:batch:inspect", True),
        ("summary", False),
    ]
    assert resumed.state["log"] == [
        "morning/apples:ok",
        "morning/bread:ok",
        "evening/apples:ok",
        "evening/bread:fresh",
        "summary",
    ]
