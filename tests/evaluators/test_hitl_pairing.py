"""hitl_match pairs an answer with the call it answered (issue 38, item 4).

The issue's thread: the reviewer rejects ``delete_file(report.txt)``, then approves
``delete_file(tmp.txt)``; before, the approval was checked against the rejected call (even
when the per-call question names its call by ``tool_call_id``), a subagent's question
against the parent's ``task`` call, and one resume answering several per-call questions
not at all. Expectations come from the middleware's documented behaviour (the reviewer's
decision per call) and from the tools' own log of what ran.
"""

from __future__ import annotations

import sqlite3
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_core.messages import ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver

import lg_eval
from graphs._scripted import ai, tool_call
from graphs.scenarios import EVERY_SCENARIO, drive, thread_config
from lg_eval.evaluators import create_hitl_evaluator
from lg_eval.messages import call_outcomes
from tests import hitl_agents
from tests.hitl_agents import APPROVE, MODES, REJECT, RESPOND, TIDY, Log, Mode, Policy, edit

HITL = create_hitl_evaluator()
FILES = ("a.txt", "report.txt", "tmp.txt")
TURN_OF = {"a.txt": 1, "report.txt": 1, "tmp.txt": 2}
"""The resume turn that answers each file's call: the model proposes a.txt and report.txt
together, tmp.txt after the first answer."""
PROPOSED = {
    "a.txt": ("write_file", {"path": "a.txt", "text": "hi"}),
    "report.txt": ("delete_file", {"path": "report.txt"}),
    "tmp.txt": ("delete_file", {"path": "tmp.txt"}),
}
IDS = {"a.txt": "c-write", "report.txt": "c-report", "tmp.txt": "c-tmp"}


@pytest.fixture
def saver(tmp_path: Path) -> Iterator[SqliteSaver]:
    connection = sqlite3.connect(tmp_path / "checkpoints.sqlite", check_same_thread=False)
    yield SqliteSaver(connection)
    connection.close()


def extracted(graph: Any, thread_id: str = "tidy") -> lg_eval.ThreadTrajectory:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # several per-call answers in one resume: ambiguous count
        return lg_eval.extract_thread(graph, thread_config(thread_id))


def expected_rows(policy: Policy, prefix: str = "") -> list[dict[str, Any]]:
    """What each answer decided about its call, by the middleware's docs: approve and edit
    run the call (an edit as edited), reject and respond do not."""
    rows = []
    for path in FILES:
        decision = policy[path]
        name, args = PROPOSED[path]
        ran = decision["type"] in ("approve", "edit")
        row = {
            "turn": TURN_OF[path],
            "decision": decision["type"],
            "call": {"name": name, "args": args, "id": prefix + IDS[path]},
            "executed": ran,
            "ok": True,
        }
        if decision["type"] == "edit":
            row["executed_as"] = dict(decision["edited_action"])
        rows.append(row)
    return rows


def ran_calls(policy: Policy) -> Log:
    """The calls the tools must have run under ``policy``, in order."""
    log: Log = []
    for path in FILES:
        decision = policy[path]
        if decision["type"] == "approve":
            log.append(PROPOSED[path])
        elif decision["type"] == "edit":
            action = decision["edited_action"]
            log.append((action["name"], action["args"]))
    return log


BUILDS = {"root": hitl_agents.agent, "subagent": hitl_agents.nested}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("where", sorted(BUILDS))
def test_the_approval_is_checked_against_the_call_it_approved(saver, mode, where) -> None:
    log: Log = []
    graph = BUILDS[where](log, mode=mode, checkpointer=saver)
    drive(graph, "tidy", hitl_agents.steps(TIDY))
    assert log == ran_calls(TIDY)
    thread = extracted(graph)
    result = HITL(outputs=thread, reference_outputs=thread)
    assert (result["score"], result["comment"]) == (True, None)
    assert result["metadata"]["calls_after_answer"] == expected_rows(TIDY)


