"""Proposed vs executed tool calls, and what ran after the human's answer (issue 30).

The user's scenario as a real graph: a tool-calling (scripted) model, a ``ToolNode``
with ``lookup_order`` and ``refund``, an ``approval`` node that asks with
``interrupt()`` and routes with ``Command(goto=...)``, on a ``SqliteSaver`` file;
and a regressed version that executes the refund the human rejected.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.types import Command

import lg_eval
from graphs import hitl_agent, support
from graphs.scenarios import HITL_AGENT_TURNS, drive, thread_config
from lg_eval.datasets import load_dataset
from lg_eval.errors import InvalidOptionError
from lg_eval.evaluators import create_hitl_evaluator, create_tool_sequence_evaluator
from lg_eval.experiments import run_experiment

ASKED = {"question": support.QUESTION, "tool": "refund", "args": support.REFUND_ARGS}
REFUND = 'refund(order_id="42", amount=30.0)'


@pytest.fixture(scope="module")
def saver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SqliteSaver]:
    path = tmp_path_factory.mktemp("support") / "checkpoints.sqlite"
    with SqliteSaver.from_conn_string(str(path)) as checkpointer:
        yield checkpointer


def played(saver: SqliteSaver, answer: str, *, regressed: bool) -> lg_eval.ThreadTrajectory:
    graph = support.build(saver, regressed=regressed)
    config = {"configurable": {"thread_id": f"{answer}-{regressed}"}}
    graph.invoke({"messages": [("user", support.REQUEST)]}, config)
    graph.invoke(Command(resume=answer), config)
    return lg_eval.extract_thread(graph, config)


@pytest.fixture(scope="module")
def threads(saver: SqliteSaver) -> dict[str, lg_eval.ThreadTrajectory]:
    return {
        "rejected": played(saver, "reject", regressed=False),
        "approved": played(saver, "approve", regressed=False),
        "regressed": played(saver, "reject", regressed=True),
    }


def test_langgraph_runs_the_rejected_refund_only_in_the_regressed_graph(threads) -> None:
    steps = {name: thread.to_graph_trajectory().steps for name, thread in threads.items()}
    first = ["__start__", "agent", "tools", "agent", "approval", "__interrupt__"]
    assert steps == {
        "rejected": [first, ["agent"]],
        "approved": [first, ["tools", "agent"]],
        "regressed": [first, ["tools", "agent"]],
    }


def test_executed_calls_tell_the_rejected_refund_from_the_executed_one(threads) -> None:
    only_lookup = create_tool_sequence_evaluator(["lookup_order"])
    rejected = only_lookup(outputs=threads["rejected"])
    assert (rejected["score"], rejected["comment"]) == (True, None)
    assert rejected["metadata"]["not_executed"] == [
        {"index": 1, "name": "refund", "args": support.REFUND_ARGS}
    ]
    regressed = only_lookup(outputs=threads["regressed"])
    assert (regressed["score"], regressed["comment"]) == (
        False,
        f"Expected 1 calls, got 2. Unexpected 1 call: {REFUND}.",
    )
    both = create_tool_sequence_evaluator(["lookup_order", {"name": "refund"}])
    assert both(outputs=threads["approved"])["score"] is True
    missing = both(outputs=threads["rejected"])
    assert (missing["score"], missing["comment"]) == (
        False,
        f"Expected 2 calls, got 1. Missing 1 expected call: refund(...). "
        f"Not counted, proposed but not executed: {REFUND}.",
    )


def test_proposed_calls_count_every_call_the_model_made(threads) -> None:
    proposed = create_tool_sequence_evaluator(["lookup_order", "refund"], calls="proposed")
    assert [proposed(outputs=t)["score"] for t in threads.values()] == [True, True, True]
    assert proposed(outputs=threads["rejected"])["metadata"]["calls"] == "proposed"


def test_hitl_match_checks_that_the_rejected_refund_did_not_run(threads) -> None:
    hitl = create_hitl_evaluator()
    rejected = {"interrupts": [[ASKED], []], "resumes": [None, "reject"]}
    ok = hitl(outputs=threads["rejected"], reference_outputs=rejected)
    assert (ok["score"], ok["comment"]) == (True, None)
    assert ok["metadata"]["calls_after_answer"] == [
        {
            "turn": 1,
            "decision": "reject",
            "call": {"name": "refund", "args": support.REFUND_ARGS, "id": "call-refund"},
            "executed": False,
            "ok": True,
        }
    ]
    bad = hitl(outputs=threads["regressed"], reference_outputs=rejected)
    assert (bad["score"], bad["comment"]) == (
        False,
        f"Turn 2: answered 'reject' (reject), but {REFUND} was executed afterwards.",
    )
    unchecked = create_hitl_evaluator(calls_after_answer=False)
    assert unchecked(outputs=threads["regressed"], reference_outputs=rejected)["score"] is True


def test_hitl_match_checks_that_the_approved_refund_ran(threads) -> None:
    approved = {"interrupts": [[ASKED], []], "resumes": [None, "approve"]}
    result = create_hitl_evaluator()(outputs=threads["approved"], reference_outputs=approved)
    assert result["score"] is True
    assert [row["executed"] for row in result["metadata"]["calls_after_answer"]] == [True]


def test_a_custom_decision_reads_answers_the_default_does_not(threads) -> None:
    reference = {"resumes": [None, "reject"]}
    never = create_hitl_evaluator(decision=lambda answer: None)
    result = never(outputs=threads["regressed"], reference_outputs=reference)
    assert (result["score"], result["metadata"]["calls_after_answer"]) == (True, [])
    with pytest.raises(InvalidOptionError, match="decision must be a function"):
        create_hitl_evaluator(decision="reject")  # type: ignore[arg-type]


def test_a_bad_calls_option_names_the_accepted_values() -> None:
    with pytest.raises(InvalidOptionError) as error:
        create_tool_sequence_evaluator(["refund"], calls="made")  # type: ignore[arg-type]
    assert str(error.value) == (
        "calls='made' is not allowed; use 'executed' (calls whose tool ran, the default) or "
        "'proposed' (every call the model made, run or not)."
    )


GOLDEN = """\
name: support-golden
evaluators: [tool_sequence, hitl_match]
cases:
  - id: refund-rejected
    turns:
      - input: {messages: [{role: user, content: "Please refund order 42"}]}
      - resume: reject
    expected:
      tool_calls: [lookup_order]
      trajectory:
        steps: [[__start__, agent, tools, agent, approval, __interrupt__], [agent]]
        interrupts: [[{question: "Approve this refund?", tool: refund,
                       args: {order_id: "42", amount: 30.0}}], []]
        resumes: [null, reject]
  - id: refund-approved
    turns:
      - input: {messages: [{role: user, content: "Please refund order 42"}]}
      - resume: approve
    expected:
      tool_calls: [lookup_order, {name: refund, args: {order_id: "42"}}]
      trajectory:
        steps: [[__start__, agent, tools, agent, approval, __interrupt__], [tools, agent]]
        resumes: [null, approve]
