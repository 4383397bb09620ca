"""The one rule for reusing a recorded answer: the same node and the same question.

Payload shapes are langchain's ``HumanInTheLoopMiddleware`` requests (batched and
per-call, as ``human_in_the_loop.py`` builds them) and LangGraph's older
``HumanInterrupt``; every other payload is compared as JSON data.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from langgraph.checkpoint.sqlite import SqliteSaver

from graphs import hitl_agent
from lg_eval.play import (
    FromRecording,
    PendingInterrupt,
    QuestionChange,
    RecordedAnswer,
    Recording,
    describe_question,
    play_thread,
    question_key,
    same_question,
)

HITL = "HumanInTheLoopMiddleware.after_model"
APPROVE = {"decisions": [{"type": "approve"}]}
ASK_BOB = {"messages": [{"role": "user", "content": "Check my inbox and answer Bob.", "id": "h1"}]}


def ask(value: Any, path: str = "node") -> PendingInterrupt:
    return PendingInterrupt(id="0" * 32, path=path, value=value)


def batched(*calls: tuple[str, dict[str, Any]], description: str = "d") -> dict[str, Any]:
    requests = [{"name": n, "args": a, "description": f"{description} {n}"} for n, a in calls]
    configs = [{"action_name": n, "allowed_decisions": ["approve", "reject"]} for n, _ in calls]
    return {"action_requests": requests, "review_configs": configs}


def per_call(name: str, args: dict[str, Any], call_id: str = "call_1") -> dict[str, Any]:
    return {"type": "tool_approval", "tool_call_id": call_id, "name": name, "args": args,
            "description": f"Approve {name}?"}  # fmt: skip


def legacy(action: str, args: dict[str, Any], description: str = "d") -> dict[str, Any]:
    return {"action_request": {"action": action, "args": args},
            "config": {"allow_accept": True}, "description": description}  # fmt: skip


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=12,
)


@given(payload=JSON)
def test_every_payload_is_the_same_question_as_itself_whatever_its_key_order(payload: Any) -> None:
    def reordered(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: reordered(value[k]) for k in reversed(list(value))}
        if isinstance(value, list):
            return [reordered(item) for item in value]
        return value

    assert same_question(ask(payload), ask(reordered(payload)))


@given(a=JSON, b=JSON)
def test_payloads_are_the_same_question_exactly_when_equal_as_data(a: Any, b: Any) -> None:
    assert same_question(ask(a), ask(b)) == (question_key(a) == question_key(b))


@pytest.mark.parametrize(
    ("answered", "asked", "same"),
    [
        # batched: the calls, by tool name and arguments; descriptions and configs left out
        (
            batched(("book", {"f": "AF123"})),
            batched(("book", {"f": "AF123"}), description="x"),
            True,
        ),
        (batched(("book", {"f": "AF123"})), batched(("book", {"f": "BA456"})), False),
        (batched(("book", {"f": "AF123"})), batched(("book", {"f": "AF123", "seat": "2A"})), False),
        (batched(("book", {"f": "AF123"})), batched(("cancel", {"f": "AF123"})), False),
        (batched(("a", {}), ("b", {})), batched(("b", {}), ("a", {})), False),
        (batched(("a", {}), ("b", {})), batched(("a", {})), False),
        # per call: the model's call id is new on every run
        (per_call("book", {"f": "AF123"}), per_call("book", {"f": "AF123"}, "call_9"), True),
        (per_call("book", {"f": "AF123"}), per_call("book", {"f": "BA456"}), False),
        # LangGraph's HumanInterrupt, alone or in a list
        (legacy("book", {"f": "1"}), legacy("book", {"f": "1"}, description="y"), True),
        ([legacy("book", {"f": "1"})], [legacy("book", {"f": "1"}, description="y")], True),
        (legacy("book", {"f": "1"}), legacy("book", {"f": "2"}), False),
        # anything else: equal as data
        ({"question": "Refund 40?"}, {"question": "Refund 40?"}, True),
        ({"question": "Refund 40?"}, {"question": "Refund 400?"}, False),
        ("ok?", "ok?", True),
        ((1, 2), [1, 2], True),
    ],
)
def test_a_question_is_what_it_asks(answered: Any, asked: Any, same: bool) -> None:
    assert same_question(ask(answered), ask(asked)) is same


def test_the_same_payload_at_another_top_level_node_is_another_question() -> None:
    assert not same_question(ask("ok?", "review"), ask("ok?", "escalate"))
    assert same_question(ask("ok?", "research"), ask("ok?", "research:deep_dive:verify"))


def test_questions_are_described_by_their_calls_or_their_payload() -> None:
    two = batched(("book", {"f": "AF123"}), ("pay", {"eur": 10}))
    assert describe_question(two) == 'book({"f": "AF123"}); pay({"eur": 10})'
    assert describe_question({"question": "Refund 40?"}) == '{"question": "Refund 40?"}'
    assert describe_question("ok?") == "'ok?'"
    assert describe_question("x" * 200) == "'" + "x" * 116 + "..."


def test_a_recording_sets_aside_an_answer_given_to_another_question() -> None:
    asked = [
        PendingInterrupt(id="a" * 32, path="review", value="Refund 400?"),
        PendingInterrupt(id="b" * 32, path="pack", value="Pack?"),
    ]
    recording = Recording(
        answers={
            "review": deque([RecordedAnswer("yes", ask("Refund 40?", "review")), "no"]),
            "pack": deque(["boxed"]),
        }
    )
    taken = recording.take(asked)
    assert (taken.answers, taken.new) == ({"b" * 32: "boxed"}, [])
    assert taken.changed == [
        QuestionChange(node="review", answered="Refund 40?", asked="Refund 400?", answer="yes")
    ]
    assert list(recording.answers["review"]) == ["no"]  # the next answer waits its turn


def test_answers_without_a_question_are_taken_by_node_and_order() -> None:
    asked = [
        PendingInterrupt(id="a" * 32, path="ship", value="Ship?"),
        PendingInterrupt(id="b" * 32, path="pack:box", value="Pack?"),
        PendingInterrupt(id="c" * 32, path="label", value="Label?"),
    ]
    recording = Recording(
        answers={
            "ship": deque([RecordedAnswer("now"), "later"]),
            "pack": deque([RecordedAnswer("boxed", ask("Pack?", "pack"))]),
        }
    )
    taken = recording.take(asked)
    assert taken.answers == {"a" * 32: "now", "b" * 32: "boxed"}
    assert ([a.path for a in taken.new], taken.changed, recording.unused()) == (["label"], [], 1)


@pytest.fixture
def saver(tmp_path: Path) -> Iterator[SqliteSaver]:
    with SqliteSaver.from_conn_string(str(tmp_path / "threads.sqlite")) as s:
        yield s


def _bob_question(saver: SqliteSaver) -> Any:
    """The question the email agent asks after ASK_BOB, read from LangGraph itself."""
    graph = hitl_agent.build(checkpointer=saver)
    config: Any = {"configurable": {"thread_id": "probe"}}
    graph.invoke(ASK_BOB, config)
    (task,) = [t for t in graph.get_state(config).tasks if t.interrupts]
    return task.interrupts[0].value


def test_a_recorded_answer_to_the_question_asked_is_sent(saver: SqliteSaver) -> None:
    question = ask(_bob_question(saver), HITL)
    source = FromRecording(
        Recording({HITL: deque([RecordedAnswer(APPROVE, question)])}, deque([ASK_BOB]))
    )
    played = play_thread(hitl_agent.build(checkpointer=saver), source, thread_id="t")
    assert [(t.kind, t.sent) for t in played.turns] == [("input", ASK_BOB), ("resume", APPROVE)]
    assert (source.changed, source.reason, played.error) == ([], None, None)


def test_a_recorded_answer_to_another_question_stops_the_play_before_it(
    saver: SqliteSaver,
) -> None:
    bob = _bob_question(saver)
    other = {
        **bob,
        "action_requests": [{**bob["action_requests"][0], "args": hitl_agent.EMAIL_ALL}],
    }
    source = FromRecording(
        Recording({HITL: deque([RecordedAnswer(APPROVE, ask(other, HITL))])}, deque([ASK_BOB]))
    )
    played = play_thread(hitl_agent.build(checkpointer=saver), source, thread_id="t")
    assert [t.kind for t in played.turns] == ["input"]
    assert source.changed == [QuestionChange(node=HITL, answered=other, asked=bob, answer=APPROVE)]
    assert (source.unanswered, source.stopped_at_question) == ([], True)
    assert source.reason == (
        f"question changed at node {HITL!r}: the recorded answer was given to "
        'send_email({"body": "Lunch with Bob on Friday.", "subject": "Lunch", "to": '
        '"all@example.com"}); the graph now asks send_email({"body": "Friday works for me.", '
        '"subject": "Re: Lunch", "to": "bob@example.com"})'
    )
