"""One turn loop, two answer sources: a recording of answers by asking node plays the same
thread as the script of the same answers, and both equal LangGraph driven by hand.

Interrupt ids are LangGraph's own per thread (derived from the asking task, whose id
depends on the checkpoint), so turn records are compared with each id replaced by the
path of the node it names.
"""

from __future__ import annotations

import warnings
from collections import deque
from collections.abc import Iterator
from operator import add
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pytest
from hypothesis import given
from hypothesis import strategies as st
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt

from graphs import approval, flaky, hitl_agent, research
from graphs import breakpoint as static_breakpoint
from graphs.scenarios import Turn, adrive, drive
from lg_eval import extract_thread
from lg_eval.datasets import Case
from lg_eval.errors import InvalidOptionError
from lg_eval.play import (
    MAX_CALLS,
    FromRecording,
    PendingInterrupt,
    PlayedCase,
    Recording,
    aplay_case,
    aplay_thread,
    play_case,
    play_thread,
)

HITL = "HumanInTheLoopMiddleware.after_model"
ASK_BOB = {"messages": [{"role": "user", "content": "Check my inbox and answer Bob.", "id": "h1"}]}
ASK_ALL = {"messages": [{"role": "user", "content": "Also tell the whole company.", "id": "h2"}]}
APPROVE = {"decisions": [{"type": "approve"}]}
REJECT = {"decisions": [{"type": "reject", "message": "Do not email the whole company."}]}
SOURCES = ["https://example.org/x/1"]


@pytest.fixture
def path(tmp_path: Path) -> str:
    return str(tmp_path / "threads.sqlite")


@pytest.fixture
def saver(path: str) -> Iterator[SqliteSaver]:
    with SqliteSaver.from_conn_string(path) as s:
        yield s


def case(*turns: dict[str, Any]) -> Case:
    return Case.model_validate({"id": "c", "turns": list(turns)})


def recording(answers: dict[str, list[Any]], inputs: list[Any]) -> Recording:
    return Recording({node: deque(given) for node, given in answers.items()}, deque(inputs))


