"""Property tests: the turn validator accepts exactly one turn key, with one clear error."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter, ValidationError

from lg_eval.datasets import TURN_KEYS, ScriptTurn

TURN = TypeAdapter(ScriptTurn)
VALID_VALUE = {
    "input": {"x": 1},
    "resume": "yes",
    "resume_by_node": {"a:b": 1},
    "resume_fn": "examples.answers:weather_report",
    "continue": True,
    "update": {"values": {"x": 1}},
}
OTHER_KEYS = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=8).filter(
    lambda k: k not in TURN_KEYS
)


@settings(max_examples=150, deadline=500)
@given(
    keys=st.lists(st.sampled_from(TURN_KEYS), unique=True), extra=st.lists(OTHER_KEYS, max_size=2)
)
def test_exactly_one_turn_key_validates_and_anything_else_says_what_it_got(
    keys: list[str], extra: list[str]
) -> None:
    data: dict[str, Any] = {k: VALID_VALUE[k] for k in keys}
    data.update({k: 1 for k in extra})
    if len(keys) == 1 and not extra:
        assert TURN.validate_python(data).kind == keys[0]
        return
    with pytest.raises(ValidationError) as info:
        TURN.validate_python(data)
    errors = info.value.errors()
    if len(keys) == 1:  # the right key, plus unknown ones: the turn model names each
        assert sorted(e["loc"][-1] for e in errors) == sorted(set(extra))
        assert {e["type"] for e in errors} == {"extra_forbidden"}
        return
    (error,) = errors
    got = ", ".join(keys) if keys else "none"
    if not keys and extra:
        got += f"; unknown keys: {', '.join(dict.fromkeys(extra))}"
    assert error["msg"] == (
        "a turn needs exactly one of input, resume, resume_by_node, resume_fn, continue, "
        f"update (got {got})"
    )


@settings(max_examples=50, deadline=500)
@given(value=st.one_of(st.integers(), st.text(), st.lists(st.integers()), st.none()))
def test_a_turn_that_is_not_a_mapping_names_its_type(value: Any) -> None:
    with pytest.raises(ValidationError) as info:
        TURN.validate_python(value)
    assert info.value.errors()[0]["msg"] == (
        "a turn is a mapping with exactly one of input, resume, resume_by_node, resume_fn, "
        f"continue, update (got {type(value).__name__})"
    )


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"input": None}, "input: null would invoke(None)"),
        ({"resume": None}, "resume: null sends no answer"),
        ({"continue": False}, "Input should be True"),
        ({"resume_fn": "not a reference"}, "String should match pattern"),
        ({"resume_by_node": {}}, "at least 1 item"),
    ],
)
def test_turn_values_are_checked(data: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message.replace("(", r"\(").replace(")", r"\)")):
        TURN.validate_python(data)