@pytest.mark.parametrize("mode", MODES)
def test_the_questions_are_the_middlewares_and_name_their_calls(saver, mode) -> None:
    """What the pairing reads, as LangGraph's stream shows it: per-call questions carry the
    call's id; a batched question lists the gated calls of one AI message, in order."""
    log: Log = []
    graph = hitl_agents.agent(log, mode=mode, checkpointer=saver)
    thread = hitl_agents.streamed_thread(graph, "tidy", hitl_agents.steps(TIDY))
    first = [record.value for record in thread.turns[0].interrupts]
    if mode == "per_call":
        assert sorted((q["type"], q["tool_call_id"]) for q in first) == [
            ("tool_approval", "c-report"),
            ("tool_approval", "c-write"),
        ]
        assert set(thread.turns[1].resume or {}) == {r.id for r in thread.turns[0].interrupts}
    else:
        (question,) = first
        assert [(r["name"], r["args"]) for r in question["action_requests"]] == [
            PROPOSED["a.txt"],
            PROPOSED["report.txt"],
        ]
    result = HITL(outputs=thread, reference_outputs=thread)
    assert (result["score"], result["metadata"]["calls_after_answer"]) == (
        True,
        expected_rows(TIDY),
    )


# --------------------------------------------------------------------------- regressions


class RunsRejectedCalls(HumanInTheLoopMiddleware):
    """A regressed review that runs a call its reviewer rejected."""

    def _resolve_per_call(self, request: Any) -> Any:
        resolved = super()._resolve_per_call(request)
        return (request, None) if isinstance(resolved, ToolMessage) else resolved

    @staticmethod
    def _process_decision(decision: Any, tool_call: Any, config: Any) -> Any:
        if decision["type"] == "reject":
            return tool_call, None
        return HumanInTheLoopMiddleware._process_decision(decision, tool_call, config)


@pytest.mark.parametrize("mode", MODES)
def test_a_rejected_call_that_ran_fails_even_when_answered_with_others(saver, mode) -> None:
    log: Log = []
    review = RunsRejectedCalls({"write_file": True, "delete_file": True}, interrupt_mode=mode)
    graph = hitl_agents.agent(log, mode=mode, checkpointer=saver, review=review)
    drive(graph, "tidy", hitl_agents.steps(TIDY))
    assert ("delete_file", {"path": "report.txt"}) in log  # the regression, as it ran
    thread = extracted(graph)
    result = HITL(outputs=thread, reference_outputs=thread)
    assert result["score"] is False
    assert result["comment"].startswith("Turn 2: answered ")
    assert result["comment"].endswith(
        '(reject), but delete_file(path="report.txt") was executed afterwards.'
    )
    rows = result["metadata"]["calls_after_answer"]
    assert [(r["call"]["id"], r["ok"]) for r in rows] == [
        ("c-write", True),
        ("c-report", False),
        ("c-tmp", True),
    ]


# --------------------------------------------------------------------------- deep agents


@pytest.mark.parametrize("mode", MODES)
def test_a_deep_agents_subagents_question_is_not_checked_against_the_task_call(
    saver, mode: Mode
) -> None:
    """deepagents asks inside the ``task`` tool (``tools:...``); the parent's messages hold
    only the ``task`` call, which no question asked about: nothing there to check."""
    log: Log = []
    graph = hitl_agents.deep(log, mode=mode, checkpointer=saver)
    thread = hitl_agents.streamed_thread(graph, "tidy", hitl_agents.steps(TIDY))
    assert log == ran_calls(TIDY)
    paths = {record.path for turn in thread.turns for record in turn.interrupts}
    inner = "HumanInTheLoopMiddleware.after_model" if mode == "batched" else "tools"
    assert paths == {f"tools:{inner}"}
    assert [o["proposed"]["name"] for o in call_outcomes(thread)] == ["task"]
    result = HITL(outputs=thread, reference_outputs=thread)
    assert (result["score"], result["comment"]) == (True, None)
    assert result["metadata"]["calls_after_answer"] == []


def test_a_rejection_inside_a_deep_agents_subagent_passes_though_the_task_ran(saver) -> None:
    """Before, the subagent's rejection was read as about the parent's ``task`` call, which
    ran, and the thread failed against itself."""
    reject_all: Policy = dict.fromkeys(FILES, REJECT)
    log: Log = []
    graph = hitl_agents.deep(log, checkpointer=saver)
    thread = hitl_agents.streamed_thread(graph, "tidy", hitl_agents.steps(reject_all))
    assert log == []
    assert [o["executed"] is not None for o in call_outcomes(thread)] == [True]  # the task
    assert HITL(outputs=thread, reference_outputs=thread)["score"] is True


# --------------------------------------------------------------------------- every thread