"""


def sequence(score: bool) -> tuple[str, bool]:
    return ("tool_sequence_strict_match", score)


def hitl(score: bool) -> tuple[str, bool]:
    return ("hitl_match", score)


def graph(score: bool) -> tuple[str, bool]:
    return ("graph_trajectory_strict_match", score)


@pytest.mark.parametrize(
    ("target", "scores"),
    [
        (
            support.build,
            {
                "refund-rejected": [sequence(True), hitl(True), graph(True)],
                "refund-approved": [sequence(True), hitl(True), graph(True)],
            },
        ),
        (
            support.build_regressed,
            {
                "refund-rejected": [sequence(False), hitl(False), graph(False)],
                "refund-approved": [sequence(True), hitl(True), graph(True)],
            },
        ),
    ],
    ids=["correct", "regressed"],
)
def test_a_golden_dataset_catches_the_regression(tmp_path: Path, target, scores) -> None:
    path = tmp_path / "support.yaml"
    path.write_text(GOLDEN)
    run = run_experiment(
        target,
        load_dataset(path),
        checkpointer=f"sqlite:///{tmp_path / 'checkpoints.sqlite'}",
        store=f"sqlite:///{tmp_path / 'results.sqlite'}",
    )
    got = {r.case_id: [(row.key, row.score) for row in r.scores] for r in run.results}
    assert got == scores


# --------------------------------------------------------------------------- LangChain's middleware


@pytest.fixture(scope="module")
def inbox(saver: SqliteSaver) -> lg_eval.ThreadTrajectory:
    graph = hitl_agent.build(saver)
    drive(graph, "inbox", HITL_AGENT_TURNS)
    return lg_eval.extract_thread(graph, thread_config("inbox"))


def test_a_call_the_middleware_rejected_is_proposed_not_executed(inbox) -> None:
    executed = ["read_inbox", {"name": "send_email", "args": hitl_agent.REPLY_TO_BOB}]
    assert create_tool_sequence_evaluator(executed)(outputs=inbox)["score"] is True
    proposed = [*executed, {"name": "send_email", "args": hitl_agent.EMAIL_ALL}]
    every = create_tool_sequence_evaluator(proposed, calls="proposed")
    assert every(outputs=inbox)["score"] is True


def test_hitl_match_reads_the_middlewares_decisions_per_call(inbox) -> None:
    approve, reject = {"type": "approve"}, {"type": "reject"}
    reference = {"resumes": [None, {"decisions": [approve]}, None, {"decisions": [reject]}]}
    result = create_hitl_evaluator(answers="subset")(outputs=inbox, reference_outputs=reference)
    assert result["score"] is True
    rows = result["metadata"]["calls_after_answer"]
    assert [(r["turn"], r["decision"], r["call"]["args"], r["executed"]) for r in rows] == [
        (1, "approve", hitl_agent.REPLY_TO_BOB, True),
        (3, "reject", hitl_agent.EMAIL_ALL, False),
    ]
