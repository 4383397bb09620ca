"""create_tool_sequence_evaluator: a list of expected calls, five modes, partial args."""

from __future__ import annotations

import pytest

from lg_eval.errors import InvalidOptionError, TrajectoryFormatError
from lg_eval.evaluators import create_tool_sequence_evaluator

from .builders import call, run

ACTUAL = [
    {"name": "search", "args": {"q": "bitcoin", "limit": 3}},
    {"name": "log", "args": {}},
    {"name": "calc", "args": {"expr": "5000 / 42000"}},
]
EXPECTED = [{"name": "search", "args": {"q": "bitcoin"}}, "calc"]


def check(mode, outputs=ACTUAL, expected=EXPECTED, **options):
    return create_tool_sequence_evaluator(expected, mode=mode, **options)(outputs=outputs)


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("strict", False),
        ("in_order", True),
        ("unordered", False),
        ("subset", False),
        ("superset", True),
    ],
)
def test_modes_with_an_extra_call(mode, expected):
    result = check(mode)
    assert result["key"] == f"tool_sequence_{mode}_match"
    assert result["score"] is expected


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("strict", True),
        ("in_order", True),
        ("unordered", True),
        ("subset", True),
        ("superset", True),
    ],
)
def test_modes_without_the_extra_call(mode, expected):
    assert check(mode, [ACTUAL[0], ACTUAL[2]])["score"] is expected


def test_in_order_fails_when_order_is_reversed_but_superset_passes():
    reversed_calls = list(reversed(ACTUAL))
    result = check("in_order", reversed_calls)
    assert result["score"] is False
    assert result["comment"].startswith("Expected call 2 (calc(...)) was not made after")
    assert check("superset", reversed_calls)["score"] is True


def test_subset_passes_when_calls_are_missing():
    assert check("subset", [ACTUAL[2]])["score"] is True
    assert check("superset", [ACTUAL[2]])["score"] is False


def test_partial_args_by_default_and_exact_on_request():
    assert check("superset")["score"] is True
    assert check("superset", args_match_mode="exact")["score"] is False


def test_a_name_alone_accepts_any_arguments_even_in_exact_mode():
    result = check(
        "superset",
        expected=["calc", {"name": "search", "args": {"q": "bitcoin", "limit": 3}}],
        args_match_mode="exact",
    )
    assert result["score"] is True


def test_a_call_expected_twice_must_be_made_twice():
    result = check("superset", expected=["calc", "calc"])
    assert result["score"] is False
    assert result["comment"] == "Missing 1 expected call: calc(...)."


def test_strict_comment_points_at_the_first_difference():
    result = check("strict")
    assert result["comment"] == ("Call 2: expected calc(...), got log(). Unexpected 1 call: log().")
    assert result["metadata"]["first_difference"] == 1


def test_expected_from_reference_outputs_in_several_shapes():
    evaluator = create_tool_sequence_evaluator(mode="superset")
    for reference in (
        EXPECTED,
        {"tool_calls": EXPECTED},
        run(call("search", q="bitcoin", limit=3)),
    ):
        assert evaluator(outputs=ACTUAL, reference_outputs=reference)["score"] is True


def test_messages_are_accepted_as_outputs():
    outputs = run(call("search", q="bitcoin", limit=3), call("calc", expr="1"))
    assert check("strict", outputs)["score"] is True


def test_empty_expectations_and_empty_run():
    assert check("strict", [], [])["score"] is True
    assert check("superset", ACTUAL, [])["score"] is True
    assert check("unordered", ACTUAL, [])["score"] is False


def test_bad_options_fail_at_creation():
    with pytest.raises(InvalidOptionError, match="strict, in_order, unordered, subset, superset"):
        create_tool_sequence_evaluator(EXPECTED, mode="any")  # type: ignore[arg-type]
    with pytest.raises(InvalidOptionError, match="args_match_mode='close'"):
        create_tool_sequence_evaluator(EXPECTED, args_match_mode="close")  # type: ignore[arg-type]
    with pytest.raises(TrajectoryFormatError, match=r"expected\[0\] has no tool name"):
        create_tool_sequence_evaluator([{"args": {}}])


def test_missing_reference_is_an_error():
    with pytest.raises(TrajectoryFormatError, match="needs reference_outputs"):
        create_tool_sequence_evaluator()(outputs=ACTUAL)


async def test_async_twin():
    result = await create_tool_sequence_evaluator(EXPECTED, mode="in_order").as_async()(
        outputs=ACTUAL
    )
    assert result["score"] is True
