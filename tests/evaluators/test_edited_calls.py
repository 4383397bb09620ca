"""Edited calls are what ran (issue 38, item 3).

``HumanInTheLoopMiddleware`` (langchain 1.x) answers an ``edit`` decision by keeping the
model's call in the AI message and running the tool with the reviewer's call; the result
starts with a note saying so (unless ``edit_notice=None``). Real agents (``create_agent``
batched and per-call, the same agent as a subagent node, a deepagents subagent) run on
SQLite files with a scripted model; the tools log what they were really called with, and
that log, with the state LangGraph checkpointed, is what each expectation is built from.
"""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from langgraph.checkpoint.sqlite import SqliteSaver

import lg_eval
from graphs.scenarios import drive, thread_config
from lg_eval.datasets import case_from_thread, load_dataset
from lg_eval.evaluators import create_tool_sequence_evaluator
from lg_eval.experiments import run_experiment
from lg_eval.messages import call_outcomes
from lg_eval.testing import assert_tool_calls
from tests import hitl_agents
from tests.hitl_agents import MODES, TIDY, Log, Mode

PROPOSED_WRITE = {"name": "write_file", "args": {"path": "a.txt", "text": "hi"}}
EDITED_WRITE = {"name": "write_file", "args": {"path": "b.txt", "text": "hello"}}
REPORT = {"name": "delete_file", "args": {"path": "report.txt"}}
TMP = {"name": "delete_file", "args": {"path": "tmp.txt"}}
RAN = [EDITED_WRITE, TMP]
"""What the reviewer's answers (TIDY) make the tools run, per the middleware's docs."""


@pytest.fixture
def saver(tmp_path: Path) -> Iterator[SqliteSaver]:
    connection = sqlite3.connect(tmp_path / "checkpoints.sqlite", check_same_thread=False)
    yield SqliteSaver(connection)
    connection.close()


def played(build: Any, saver: SqliteSaver, mode: Mode, **options: Any) -> tuple[Any, Log]:
    log: Log = []
    graph = build(log, mode=mode, checkpointer=saver, **options)
    drive(graph, "tidy", hitl_agents.steps(TIDY))
    return graph, log


def proposals(graph: Any) -> list[dict[str, Any]]:
    """The calls of the AI messages in the thread's checkpointed state, as proposed."""
    messages = graph.get_state(thread_config("tidy")).values["messages"]
    return [
        {"name": call["name"], "args": call["args"], "id": call["id"]}
        for message in messages
        if isinstance(message, AIMessage)
        for call in message.tool_calls
    ]


def outcome(proposed: dict[str, Any], ran: dict[str, Any] | None) -> dict[str, Any]:
    executed = None if ran is None else {**ran, "id": proposed["id"]}
    return {"proposed": proposed, "executed": executed}


BUILDS = {"root": hitl_agents.agent, "subagent": hitl_agents.nested}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("where", sorted(BUILDS))
def test_the_middleware_keeps_the_models_call_and_runs_the_reviewers(saver, mode, where) -> None:
    graph, log = played(BUILDS[where], saver, mode)
    assert [(c["name"], c["args"]) for c in proposals(graph)] == [
        (c["name"], c["args"]) for c in (PROPOSED_WRITE, REPORT, TMP)
    ]
    assert [{"name": name, "args": args} for name, args in log] == RAN


