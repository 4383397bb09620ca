"""create_tool_sequence_evaluator: a list of expected calls, five modes, partial args."""

from __future__ import annotations

import pytest

from lg_eval.errors import InvalidOptionError, TrajectoryFormatError
from lg_eval.evaluators import create_tool_sequence_evaluator

from .builders import call, run


def names(*tools):
    return [{"name": t, "args": {}} for t in tools]


ACTUAL = [
    {"name": "search", "args": {"q": "bitcoin", "limit": 3}},
    {"name": "log", "args": {}},
    {"name": "calc", "args": {"expr": "5000 / 42000"}},
]
EXPECTED = [{"name": "search", "args": {"q": "bitcoin"}}, "calc"]


def check(mode, outputs=ACTUAL, expected=EXPECTED, **options):
    evaluator = create_tool_sequence_evaluator(expected, trajectory_match_mode=mode, **options)
    return evaluator(outputs=outputs)


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
    assert result["comment"] == (
        "Expected call 2 (calc(...)) was not made after the 1 earlier expected call. "
        "1 expected call out of order: calc(...)."
    )
    assert result["metadata"]["missing"] == []
    assert result["metadata"]["out_of_order"] == [{"index": 1, "name": "calc", "args": None}]
    assert check("superset", reversed_calls)["score"] is True


def test_in_order_names_only_the_missing_call_when_a_later_one_was_made():
    """Expected a, b, c; the run made a, c: only b is missing (c was made, in order)."""
    result = check("in_order", names("a", "c"), ["a", "b", "c"])
    assert result["score"] is False
    assert result["comment"] == (
        "Expected call 2 (b(...)) was not made after the 1 earlier expected call. "
        "Missing 1 expected call: b(...)."
    )
    assert [c["name"] for c in result["metadata"]["missing"]] == ["b"]
    assert result["metadata"]["out_of_order"] == []
    assert result["metadata"]["pairs"] == [
        {"actual": 0, "reference": 0},
        {"actual": 1, "reference": 2},
    ]


def test_in_order_keeps_the_longest_in_order_run_and_reports_the_call_out_of_place():
    """Expected a, b, c, d; made a, c, d, b: b was made, but placing it breaks c and d."""
    result = check("in_order", names("a", "c", "d", "b"), ["a", "b", "c", "d"])
    assert result["score"] is False
    assert result["comment"] == (
        "Expected call 2 (b(...)) was made, but not in the expected order. "
        "1 expected call out of order: b(...)."
    )
    assert [c["name"] for c in result["metadata"]["out_of_order"]] == ["b"]


def test_in_order_call_never_made_at_the_start():
    result = check("in_order", names("b"), ["a", "b"])
    assert result["comment"] == (
        "Expected call 1 (a(...)) was not made. Missing 1 expected call: a(...)."
    )


def test_subset_passes_when_calls_are_missing():
    assert check("subset", [ACTUAL[2]])["score"] is True
    assert check("superset", [ACTUAL[2]])["score"] is False


def test_partial_args_by_default_and_exact_on_request():
    assert check("superset")["score"] is True
    assert check("superset", tool_args_match_mode="exact")["score"] is False


def test_a_name_alone_accepts_any_arguments_even_in_exact_mode():
    result = check(
        "superset",
        expected=["calc", {"name": "search", "args": {"q": "bitcoin", "limit": 3}}],
        tool_args_match_mode="exact",
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
    evaluator = create_tool_sequence_evaluator(trajectory_match_mode="superset")
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
        create_tool_sequence_evaluator(EXPECTED, trajectory_match_mode="any")  # type: ignore[arg-type]
    with pytest.raises(InvalidOptionError, match="tool_args_match_mode='close'"):
        create_tool_sequence_evaluator(EXPECTED, tool_args_match_mode="close")  # type: ignore[arg-type]
    with pytest.raises(InvalidOptionError, match=r"tool_args_match_overrides\['calc'\]"):
        create_tool_sequence_evaluator(EXPECTED, tool_args_match_overrides={"calc": 3})  # type: ignore[dict-item]
    with pytest.raises(TrajectoryFormatError, match=r"expected\[0\] has no tool name"):
        create_tool_sequence_evaluator([{"args": {}}])


def test_missing_reference_is_an_error():
    with pytest.raises(TrajectoryFormatError, match="needs reference_outputs"):
        create_tool_sequence_evaluator()(outputs=ACTUAL)


async def test_async_twin():
    evaluator = create_tool_sequence_evaluator(EXPECTED, trajectory_match_mode="in_order")
    result = await evaluator.as_async()(outputs=ACTUAL)
    assert result["score"] is True


# --------------------------------------------------------------------------- deprecated names

RENAMED = [  # (deprecated name, its new name, a value)
    ("mode", "trajectory_match_mode", "superset"),
    ("args_match_mode", "tool_args_match_mode", "exact"),
    ("args_match_overrides", "tool_args_match_overrides", {"search": "exact"}),
]


@pytest.mark.parametrize(("old", "new", "value"), RENAMED)
def test_old_option_names_still_work_with_a_deprecation_warning(old, new, value):
    with pytest.warns(DeprecationWarning, match=f"use {new}="):
        old_style = create_tool_sequence_evaluator(EXPECTED, **{old: value})
    new_style = create_tool_sequence_evaluator(EXPECTED, **{new: value})
    assert old_style.key == new_style.key
    for outputs in (ACTUAL, [ACTUAL[0], ACTUAL[2]], list(reversed(ACTUAL))):
        assert old_style(outputs=outputs) == new_style(outputs=outputs)


@pytest.mark.parametrize(("old", "new", "value"), RENAMED)
def test_an_option_under_both_names_is_an_error(old, new, value):
    with pytest.raises(InvalidOptionError, match=f"both {new}= and its deprecated name {old}="):
        create_tool_sequence_evaluator(EXPECTED, **{old: value, new: value})


def test_errors_name_the_option_as_the_caller_spelled_it():
    with (
        pytest.warns(DeprecationWarning),
        pytest.raises(InvalidOptionError, match=r"^args_match_mode='close'"),
    ):
        create_tool_sequence_evaluator(EXPECTED, args_match_mode="close")  # type: ignore[arg-type]
    with (
        pytest.warns(DeprecationWarning),
        pytest.raises(InvalidOptionError, match=r"^mode='any'"),
    ):
        create_tool_sequence_evaluator(EXPECTED, mode="any")  # type: ignore[arg-type]
