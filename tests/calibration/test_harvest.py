"""Labels harvested from real HITL threads: ``create_agent`` with
``HumanInTheLoopMiddleware`` (batched and per call, a subagent's questions too) and the
evaluation graph's review, on SQLite, Postgres and in memory.

The expected labels come from what the test's reviewer decided (the policy it answered
with) and from what the tools really ran (their log), never from lg_eval; and the labels
read from lg_eval's extraction equal those read from LangGraph's own ``stream(...,
subgraphs=True)`` events of the same run (:func:`tests.hitl_agents.streamed_thread`).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from graphs.scenarios import drive, thread_config
from lg_eval.extract import extract_thread
from lg_eval.labels import ACTION_KEY, Label, harvest_labels, labels_from_thread
from lg_eval.nodes import create_evaluation_graph
from tests import hitl_agents as hitl
from tests import travel
from tests.calibration.labelled import ANSWERS, play_bookings


def _plain(labels: list[Label]) -> list[dict[str, Any]]:
    """The labels without their time (a streamed thread has none)."""
    return [label.model_dump(exclude={"labeled_at"}) for label in labels]


def _tidy(mode: hitl.Mode, log: hitl.Log) -> list[dict[str, Any]]:
    """What :data:`hitl.TIDY`'s reviewer decided, as labels: the write edited, the report's
    deletion rejected (first answer), the tmp file's deletion approved (second)."""
    ran = {args["path"] for name, args in log}
    write = {"name": "write_file", "args": {"path": "a.txt", "text": "hi"}}
    report = {"name": "delete_file", "args": {"path": "report.txt"}}
    tmp = {"name": "delete_file", "args": {"path": "tmp.txt"}}
    rows = [
        (1, "c-write", False, None, write, "edit", "b.txt" in ran),
        (1, "c-report", False, "Keep the report.", report, "reject", "report.txt" in ran),
        (2, "c-tmp", True, None, tmp, "approve", "tmp.txt" in ran),
    ]
    return [
        {
            "key": ACTION_KEY, "run_id": None, "case_id": None, "repetition": 0,
            "thread_id": "tidy", "turn": turn, "item": item, "verdict": verdict,
            "score": None, "note": note, "labeler": "reviewer", "source": "interrupt",
            "metadata": {
                "decision": decision, "call": call, "executed": executed,
                **({"edited_action": hitl.TIDY["a.txt"]["edited_action"]}
                   if decision == "edit" else {}),
            },
        }
        for turn, item, verdict, note, call, decision, executed in rows
    ]  # fmt: skip


def _without_interrupt_ids(labels: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {**label, "metadata": {k: v for k, v in label["metadata"].items()
                               if k not in ("interrupt_id", "path")}}
        for label in labels
    ]  # fmt: skip


@pytest.mark.filterwarnings("ignore::lg_eval.extract.ExtractionWarning")
@pytest.mark.parametrize("mode", hitl.MODES)
def test_each_decision_on_an_action_request_is_a_label_of_whether_it_should_happen(
    saver: Any, mode: hitl.Mode
) -> None:
    log: hitl.Log = []
    graph = hitl.agent(log, mode=mode, checkpointer=saver)
    drive(graph, "tidy", hitl.steps(hitl.TIDY))
    assert log == [("write_file", {"path": "b.txt", "text": "hello"}),
                   ("delete_file", {"path": "tmp.txt"})]  # fmt: skip
    found = harvest_labels(graph)
    assert _without_interrupt_ids(_plain(found)) == _tidy(mode, log)
    # asked where the middleware asks: after the model (batched), in the tool call (per call)
    asked = "HumanInTheLoopMiddleware.after_model" if mode == "batched" else "tools"
    assert {label.metadata["path"] for label in found if label.metadata} == {asked}
    thread = extract_thread(graph, thread_config("tidy"))
    assert [label.labeled_at for label in found] == [
        datetime.fromisoformat(str(thread.turns[label.turn or 0].started_at)) for label in found
    ]


@pytest.mark.filterwarnings("ignore::lg_eval.extract.ExtractionWarning")
@pytest.mark.parametrize("mode", hitl.MODES)
def test_the_labels_read_from_the_extraction_equal_those_from_langgraphs_own_events(
    mode: hitl.Mode,
) -> None:
    streamed_graph = hitl.agent([], mode=mode, checkpointer=InMemorySaver())
    streamed = hitl.streamed_thread(streamed_graph, "tidy", hitl.steps(hitl.TIDY))
    extracted_graph = hitl.agent([], mode=mode, checkpointer=InMemorySaver())
    drive(extracted_graph, "tidy", hitl.steps(hitl.TIDY))
    extracted = extract_thread(extracted_graph, thread_config("tidy"))
    assert _without_interrupt_ids(_plain(labels_from_thread(extracted))) == (
        _without_interrupt_ids(_plain(labels_from_thread(streamed)))
    )


