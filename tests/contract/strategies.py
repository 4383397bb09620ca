"""Hostile inputs for the contract tests: JSON-ish values, malformed messages, deep nesting.

Every strategy here produces what a user might pass by mistake (or a fuzzer on
purpose): wrong field types, bytes, NaN and infinities, huge and tiny numbers,
empty strings, deep nesting. The contract tests feed them to every public
evaluator and helper.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=8),
    st.binary(max_size=6),
    st.sampled_from(["", "search", "answer", "{}", '{"a": 1}', "[1]", "NaN", "\udcff"]),
)

KEYS = [
    "role",
    "type",
    "content",
    "tool_calls",
    "function",
    "name",
    "args",
    "arguments",
    "id",
    "tool_call_id",
    "usage_metadata",
    "usage",
    "response_metadata",
    "total_tokens",
    "input_tokens",
    "messages",
    "outputs",
    "steps",
    "turns",
    "results",
    "inputs",
    "text",
    "answer",
    "output",
    "keywords",
    "expected_calls",
]

keys = st.one_of(st.sampled_from(KEYS), st.text(max_size=5))

garbage = st.one_of(
    st.none(),
    st.booleans(),
    st.text(max_size=4),
    st.floats(),
    st.integers(-5, 5),
    st.lists(st.integers(), max_size=2),
    st.just(object()),
)
"""A value of any kind an option might be given by mistake (or by its contract)."""


def json_ish(max_leaves: int = 12) -> st.SearchStrategy[Any]:
    """Nested lists, tuples and dicts of hostile scalars."""
    return st.recursive(
        scalars,
        lambda children: st.one_of(
            st.lists(children, max_size=4),
            st.tuples(children, children),
            st.dictionaries(keys, children, max_size=4),
        ),
        max_leaves=max_leaves,
    )


ROLES = ["user", "assistant", "ai", "human", "tool", "system", "function", "developer", "x", ""]


@st.composite
def tool_call(draw: st.DrawFn) -> Any:
    """An OpenAI- or LangChain-style tool call, its fields sometimes of the wrong type."""
    value = json_ish(4)
    if draw(st.booleans()):
        function = draw(
            st.fixed_dictionaries(
                {},
                optional={
                    "name": st.one_of(st.sampled_from(["search", "answer", ""]), value),
                    "arguments": st.one_of(
                        st.sampled_from(["", "{}", '{"q": 1}', "[1]", "{", '{"a": NaN}']),
                        st.binary(max_size=4),
                        value,
                    ),
                },
            )
        )
        call: dict[str, Any] = {"type": "function", "function": function}
    else:
        call = draw(
            st.fixed_dictionaries(
                {},
                optional={
                    "name": st.one_of(st.sampled_from(["search", "answer", ""]), value),
                    "args": st.one_of(st.dictionaries(st.text(max_size=3), value), value),
                },
            )
        )
    if draw(st.booleans()):
        call["id"] = draw(st.one_of(st.text(max_size=3), value))
    return call if draw(st.integers(0, 9)) else draw(value)


@st.composite
def message(draw: st.DrawFn) -> Any:
    """A message dict with plausible keys and values of any type, or a stray value."""
    value = json_ish(4)
    fields: dict[str, Any] = {}
    fields["role" if draw(st.booleans()) else "type"] = draw(
        st.one_of(st.sampled_from(ROLES), value)
    )
    if draw(st.booleans()):
        fields["content"] = draw(
            st.one_of(
                st.text(max_size=10),
                st.lists(
                    st.one_of(st.dictionaries(st.sampled_from(["type", "text"]), value), value),
                    max_size=3,
                ),
                value,
            )
        )
    if draw(st.booleans()):
        fields["tool_calls"] = draw(st.one_of(st.lists(tool_call(), max_size=3), value))
    if draw(st.booleans()):
        usage = st.dictionaries(
            st.sampled_from(["total_tokens", "input_tokens", "output_tokens", "prompt_tokens"]),
            value,
            max_size=3,
        )
        fields[draw(st.sampled_from(["usage_metadata", "usage", "response_metadata"]))] = draw(
            st.one_of(usage, st.fixed_dictionaries({"token_usage": usage}), value)
        )
    for extra in ("id", "tool_call_id", "name"):
        if draw(st.integers(0, 3)) == 0:
            fields[extra] = draw(value)
    return fields if draw(st.integers(0, 9)) else draw(value)


def messages() -> st.SearchStrategy[Any]:
    """Message lists, state dicts holding them, single messages, or anything else."""
    listed = st.lists(message(), max_size=5)
    return st.one_of(
        listed,
        st.fixed_dictionaries({"messages": listed}),
        message(),
        st.lists(st.one_of(st.sampled_from(["search", "answer", ""]), tool_call()), max_size=4),
        json_ish(),
    )


def graphs() -> st.SearchStrategy[Any]:
    """Graph trajectories, well-formed or not."""
    names = st.one_of(st.sampled_from(["a", "b", "__start__", ""]), scalars)
    steps = st.lists(st.one_of(st.lists(names, max_size=4), names), max_size=3)
    return st.one_of(
        st.fixed_dictionaries(
            {"steps": steps}, optional={"inputs": json_ish(3), "results": json_ish(3)}
        ),
        steps,
        st.fixed_dictionaries({"outputs": st.fixed_dictionaries({"steps": steps})}),
        st.fixed_dictionaries({"turns": json_ish(4)}),
        json_ish(),
    )


def answers() -> st.SearchStrategy[Any]:
    """Final answers: text, JSON text, structured values, messages, or anything else."""
    return st.one_of(
        st.text(max_size=20),
        st.sampled_from(
            ['{"a": NaN}', "Infinity", "[1, 2]", '```json\n{"a": 1}\n```', "-Infinity"]
        ),
        st.lists(st.text(max_size=5), max_size=3),
        st.fixed_dictionaries({"answer": json_ish(3)}),
        messages(),
        json_ish(),
    )


def any_outputs() -> st.SearchStrategy[Any]:
    """Anything an evaluator's outputs or reference_outputs may be given."""
    return st.one_of(messages(), graphs(), answers())


def nested(depth: int, leaf: Any = "x") -> Any:
    """``leaf`` inside ``depth`` lists."""
    value = leaf
    for _ in range(depth):
        value = [value]
    return value


def nested_dict(depth: int, leaf: Any = 1) -> Any:
    """``leaf`` inside ``depth`` dicts under key ``"a"``."""
    value = leaf
    for _ in range(depth):
        value = {"a": value}
    return value


@st.composite
def deep(draw: st.DrawFn) -> Any:
    """A value nested hundreds to thousands of levels deep, placed where readers look."""
    depth = draw(st.integers(150, 3000))
    leaf = draw(json_ish(3))
    value = nested(depth, leaf) if draw(st.booleans()) else nested_dict(depth, leaf)
    place = draw(st.sampled_from(["bare", "args", "arguments", "content", "steps", "answer"]))
    if place == "args":
        return [{"name": "search", "args": {"q": value}}]
    if place == "arguments":
        call = {"id": "1", "function": {"name": "search", "arguments": {"q": value}}}
        return [{"role": "assistant", "content": "", "tool_calls": [call]}]
    if place == "content":
        return [{"role": "assistant", "content": value}]
    if place == "steps":
        return {"steps": value}
    if place == "answer":
        return {"answer": value}
    return value
