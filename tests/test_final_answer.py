"""final_answer: the answer a graph's final state gives, for any state a checkpoint holds."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from lg_eval._inputs import final_answer, state_messages

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


@given(st.dictionaries(st.sampled_from(["messages", "answer", "output", "x"]), JSON) | JSON)
def test_any_state_gives_a_string_or_none(state: Any) -> None:
    answer = final_answer(state)
    assert answer is None or isinstance(answer, str)


def test_the_last_ai_message_without_tool_calls_is_the_answer() -> None:
    messages = [
        HumanMessage("refund 42"),
        AIMessage("Looking.", tool_calls=[{"name": "lookup", "args": {}, "id": "c1"}]),
        ToolMessage("found", tool_call_id="c1"),
        AIMessage("Refunded."),
        HumanMessage("thanks"),
    ]
    assert final_answer({"messages": messages, "answer": "ignored"}) == "Refunded."


def test_without_messages_the_first_answer_key_that_holds_a_string() -> None:
    assert final_answer({"answer": 3, "output": "out", "result": "res"}) == "out"
    assert final_answer({"status": "sent"}) is None
    assert final_answer(None) is None


@given(st.dictionaries(st.sampled_from(["messages", "x"]), JSON) | JSON)
def test_state_messages_is_the_list_under_messages_or_none(state: Any) -> None:
    held = state.get("messages") if isinstance(state, dict) else None
    expected = held if isinstance(held, list) else None
    assert state_messages(state) == expected


def test_state_messages_reads_a_tuple_as_a_list_and_keeps_an_empty_one() -> None:
    message = HumanMessage("hi")
    assert state_messages({"messages": (message,)}) == [message]
    assert state_messages({"messages": []}) == []
    assert state_messages({"messages": "hi"}) is None