def trajectory(graph: Any, thread_id: str) -> dict[str, Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        thread = extract_thread(graph, {"configurable": {"thread_id": thread_id}})
    turns = [(t.kind, t.input, t.resume_by_node, t.status, t.next_nodes) for t in thread.turns]
    return {"graph": thread.to_graph_trajectory().model_dump(), "turns": turns}


def records(played: PlayedCase) -> list[tuple[Any, ...]]:
    """``played.turns`` with every interrupt id replaced by the path of its node."""
    paths: dict[str, str] = {}
    rows = []
    for turn in played.turns:
        sent = turn.sent
        if isinstance(sent, dict) and sent and set(sent) <= set(paths):
            sent = {paths[key]: value for key, value in sent.items()}
        paths = {ask.id: ask.path for ask in turn.asked}
        asked = [(ask.path, ask.value) for ask in turn.asked]
        rows.append((turn.index, turn.kind, sent, asked, turn.next_nodes, turn.error))
    return rows


HITL_SCRIPT = case({"input": ASK_BOB}, {"resume": APPROVE}, {"input": ASK_ALL}, {"resume": REJECT})
HITL_RECORDING = {HITL: [APPROVE, REJECT]}, [ASK_BOB, ASK_ALL]
HITL_BY_HAND = [
    Turn(ASK_BOB),
    Turn(Command(resume=APPROVE)),
    Turn(ASK_ALL),
    Turn(Command(resume=REJECT)),
]


def test_a_recording_plays_the_thread_its_script_plays(saver: SqliteSaver) -> None:
    scripted = play_case(hitl_agent.build(checkpointer=saver), HITL_SCRIPT, thread_id="script")
    recorded = play_thread(
        hitl_agent.build(checkpointer=saver), FromRecording(recording(*HITL_RECORDING)),
        thread_id="recording",
    )  # fmt: skip
    drive(hitl_agent.build(checkpointer=saver), "by-hand", HITL_BY_HAND)
    reader = hitl_agent.build(checkpointer=saver)
    assert trajectory(reader, "recording") == trajectory(reader, "script")
    assert trajectory(reader, "script") == trajectory(reader, "by-hand")
    assert records(recorded) == records(scripted)
    assert [(t.kind, t.sent) for t in recorded.turns] == [
        ("input", ASK_BOB),
        ("resume", APPROVE),
        ("input", ASK_ALL),
        ("resume", REJECT),
    ]
    assert [[a.path for a in t.asked] for t in recorded.turns] == [[HITL], [], [HITL], []]
    assert (recorded.error, scripted.error) == (None, None)


async def test_the_async_recording_plays_the_thread_its_async_script_plays(path: str) -> None:
    async with AsyncSqliteSaver.from_conn_string(path) as saver:
        scripted = await aplay_case(
            hitl_agent.build(checkpointer=saver), HITL_SCRIPT, thread_id="script"
        )
        recorded = await aplay_thread(
            hitl_agent.build(checkpointer=saver), FromRecording(recording(*HITL_RECORDING)),
            thread_id="recording",
        )  # fmt: skip
        await adrive(hitl_agent.build(checkpointer=saver), "by-hand", HITL_BY_HAND)
    with SqliteSaver.from_conn_string(path) as reader_saver:
        reader = hitl_agent.build(checkpointer=reader_saver)
        assert trajectory(reader, "recording") == trajectory(reader, "script")
        assert trajectory(reader, "script") == trajectory(reader, "by-hand")
    assert records(recorded) == records(scripted)


def test_parallel_interrupts_get_the_answers_recorded_for_their_nodes(saver: SqliteSaver) -> None:
    legal, finance = {"approved": True, "comment": "ok"}, {"approved": False, "comment": "no"}
    scripted = play_case(
        approval.build(checkpointer=saver),
        case(
            {"input": {"request": "r"}},
            {"resume_by_node": {"legal_review": legal, "finance_review": finance}},
        ),
        thread_id="script",
    )
    answers = {"legal_review": [legal], "finance_review": [finance]}
    recorded = play_thread(
        approval.build(checkpointer=saver), FromRecording(recording(answers, [{"request": "r"}])),
        thread_id="recording",
    )  # fmt: skip
    reader = approval.build(checkpointer=saver)
    assert trajectory(reader, "recording") == trajectory(reader, "script")
    # the same turns; the script names its resume by node, the recording plain
    assert [r[2:] for r in records(recorded)] == [r[2:] for r in records(scripted)]
    assert records(recorded)[1][2] == {"legal_review": legal, "finance_review": finance}
    values = reader.get_state({"configurable": {"thread_id": "recording"}}).values
    assert (values["legal"], values["finance"], values["decision"]) == (legal, finance, "rejected")


def test_subgraph_questions_take_the_answers_of_their_top_level_node(saver: SqliteSaver) -> None:
    scripted = play_case(
        research.build(checkpointer=saver),
        case({"input": {"topic": "x", "deep": True}}, {"resume": SOURCES}, {"resume": "holds"}),
        thread_id="script",
    )
    recorded = play_thread(
        research.build(checkpointer=saver),
        FromRecording(
            recording({"researcher": [SOURCES, "holds"]}, [{"topic": "x", "deep": True}])
        ),
        thread_id="recording",
    )
    reader = research.build(checkpointer=saver)
    assert trajectory(reader, "recording") == trajectory(reader, "script")
    assert records(recorded) == records(scripted)
    assert [[a.path for a in t.asked] for t in recorded.turns] == [
        ["researcher:approve_sources"],
        ["researcher:deep_dive:verify"],
        [],
    ]


def test_a_question_the_recording_never_answered_stops_the_play(saver: SqliteSaver) -> None:
    source = FromRecording(recording({HITL: [APPROVE]}, [ASK_BOB, ASK_ALL]))
    played = play_thread(hitl_agent.build(checkpointer=saver), source, thread_id="t")
    assert [t.kind for t in played.turns] == ["input", "resume", "input"]
    assert [(a.path, a.value["action_requests"][0]["args"]) for a in source.unanswered] == [
        (HITL, hitl_agent.EMAIL_ALL)
    ]
    assert source.reason is not None and source.reason.startswith("the graph asks {")
    assert source.reason.endswith(f"at node {HITL!r}, which the recording never answered")
    assert (played.error, source.recording.unused()) == (None, 0)


def test_the_reviewer_answers_what_the_recording_never_did(saver: SqliteSaver) -> None:
    seen: list[list[PendingInterrupt]] = []

    def reviewer(pending: list[PendingInterrupt]) -> Any:
        seen.append(pending)
        return REJECT

    source = FromRecording(
        recording({HITL: [APPROVE]}, [ASK_BOB, ASK_ALL]), on_new_question="reviewer",
        reviewer=reviewer,
    )  # fmt: skip
    played = play_thread(hitl_agent.build(checkpointer=saver), source, thread_id="recording")
    play_case(hitl_agent.build(checkpointer=saver), HITL_SCRIPT, thread_id="script")
    reader = hitl_agent.build(checkpointer=saver)
    assert trajectory(reader, "recording") == trajectory(reader, "script")
    assert ([len(p) for p in seen], source.reviewer_answers, source.reason) == ([1], 1, None)
    assert played.turns[-1].sent == REJECT


def test_a_breakpoint_stops_the_play_where_the_graph_paused(saver: SqliteSaver) -> None:
    source = FromRecording(recording({}, [{"request": "Tell the team."}]))
    played = play_thread(static_breakpoint.build(checkpointer=saver), source, thread_id="t")
    assert [(t.kind, t.next_nodes) for t in played.turns] == [("input", ["send_email"])]
    assert (source.paused, source.reason) == (
        ["send_email"],
        "the graph is paused before 'send_email'",
    )


def test_a_turn_that_raises_ends_the_play_with_its_error(saver: SqliteSaver) -> None:
    source = FromRecording(recording({}, [{"query": "LangGraph  Checkpointers"}, {"query": "x"}]))
    played = play_thread(flaky.build(checkpointer=saver), source, thread_id="t")
    error = "FlakyServiceError: search service unavailable (attempt 1)"
    assert [(t.kind, t.next_nodes, t.error) for t in played.turns] == [("input", ["fetch"], error)]
    assert (played.error, source.reason, source.recording.unused()) == (error, None, 1)


class _Log(TypedDict, total=False):
    log: Annotated[list[str], add]


def _asks_until_stop(state: _Log) -> dict[str, Any]:
    return {"log": [interrupt("Again?")]}


def _build_asking_loop(saver: SqliteSaver) -> Any:
    """``ask`` asks, and runs again until its answer is ``stop``."""
    builder: StateGraph[Any] = StateGraph(_Log)
    builder.add_node("ask", _asks_until_stop)
    builder.add_edge(START, "ask")
    builder.add_conditional_edges("ask", lambda s: END if s["log"][-1] == "stop" else "ask")
    return builder.compile(checkpointer=saver)


def test_a_graph_that_asks_forever_stops_after_max_calls(saver: SqliteSaver) -> None:
    source = FromRecording(recording({"ask": ["go"] * 10}, [{"log": []}]), max_calls=4)
    played = play_thread(_build_asking_loop(saver), source, thread_id="t")
    assert [t.kind for t in played.turns] == ["input", "resume", "resume", "resume"]
    assert (source.over_limit, source.reason) == (True, "more than 4 graph calls")
    # the answer for a fifth call was taken before the limit stopped it, as replay counts
    assert source.recording.unused() == 10 - 4
    assert MAX_CALLS == 200


def test_a_recording_that_ends_with_stop_finishes_the_loop(saver: SqliteSaver) -> None:
    source = FromRecording(recording({"ask": ["go", "go", "stop"]}, [{"log": []}]))
    graph = _build_asking_loop(saver)
    played = play_thread(graph, source, thread_id="t")
    assert [t.kind for t in played.turns] == ["input", "resume", "resume", "resume"]
    assert graph.get_state({"configurable": {"thread_id": "t"}}).values == {
        "log": ["go", "go", "stop"]
    }
    assert (source.reason, played.error) == (None, None)


@given(max_calls=st.integers(max_value=0) | st.booleans() | st.floats() | st.text(max_size=3))
def test_max_calls_must_be_a_whole_number_of_at_least_one(max_calls: Any) -> None:
    refused = (
        r"^FromRecording max_calls=.*: input should be (a valid integer|greater than or equal)"
    )
    with pytest.raises(InvalidOptionError, match=refused):
        FromRecording(Recording(), max_calls=max_calls)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            {"opening": "resume"},
            "FromRecording opening='resume': input should be 'continue' or 'input'.",
        ),
        (
            {"on_new_question": "ask"},
            "FromRecording on_new_question='ask': input should be 'stop' or 'reviewer'.",
        ),
        (
            {"on_new_question": "reviewer"},
            "on_new_question='reviewer' needs reviewer= (a SimulatedReviewer, or a callable "
            "taking the pending interrupts).",
        ),
    ],
)
def test_a_recording_source_names_the_option_it_refuses(
    options: dict[str, Any], message: str
) -> None:
    with pytest.raises(InvalidOptionError) as info:
        FromRecording(Recording(), **options)
    assert str(info.value) == message


