"""The contract over the message and input helpers and the factories' options, fuzzed."""

from __future__ import annotations

import inspect
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lg_eval import Evaluator, messages
from lg_eval import _inputs as inputs
from lg_eval import evaluators as builtins
from lg_eval._feedback import Feedback
from lg_eval.evaluators import available_evaluators, get_evaluator
from lg_eval.messages import ReactTrace
from tests.contract.contract import check_evaluator, check_helper, fuzz
from tests.contract.strategies import (
    any_outputs,
    deep,
    json_ish,
    message,
)
from tests.contract.strategies import (
    messages as message_lists,
)

READERS = {
    "to_openai_messages": lambda v: messages.to_openai_messages(v, argument="outputs"),
    "tool_calls_from_messages": messages.tool_calls_from_messages,
    "tool_calls_from_openai": messages.tool_calls_from_openai,
    "react_steps_from_messages": messages.react_steps_from_messages,
    "message_text": messages.message_text,
    "parse_arguments": lambda v: messages.parse_arguments(v, "arguments"),
    "calls_arg": lambda v: inputs.calls_arg(v, "outputs"),
    "expected_calls_arg": lambda v: inputs.expected_calls_arg(v, "reference_outputs"),
    "text_arg": lambda v: inputs.text_arg(v, "outputs"),
    "graph_arg": lambda v: inputs.graph_arg(v, "outputs"),
    "graph_trajectory": lambda v: inputs.graph_trajectory(v),
    "any_trajectory": lambda v: inputs.any_trajectory(v),
    "select_field": lambda v: inputs.select_field(v, "messages", "outputs"),
    "lookup_hint": lambda v: inputs.lookup_hint(v, "output", "outputs"),
}


@fuzz(200)
@given(
    name=st.sampled_from(sorted(READERS)),
    value=st.one_of(any_outputs(), message(), st.lists(message(), max_size=3), deep()),
)
def test_every_reader_returns_or_raises_a_typed_error(name: str, value: Any) -> None:
    kind, result = check_helper(READERS[name], value)
    if kind == "ok" and name == "react_steps_from_messages":
        assert isinstance(result, ReactTrace)
    if kind == "ok" and name in ("tool_calls_from_messages", "calls_arg"):
        assert all(isinstance(c["name"], str) and c["name"] for c in result)
        assert all(isinstance(c["args"], dict) for c in result)
    if kind == "ok" and name == "to_openai_messages":
        assert all(isinstance(m, dict) for m in result)


@fuzz(60)
@given(value=json_ish())
def test_normalized_messages_read_again_unchanged(value: Any) -> None:
    kind, normalized = check_helper(messages.to_openai_messages, value)
    if kind == "ok":
        assert messages.to_openai_messages(normalized) == normalized
        check_helper(messages.tool_calls_from_openai, normalized)


def _factories() -> dict[str, Any]:
    return {
        name: getattr(builtins, name)
        for name in builtins.__all__
        if name.startswith("create_") and "async" not in name
    }


FACTORIES = _factories()


@pytest.mark.filterwarnings("ignore:create_tool_sequence_evaluator.*deprecated")
@fuzz(100)
@given(name=st.sampled_from(sorted(FACTORIES)), data=st.data())
def test_every_factory_refuses_bad_options_with_a_typed_error(
    name: str, data: st.DataObject
) -> None:
    factory = FACTORIES[name]
    parameters = inspect.signature(factory).parameters
    options = {
        option: data.draw(json_ish(6), label=option)
        for option, parameter in parameters.items()
        if parameter.kind is not parameter.VAR_KEYWORD
        and (parameter.default is parameter.empty or data.draw(st.booleans()))
    }
    kind, built = check_helper(factory, **options)
    if kind == "ok":
        assert isinstance(built, Evaluator)
        outputs = data.draw(message_lists(), label="outputs")
        check_evaluator(built, outputs=outputs, reference_outputs=data.draw(any_outputs()))


@fuzz(60)
@given(
    name=st.one_of(st.sampled_from(available_evaluators()), json_ish(3)),
    options=st.dictionaries(st.text(max_size=12), json_ish(3), max_size=2),
)
def test_get_evaluator_returns_an_evaluator_or_a_typed_error(
    name: Any, options: dict[str, Any]
) -> None:
    kind, built = check_helper(get_evaluator, name, **options)
    if kind == "ok":
        assert isinstance(built, Evaluator)


@fuzz(60)
@given(score=json_ish(2), comment=json_ish(2), metadata=json_ish(3))
def test_a_scorer_returning_any_dict_gives_valid_feedback_or_a_typed_error(
    score: Any, comment: Any, metadata: Any
) -> None:
    evaluator = Evaluator(
        "k", lambda **_: {"score": score, "comment": comment, "metadata": metadata}
    )
    check_evaluator(evaluator, builtin=False, outputs="run")
    assert Feedback  # the model the dict is validated into
