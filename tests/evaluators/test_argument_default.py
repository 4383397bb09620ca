"""One argument-matching default: the expected arguments must be present and equal (issue 30)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from lg_eval.evaluators import create_tool_sequence_evaluator
from lg_eval.testing import assert_tool_calls

REFUND = {"name": "refund", "args": {"order_id": "42"}}


def refunded(**args: object) -> list[object]:
    return [
        HumanMessage("Refund order 42"),
        AIMessage("", tool_calls=[{"name": "refund", "args": args, "id": "call-1"}]),
        ToolMessage("refunded", tool_call_id="call-1", name="refund"),
        AIMessage("Done."),
    ]


def test_partial_arguments_pass_in_assert_tool_calls_and_the_evaluator() -> None:
    messages = refunded(order_id="42", amount=30.0)
    assert_tool_calls(messages, [REFUND])
    assert create_tool_sequence_evaluator([REFUND])(outputs=messages)["score"] is True


def test_exact_arguments_are_an_option_in_both() -> None:
    messages = refunded(order_id="42", amount=30.0)
    with pytest.raises(AssertionError) as failure:
        assert_tool_calls(messages, [REFUND], args="exact")
    assert str(failure.value) == (
        "tool calls do not match (order=exact, args=exact, calls=executed)\n"
        "  !! call 1: expected refund(order_id='42')\n"
        "             actual   refund(order_id='42', amount=30.0)"
    )
    exact = create_tool_sequence_evaluator([REFUND], tool_args_match_mode="exact")
    assert exact(outputs=messages)["score"] is False


def test_a_differing_expected_argument_fails_by_default() -> None:
    messages = refunded(order_id="43", amount=30.0)
    with pytest.raises(AssertionError, match=r"expected refund\(order_id='42'\)"):
        assert_tool_calls(messages, [REFUND])
    result = create_tool_sequence_evaluator([REFUND])(outputs=messages)
    assert (result["score"], result["comment"]) == (
        False,
        'Call 1: expected refund(order_id="42"), got refund(order_id="43", amount=30.0). '
        'Missing 1 expected call: refund(order_id="42"). '
        'Unexpected 1 call: refund(order_id="43", amount=30.0).',
    )


values = st.one_of(st.integers(), st.text(max_size=5), st.booleans())
arguments = st.dictionaries(st.text(min_size=1, max_size=5), values, max_size=4)


@settings(max_examples=80, deadline=None)
@given(arguments, arguments)
def test_assert_and_evaluator_agree_on_every_argument_pair(made: dict, wanted: dict) -> None:
    messages = refunded(**made)
    expected = [{"name": "refund", "args": wanted}]
    score = create_tool_sequence_evaluator(expected)(outputs=messages)["score"]
    assert score is all(key in made and made[key] == value for key, value in wanted.items())
    try:
        assert_tool_calls(messages, expected)
    except AssertionError:
        assert score is False
    else:
        assert score is True
