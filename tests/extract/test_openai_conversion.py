"""``to_openai_messages`` converts a list of LangChain messages exactly as one at a time."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from lg_eval.errors import TrajectoryFormatError
from lg_eval.messages import to_openai_messages

CALL = {"name": "send_email", "args": {"to": "bob@example.com"}, "id": "call_1"}
USAGE = {"input_tokens": 3, "output_tokens": 4, "total_tokens": 7}


def thread_messages() -> list[object]:
    return [
        HumanMessage("Answer Bob", id="h1"),
        AIMessage("", tool_calls=[CALL], id="a1", usage_metadata=USAGE),
        ToolMessage("sent", tool_call_id="call_1", name="send_email", id="t1"),
        AIMessage("Done.", id="a2"),
    ]


def test_text_messages_convert_together_as_one_by_one() -> None:
    messages = thread_messages()
    one_by_one = [to_openai_messages(message)[0] for message in messages]
    assert to_openai_messages(messages) == one_by_one
    assert one_by_one[1]["usage_metadata"] == USAGE
    assert one_by_one[3] == {"role": "assistant", "content": "Done.", "id": "a2"}


def test_a_message_with_tool_result_blocks_converts_as_one_by_one() -> None:
    # LangChain turns such a message into two (its text, then a tool message): one at a
    # time, each message gives the first of its conversions
    blocks: list[str | dict[Any, Any]] = [
        {"type": "text", "text": "Here:"},
        {"type": "tool_result", "tool_use_id": "call_1", "content": "sent"},
    ]
    messages = [*thread_messages(), HumanMessage(blocks, id="h2")]
    one_by_one = [to_openai_messages(message)[0] for message in messages]
    assert to_openai_messages(messages) == one_by_one
    assert one_by_one[4]["role"] == "user"


def test_a_message_that_cannot_convert_is_named_by_its_index() -> None:
    bad = AIMessage("", tool_calls=[{**CALL, "args": {"to": {1, 2}}}], id="a1")
    messages = [HumanMessage("Answer Bob"), bad, AIMessage("Done.")]
    with pytest.raises(TrajectoryFormatError, match=r"outputs\[1\] could not be read"):
        to_openai_messages(messages)