def test_a_recording_must_be_a_recording() -> None:
    with pytest.raises(InvalidOptionError) as info:
        FromRecording({"ask": ["yes"]})  # type: ignore[arg-type]
    assert str(info.value) == (
        "FromRecording recording={'ask': ['yes']}: use a lg_eval.play.Recording (answers per "
        "node, inputs)."
    )


def test_a_script_must_be_given_a_case(saver: SqliteSaver) -> None:
    with pytest.raises(InvalidOptionError, match=r"^case: a lg_eval\.datasets\.Case .*not dict\.$"):
        play_case(
            hitl_agent.build(checkpointer=saver),
            {"id": "c", "turns": [{"input": ASK_BOB}]},  # type: ignore[arg-type]
            thread_id="t",
        )


def test_a_reviewer_answers_every_question_of_a_recording_of_inputs_alone(
    saver: SqliteSaver,
) -> None:
    def reviewer(pending: list[PendingInterrupt]) -> Any:
        (ask,) = pending
        return (
            REJECT if ask.value["action_requests"][0]["args"] == hitl_agent.EMAIL_ALL else APPROVE
        )

    scripted = play_case(
        hitl_agent.build(checkpointer=saver),
        case(
            {"input": ASK_BOB},
            {"resume": {"reviewer": True}},
            {"input": ASK_ALL},
            {"resume": {"reviewer": True}},
        ),
        thread_id="script",
        reviewer=reviewer,
    )
    source = FromRecording(
        recording({}, [ASK_BOB, ASK_ALL]), on_new_question="reviewer", reviewer=reviewer
    )
    recorded = play_thread(hitl_agent.build(checkpointer=saver), source, thread_id="recording")
    play_case(hitl_agent.build(checkpointer=saver), HITL_SCRIPT, thread_id="fixed")
    reader = hitl_agent.build(checkpointer=saver)
    assert trajectory(reader, "recording") == trajectory(reader, "script")
    assert trajectory(reader, "script") == trajectory(reader, "fixed")
    assert records(recorded) == records(scripted)
    assert source.reviewer_answers == 2