@pytest.mark.parametrize(
    "scenario", [pytest.param(s, id=name) for name, s in EVERY_SCENARIO.items()]
)
def test_every_scenario_thread_matches_itself(tmp_path: Path, scenario: Any) -> None:
    with SqliteSaver.from_conn_string(str(tmp_path / "checkpoints.sqlite")) as checkpointer:
        graph = scenario.played(checkpointer)
        thread = extracted(graph, "t")
        result = HITL(outputs=thread, reference_outputs=thread)
    assert (result["score"], result["comment"]) == (True, None)


DECISIONS = ("approve", "edit", "reject", "respond")


def decided(path: str, kind: str) -> dict[str, Any]:
    """A decision for the call on ``path``; an edit keeps the tool (per-call mode pins it)
    and changes the path."""
    name, args = PROPOSED[path]
    if kind == "edit":
        return edit(name, **{**args, "path": f"edited-{path}"})
    return {"approve": APPROVE, "reject": REJECT, "respond": RESPOND}[kind]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    kinds=st.tuples(*[st.sampled_from(DECISIONS)] * 3),
    mode=st.sampled_from(MODES),
    where=st.sampled_from(sorted(BUILDS)),
    notice=st.booleans(),
)
def test_any_review_of_a_real_agent_matches_itself(kinds, mode, where, notice) -> None:
    policy = {path: decided(path, kind) for path, kind in zip(FILES, kinds, strict=True)}
    log: Log = []
    graph = BUILDS[where](log, mode=mode, notice=notice, checkpointer=InMemorySaver())
    drive(graph, "tidy", hitl_agents.steps(policy))
    assert sorted(log, key=repr) == sorted(ran_calls(policy), key=repr)  # parallel tools
    thread = extracted(graph)
    result = HITL(outputs=thread, reference_outputs=thread)
    assert (result["score"], result["comment"]) == (True, None)
    assert result["metadata"]["calls_after_answer"] == expected_rows(policy)
    executed = [o["executed"] for o in call_outcomes(thread)]
    assert [(e["name"], e["args"]) for e in executed if e is not None] == ran_calls(policy)


@pytest.mark.postgres
@pytest.mark.parametrize(("where", "mode"), [("root", "per_call"), ("subagent", "batched")])
def test_pairing_on_postgres(postgres_saver, where: str, mode: Mode) -> None:
    log: Log = []
    graph = BUILDS[where](log, mode=mode, checkpointer=postgres_saver)
    drive(graph, "tidy", hitl_agents.steps(TIDY))
    thread = extracted(graph)
    result = HITL(outputs=thread, reference_outputs=thread)
    assert (result["score"], result["metadata"]["calls_after_answer"]) == (
        True,
        expected_rows(TIDY),
    )
    executed = [o["executed"] for o in call_outcomes(thread)]
    assert [(e["name"], e["args"]) for e in executed if e is not None] == log


def test_a_batched_question_is_about_the_message_it_reviewed_not_an_earlier_same_call(
    saver,
) -> None:
    """The model proposes ``delete_file(tmp.txt)`` twice; a ``when`` predicate lets the first
    run unreviewed, the second is asked about and rejected. The question's action request
    fits both; it is about the last AI message the state held when it asked."""
    script = [
        ai("ai-1", "", tool_call("delete_file", {"path": "tmp.txt"}, "c-first")),
        ai("ai-2", "", tool_call("delete_file", {"path": "tmp.txt"}, "c-second")),
        ai("ai-3", "Kept it this time."),
    ]
    review = HumanInTheLoopMiddleware(
        {
            "delete_file": {
                "allowed_decisions": ["approve", "reject"],
                "when": lambda request: request.tool_call["id"] != "c-first",
            }
        }
    )
    log: Log = []
    graph = hitl_agents.agent(log, script=script, checkpointer=saver, review=review)
    drive(graph, "tidy", hitl_agents.steps({"tmp.txt": REJECT}, resumes=1))
    assert log == [("delete_file", {"path": "tmp.txt"})]  # the first, unreviewed
    thread = extracted(graph)
    result = HITL(outputs=thread, reference_outputs=thread)
    assert (result["score"], result["comment"]) == (True, None)
    assert result["metadata"]["calls_after_answer"] == [
        {
            "turn": 1,
            "decision": "reject",
            "call": {"name": "delete_file", "args": {"path": "tmp.txt"}, "id": "c-second"},
            "executed": False,
            "ok": True,
        }
    ]
