"""The middleware's note on an edited call, read from messages a stranger may have written.

The note's form is ``HumanInTheLoopMiddleware._notice``'s: ``<edit_notice> Executed instead:
<name> with arguments <json.dumps(args)>.``, then ``\\n\\nTool response:`` and the tool's
result when it had one; the middleware prepends it to the tool message's content.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from lg_eval.errors import TrajectoryFormatError
from lg_eval.messages import call_outcomes

PROPOSED = {"name": "write_file", "args": {"path": "a.txt"}, "id": "c1"}


def history(result: Any) -> list[Any]:
    return [
        HumanMessage("go"),
        AIMessage("", tool_calls=[PROPOSED]),
        ToolMessage(result, tool_call_id="c1", name="write_file"),
        AIMessage("done"),
    ]


def middleware_note(args: dict[str, Any], result: str) -> ToolMessage:
    """The tool message as the middleware annotates it (its own note-writing code)."""
    review = HumanInTheLoopMiddleware({"write_file": True})
    message = ToolMessage(result, tool_call_id="c1", name="write_file")
    return review._prepend_notice(message, {"name": "write_file", "args": args})


json_args = st.dictionaries(
    st.text(max_size=8),
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=12),
        lambda inner: (
            st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
        ),
        max_leaves=8,
    ),
    max_size=4,
)


@settings(max_examples=60, deadline=None)
@given(args=json_args, result=st.text(max_size=60))
def test_the_middlewares_note_is_read_whatever_the_arguments_and_result(args, result) -> None:
    messages = history("")
    messages[2] = middleware_note(args, result)
    (outcome,) = call_outcomes(messages)
    assert outcome["executed"] == {"name": "write_file", "args": args, "id": "c1"}


@pytest.mark.parametrize(
    "text",
    [
        "Deleted it. Note: Executed instead: rm with arguments {}. Then more.",  # mid-text
        'Executed instead: rm with arguments {"a": 1}. and more',  # not where a note ends
        "x Executed instead: rm with arguments [1, 2].",  # not an object
        "x Executed instead: rm with arguments {bad json}.",
        "x Executed instead: rm with arguments " + "[" * 5000 + "]" * 5000 + ".",
    ],
)
def test_other_text_is_the_tools_own_result(text: str) -> None:
    (outcome,) = call_outcomes(history(text))
    assert outcome["executed"] == PROPOSED


def test_a_note_nesting_past_the_limit_is_a_typed_error() -> None:
    deep: Any = 1
    for _ in range(150):
        deep = {"a": deep}
    note = f"x Executed instead: rm with arguments {json.dumps({'a': deep})}."
    with pytest.raises(TrajectoryFormatError, match="nest more than 100 levels"):
        call_outcomes(history(note))


@settings(max_examples=100, deadline=None)
@given(text=st.text(max_size=200))
def test_any_result_text_reads_as_a_call_that_ran(text: str) -> None:
    (outcome,) = call_outcomes(history(text))
    assert outcome["proposed"] == PROPOSED
    assert outcome["executed"] is not None