@pytest.mark.parametrize("notice", [True, False], ids=["note", "no-note"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("where", sorted(BUILDS))
def test_a_thread_pairs_each_proposal_with_what_ran(saver, mode, where, notice) -> None:
    graph, log = played(BUILDS[where], saver, mode, notice=notice)
    thread = lg_eval.extract_thread(graph, thread_config("tidy"))
    write, report, tmp = proposals(graph)
    expected = [outcome(write, EDITED_WRITE), outcome(report, None), outcome(tmp, TMP)]
    assert call_outcomes(thread) == expected
    assert [(c["name"], c["args"]) for c in (write, tmp)] != log  # the edit changed one
    assert [
        (o["executed"]["name"], o["executed"]["args"]) for o in expected if o["executed"]
    ] == log


@pytest.mark.parametrize("mode", MODES)
def test_messages_alone_show_the_edit_by_the_middlewares_note(saver, mode) -> None:
    graph, _ = played(hitl_agents.agent, saver, mode)
    messages = graph.get_state(thread_config("tidy")).values["messages"]
    write, report, tmp = proposals(graph)
    assert call_outcomes(messages) == [
        outcome(write, EDITED_WRITE),
        outcome(report, None),
        outcome(tmp, TMP),
    ]


def test_without_the_note_only_the_thread_knows_the_edit(saver) -> None:
    graph, _ = played(hitl_agents.agent, saver, "batched", notice=False)
    messages = graph.get_state(thread_config("tidy")).values["messages"]
    write, _, _ = proposals(graph)
    assert call_outcomes(messages)[0] == outcome(write, PROPOSED_WRITE)  # documented limit
    thread = lg_eval.extract_thread(graph, thread_config("tidy"))
    assert call_outcomes(thread)[0] == outcome(write, EDITED_WRITE)


def test_a_deep_agents_subagent_edit_is_in_its_own_messages(saver) -> None:
    """deepagents runs the subagent inside the ``task`` tool: its messages stay in its own
    checkpoint namespace (the parent's show one ``task`` call), read there from the saver."""
    log: Log = []
    graph = hitl_agents.deep(log, checkpointer=saver)
    drive(graph, "tidy", hitl_agents.steps(TIDY))
    assert [{"name": name, "args": args} for name, args in log] == RAN
    parent = graph.get_state(thread_config("tidy")).values["messages"]
    assert [o["proposed"]["name"] for o in call_outcomes(parent)] == ["task"]
    spaces = {c.config["configurable"]["checkpoint_ns"] for c in saver.list(None)} - {""}
    (space,) = spaces
    config = {"configurable": {"thread_id": "tidy", "checkpoint_ns": space}}
    sub = saver.get_tuple(config).checkpoint["channel_values"]["messages"]
    calls = [c for m in sub if isinstance(m, AIMessage) for c in m.tool_calls]
    assert [(c["name"], c["args"]) for c in calls] == [
        (c["name"], c["args"]) for c in (PROPOSED_WRITE, REPORT, TMP)
    ]
    assert [
        o["executed"] and (o["executed"]["name"], o["executed"]["args"]) for o in call_outcomes(sub)
    ] == [
        ("write_file", EDITED_WRITE["args"]),
        None,
        ("delete_file", TMP["args"]),
    ]


# --------------------------------------------------------------------------- checks


@pytest.mark.parametrize("notice", [True, False], ids=["note", "no-note"])
@pytest.mark.parametrize("mode", MODES)
def test_the_tool_sequence_counts_the_edited_call_as_it_ran(saver, mode, notice) -> None:
    graph, log = played(hitl_agents.agent, saver, mode, notice=notice)
    thread = lg_eval.extract_thread(graph, thread_config("tidy"))
    messages = graph.get_state(thread_config("tidy")).values["messages"]
    target = {"thread": thread, "messages": messages}  # what a graph target hands evaluators
    ran = create_tool_sequence_evaluator([{"name": n, "args": a} for n, a in log])
    for outputs in (thread, target):
        result = ran(outputs=outputs)
        assert (result["score"], result["comment"]) == (True, None)
        assert result["metadata"]["edited"] == [
            {"index": 0, **EDITED_WRITE, "proposed": PROPOSED_WRITE}
        ]
    proposed = create_tool_sequence_evaluator([PROPOSED_WRITE, TMP])
    failed = proposed(outputs=thread)
    assert (failed["score"], failed["comment"]) == (
        False,
        'Call 1: expected write_file(path="a.txt", text="hi"), got write_file(path="b.txt", '
        'text="hello"). Missing 1 expected call: write_file(path="a.txt", text="hi"). '
        'Unexpected 1 call: write_file(path="b.txt", text="hello"). Not counted, proposed but '
        'not executed: delete_file(path="report.txt"). Counted as the reviewer edited them: '
        'write_file(path="b.txt", text="hello") for write_file(path="a.txt", text="hi").',
    )
    as_made = create_tool_sequence_evaluator([PROPOSED_WRITE, REPORT, TMP], calls="proposed")
    assert as_made(outputs=thread)["score"] is True


@pytest.mark.parametrize("mode", MODES)
def test_assert_tool_calls_counts_what_ran_and_shows_the_proposal(saver, mode) -> None:
    graph, log = played(hitl_agents.agent, saver, mode, notice=False)
    thread = lg_eval.extract_thread(graph, thread_config("tidy"))
    outputs = {"thread": thread, "messages": graph.get_state(thread_config("tidy")).values}
    assert_tool_calls(outputs, [{"name": n, "args": a} for n, a in log], args="exact")
    with pytest.raises(AssertionError) as failure:
        assert_tool_calls(outputs, [PROPOSED_WRITE, TMP], args="exact")
    assert str(failure.value).splitlines() == [
        "tool calls do not match (order=exact, args=exact, calls=executed)",
        "  !! call 1: expected write_file(path='a.txt', text='hi')",
        "             actual   write_file(path='b.txt', text='hello')",
        "  ok call 2: expected delete_file(path='tmp.txt')",
        "             actual   delete_file(path='tmp.txt')",
        "  not executed: delete_file(path='report.txt')",
        "  edited: write_file(path='b.txt', text='hello') ran, proposed "
        "write_file(path='a.txt', text='hi')",
    ]


@pytest.mark.parametrize("mode", MODES)
def test_a_case_from_the_thread_expects_the_calls_as_they_ran(saver, mode) -> None:
    graph, log = played(hitl_agents.agent, saver, mode, notice=False)
    thread = lg_eval.extract_thread(graph, thread_config("tidy"))
    case = case_from_thread(thread, case_id="tidy")
    expected = case.expected.tool_calls or []
    assert [(c.name, c.args) for c in expected] == log


EXPECTED = """\
    expected:
      tool_calls:
        - {name: write_file, args: {path: b.txt, text: hello}}
        - {name: delete_file, args: {path: tmp.txt}}
"""


@pytest.mark.parametrize("mode", MODES)
def test_an_experiment_stores_the_calls_as_they_ran(tmp_path: Path, mode: Mode) -> None:
    path = tmp_path / "tidy.yaml"
    path.write_text(hitl_agents.tidy_dataset(expected=EXPECTED))
    log: Log = []
    run = run_experiment(
        functools.partial(hitl_agents.agent, log, mode=mode, notice=False),
        load_dataset(path),
        checkpointer=f"sqlite:///{tmp_path / 'checkpoints.sqlite'}",
        store=f"sqlite:///{tmp_path / 'results.sqlite'}",
    )
    (result,) = run.results
    assert [(row.key, row.score) for row in result.scores] == [
        ("tool_sequence_in_order_match", True)
    ]
    assert [(c["name"], c["args"]) for c in result.tool_calls or [] if "executed" not in c] == log
    assert result.tool_calls == [
        {**EDITED_WRITE, "id": "c-write", "proposed": PROPOSED_WRITE},
        {**REPORT, "id": "c-report", "executed": False},
        {**TMP, "id": "c-tmp"},
    ]
