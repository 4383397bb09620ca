"""case_from_thread: an extracted thread becomes a case that replays it."""

from __future__ import annotations

import warnings
from pathlib import Path

from langchain_core.messages import ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver

from graphs import breakpoint as static_breakpoint
from graphs import flaky, hitl_agent
from graphs.scenarios import SCENARIOS
from lg_eval import extract_thread
from lg_eval._trajectory import ThreadTrajectory
from lg_eval.datasets import (
    Case,
    ContinueTurn,
    Dataset,
    InputTurn,
    ResumeByNodeTurn,
    ResumeTurn,
    StateUpdate,
    UpdateTurn,
    case_from_thread,
    dump_dataset,
    load_dataset,
)
from lg_eval.play import play_case

CONFIG = {"configurable": {"thread_id": "t"}}


def extract(graph: object, thread_id: str = "t") -> ThreadTrajectory:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return extract_thread(graph, {"configurable": {"thread_id": thread_id}})


def replayed_steps(name: str, case: Case, saver: object) -> list[list[str]]:
    graph = SCENARIOS[name].build(checkpointer=saver)
    play_case(graph, case, thread_id="replay")
    return extract(graph, "replay").to_graph_trajectory().steps


def test_a_hitl_thread_played_back_takes_the_same_trajectory(tmp_path: Path) -> None:
    with SqliteSaver.from_conn_string(str(tmp_path / "prod.sqlite")) as saver:
        thread = extract(SCENARIOS["hitl_agent"].played(saver))
        case = case_from_thread(thread, case_id="from-prod", tags=["prod"])
        assert [t.kind for t in case.turns] == ["input", "resume", "input", "resume"]
        assert case.turns[1] == ResumeTurn(resume={"decisions": [{"type": "approve"}]})
        assert case.expected.trajectory is not None
        assert case.expected.trajectory.steps == thread.to_graph_trajectory().steps
        assert case.metadata == {"from_thread": "t"}
        path = dump_dataset(Dataset(name="grown", cases=[case]), tmp_path / "grown.yaml")
        reloaded = load_dataset(path).cases[0]
        assert reloaded.model_dump() == case.model_dump()
        assert replayed_steps("hitl_agent", reloaded, saver) == case.expected.trajectory.steps


def test_several_answers_in_one_resume_become_resume_by_node() -> None:
    thread = extract(SCENARIOS["approval"].played(InMemorySaver()))
    case = case_from_thread(thread, case_id="approval")
    assert case.turns[1] == ResumeByNodeTurn(
        resume_by_node={
            "legal_review": {"approved": True, "comment": "No legal concerns."},
            "finance_review": {"approved": True, "comment": "Within the quarterly budget."},
        }
    )
    assert replayed_steps("approval", case, InMemorySaver()) == case.expected.trajectory.steps  # type: ignore[union-attr]


def test_errors_and_continues_and_subgraph_resumes_replay() -> None:
    for name in ("flaky", "research", "functional", "double_check", "command_goto"):
        thread = extract(SCENARIOS[name].played(InMemorySaver()))
        case = case_from_thread(thread, case_id=name)
        assert case.expected.trajectory is not None
        assert replayed_steps(name, case, InMemorySaver()) == case.expected.trajectory.steps, name
    flaky_case = case_from_thread(
        extract(SCENARIOS["flaky"].played(InMemorySaver())), case_id="flaky"
    )
    assert flaky_case.turns == [
        InputTurn(input={"query": "LangGraph  Checkpointers"}),
        ContinueTurn.model_validate({"continue": True}),
    ]


def test_state_edits_become_update_turns_before_the_turn_they_preceded() -> None:
    graph = static_breakpoint.build(checkpointer=InMemorySaver())
    graph.invoke({"request": "r"}, CONFIG)
    graph.update_state(CONFIG, {"email": "Edited."}, as_node="draft_email")
    graph.invoke(None, CONFIG)
    case = case_from_thread(extract(graph), case_id="edited")
    assert case.turns == [
        InputTurn(input={"request": "r"}),
        UpdateTurn(update=StateUpdate(values={"email": "Edited."})),
        ContinueTurn.model_validate({"continue": True}),
    ]
    replay = static_breakpoint.build(checkpointer=InMemorySaver())
    play_case(replay, case, thread_id="replay")
    assert replay.get_state({"configurable": {"thread_id": "replay"}}).values["status"] == (
        "sent: Edited."
    )
    assert extract(replay, "replay").to_graph_trajectory().steps == [
        ["__start__", "draft_email", "__interrupt__"],
        ["send_email"],
    ]


def test_a_state_without_messages_gives_its_answer_key_and_no_tool_calls() -> None:
    saver = InMemorySaver()
    graph = SCENARIOS["flaky"].played(saver)
    answer = graph.get_state(CONFIG).values["answer"]
    assert answer == flaky.ANSWER
    case = case_from_thread(extract(graph), case_id="flaky")
    assert case.expected.output == answer
    assert case.expected.tool_calls is None


def test_a_rejected_call_is_expected_only_where_its_tool_ran() -> None:
    graph = SCENARIOS["hitl_agent"].played(InMemorySaver())
    messages = graph.get_state(CONFIG).values["messages"]
    ran = {m.tool_call_id for m in messages if isinstance(m, ToolMessage) and m.status != "error"}
    proposed = [c for m in messages for c in getattr(m, "tool_calls", [])]
    case = case_from_thread(extract(graph), case_id="hitl")
    assert len(proposed) > len(ran)  # the scenario rejects one send_email
    assert [(c.name, c.args) for c in case.expected.tool_calls or []] == [
        (c["name"], c["args"]) for c in proposed if c["id"] in ran
    ]
    assert case.expected.output == hitl_agent.ANSWER_2