def test_a_subagents_questions_are_labelled_from_their_action_requests() -> None:
    # the deep agent's cleaner asks inside the `task` tool: its calls never reach the
    # root's messages, so each label names its request by the question and position
    log: hitl.Log = []
    graph = hitl.deep(log, mode="batched", checkpointer=InMemorySaver())
    drive(graph, "deep", hitl.steps(hitl.TIDY))
    found = harvest_labels(graph)
    decided = [
        (label.turn, label.verdict, label.metadata["decision"], label.metadata["call"])
        for label in found
        if label.metadata
    ]
    assert decided == [
        (1, False, "edit", {"name": "write_file", "args": {"path": "a.txt", "text": "hi"}}),
        (1, False, "reject", {"name": "delete_file", "args": {"path": "report.txt"}}),
        (2, True, "approve", {"name": "delete_file", "args": {"path": "tmp.txt"}}),
    ]
    assert [label.item.rsplit(":", 1)[1] for label in found if label.item] == ["0", "1", "0"]
    assert all("executed" not in (label.metadata or {}) for label in found)


@pytest.mark.parametrize("decision", ["approve", "reject", "edit"])
def test_the_travel_agents_booking_decisions_on_sqlite_and_postgres(
    saver: Any, decision: str
) -> None:
    log: travel.Log = []
    graph = travel.agent(log, checkpointer=saver)
    play_bookings(graph, {"t01": decision})  # type: ignore[dict-item]
    [label] = harvest_labels(graph, ["t01"], key="booking_ok", labeler="desk")
    seen = (label.key, label.thread_id, label.turn, label.item)
    assert seen == ("booking_ok", "t01", 1, "c-book")
    who = (label.verdict, label.labeler, label.source)
    assert who == (decision == "approve", "desk", "interrupt")
    assert label.metadata is not None
    assert label.metadata["executed"] is bool(log)  # the booking ran unless rejected
    assert label.note == ("Too early." if decision == "reject" else None)
    if decision == "edit":
        edited = ANSWERS["edit"].resume["decisions"][0]["edited_action"]  # type: ignore[index]
        assert label.metadata["edited_action"] == edited
        assert log == [{**edited["args"]}]


def test_a_respond_decision_and_an_unanswered_question_are_no_labels() -> None:
    graph = hitl.agent([], checkpointer=InMemorySaver())
    policy = {**hitl.TIDY, "report.txt": hitl.RESPOND}
    drive(graph, "tidy", hitl.steps(policy, resumes=1), finish=False)
    found = harvest_labels(graph)
    assert [(label.item, label.metadata["decision"]) for label in found if label.metadata] == [
        ("c-write", "edit")
    ]


def _ratio(outputs: Any = None, reference_outputs: Any = None, **_: Any) -> dict[str, Any]:
    return {"key": "ratio", "score": 0.2}


def test_the_evaluation_graphs_review_verdict_is_a_label_of_the_evaluated_thread() -> None:
    agent_saver = InMemorySaver()
    graph = hitl.agent([], checkpointer=agent_saver)
    drive(graph, "tidy", hitl.steps(hitl.TIDY))
    evaluation = create_evaluation_graph(
        [_ratio], review_threshold=0.5, checkpointer=InMemorySaver(), graphs={"agent": graph}
    )
    config = thread_config("eval-1")
    evaluation.invoke({"target": {"graph": "agent", "thread_id": "tidy"}}, config)
    from langgraph.types import Command

    evaluation.invoke(Command(resume={"verdict": "maybe"}), config)  # refused: asked again
    evaluation.invoke(
        Command(resume={"verdict": "fail", "note": "It deleted <tmp>.", "reviewer": "bob"}),
        config,
    )
    [label] = harvest_labels(evaluation, ["eval-1"])
    assert (label.key, label.thread_id, label.turn, label.item) == ("review", "tidy", None, None)
    assert (label.verdict, label.note, label.labeler, label.source) == (
        False, "It deleted <tmp>.", "bob", "review"
    )  # fmt: skip
    assert label.metadata == {
        "evaluation_thread": "eval-1",
        "score": 0.2,
        "reasons": ["Score 0.2 is below the review threshold 0.5."],
    }
