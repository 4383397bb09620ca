"""create_trajectory_match_evaluator: agentevals' semantics, paired by maximum matching."""

from __future__ import annotations

import json

import pytest
from agentevals.trajectory.match import (
    create_trajectory_match_evaluator as agentevals_match,
)
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from lg_eval._trajectory import ThreadTrajectory, Turn
from lg_eval.errors import InvalidOptionError, TrajectoryFormatError
from lg_eval.evaluators import (
    create_async_trajectory_match_evaluator,
    create_trajectory_match_evaluator,
)

from .builders import ai, call, run, tool, user

MODES = ("strict", "unordered", "subset", "superset")


def score(mode, outputs, reference, **options):
    evaluator = create_trajectory_match_evaluator(trajectory_match_mode=mode, **options)
    return evaluator(outputs=outputs, reference_outputs=reference)


def agentevals_score(mode, outputs, reference, **options):
    evaluator = agentevals_match(trajectory_match_mode=mode, **options)
    return evaluator(outputs=outputs, reference_outputs=reference)["score"]


# --------------------------------------------------------------------------- modes


@pytest.mark.parametrize("mode", MODES)
def test_result_key_names_the_mode(mode):
    result = score(mode, run(call("f")), run(call("f")))
    assert result["key"] == f"trajectory_{mode}_match"
    assert result["score"] is True
    assert result["comment"] is None


@pytest.mark.parametrize("mode", MODES)
def test_two_empty_trajectories_match_in_every_mode(mode):
    assert score(mode, [], [])["score"] is True


@pytest.mark.parametrize(
    ("mode", "expected"),
    [("strict", False), ("unordered", True), ("subset", True), ("superset", True)],
)
def test_same_calls_in_other_messages(mode, expected):
    outputs = run(call("weather", city="SF"), call("fun", city="SF"))
    reference = run([call("fun", city="SF"), call("weather", city="SF")])
    assert score(mode, outputs, reference)["score"] is expected


@pytest.mark.parametrize(
    ("mode", "expected"),
    [("strict", False), ("unordered", False), ("subset", False), ("superset", True)],
)
def test_an_extra_call(mode, expected):
    outputs = run([call("weather", city="SF"), call("forecast", city="SF")])
    reference = run(call("weather", city="SF"))
    assert score(mode, outputs, reference)["score"] is expected


@pytest.mark.parametrize(
    ("mode", "expected"),
    [("strict", False), ("unordered", False), ("subset", True), ("superset", False)],
)
def test_a_duplicate_call_in_the_reference_must_be_made_twice(mode, expected):
    outputs = run(call("f", a=1))
    reference = run(call("f", a=1), call("f", a=1))
    assert score(mode, outputs, reference)["score"] is expected


def test_strict_ignores_message_content_but_not_roles():
    outputs = [user("a"), ai(call("f"), content="thinking"), tool("x"), ai(content="A")]
    reference = [user("b"), ai(call("f")), tool("y"), ai(content="B")]
    assert score("strict", outputs, reference)["score"] is True
    swapped = [user("a"), tool("x"), ai(call("f")), ai(content="A")]
    result = score("strict", swapped, reference)
    assert result["score"] is False
    assert result["comment"] == "Message 1: expected role 'assistant', got 'tool'."


def test_strict_reports_length_mismatch():
    result = score("strict", run(call("f")), run(call("f"), call("f")))
    assert result["comment"] == "Expected 6 messages, got 4."


def test_strict_allows_parallel_calls_of_a_message_in_any_order():
    outputs = run([call("a"), call("b")])
    reference = run([call("b"), call("a")])
    assert score("strict", outputs, reference)["score"] is True


def test_nested_arguments_compare_exactly():
    args = {"filters": {"city": "SF", "days": [1, 2]}, "q": "x"}
    same = {"q": "x", "filters": {"days": [1, 2], "city": "SF"}}
    assert score("unordered", run(call("s", **args)), run(call("s", **same)))["score"] is True
    other = {"q": "x", "filters": {"days": [2, 1], "city": "SF"}}
    assert score("unordered", run(call("s", **args)), run(call("s", **other)))["score"] is False


def test_dotted_override_paths_compare_nested_fields():
    outputs = run(call("s", filters={"city": "SF", "date": "mon"}, page=2))
    reference = run(call("s", filters={"city": "SF", "date": "tue"}))
    overrides = {"s": ["filters.city"]}
    assert score("strict", outputs, reference, tool_args_match_overrides=overrides)["score"]
    assert not score("strict", outputs, reference)["score"]


def test_unicode_arguments_compare_after_json_decoding():
    outputs = [user(), ai({"function": {"name": "w", "arguments": '{"city": "Z\\u00fcrich"}'}})]
    reference = [user(), ai({"function": {"name": "w", "arguments": '{"city": "Zürich"}'}})]
    assert score("strict", outputs, reference)["score"] is True


def test_agentevals_readme_override_example_is_case_insensitive():
    def same_city(actual, reference):
        return actual["city"].lower() == reference["city"].lower()

    outputs = run(call("get_weather", city="san francisco"))
    reference = run(call("get_weather", city="San Francisco"))
    result = score(
        "strict", outputs, reference, tool_args_match_overrides={"get_weather": same_city}
    )
    assert result["score"] is True


# --------------------------------------------------------------------------- detail


def test_metadata_lists_pairs_missing_and_unexpected_calls():
    outputs = run(call("a", x=1), call("c"))
    reference = run(call("b"), call("a", x=1))
    result = score("unordered", outputs, reference)
    assert result["metadata"] == {
        "pairs": [{"actual": 0, "reference": 1}],
        "missing": [{"index": 0, "name": "b", "args": {}}],
        "unexpected": [{"index": 1, "name": "c", "args": {}}],
    }
    assert result["comment"] == "Missing 1 expected call: b(). Unexpected 1 call: c()."


def test_superset_comment_names_only_what_is_missing():
    result = score("superset", run(call("a")), run(call("a"), call("b", q="x")))
    assert result["comment"] == 'Missing 1 expected call: b(q="x").'
    assert result["metadata"]["unexpected"] == []


def test_subset_tolerates_missing_calls_but_reports_them():
    result = score("subset", run(call("a")), run(call("a"), call("b")))
    assert result["score"] is True
    assert result["metadata"]["missing"] == [{"index": 1, "name": "b", "args": {}}]


# --------------------------------------------------------------------------- greedy vs matching


def test_issue_example_superset_args_pairing_exists_where_greedy_fails():
    """Reference [f(), f(a=1)] vs actual [f(a=1), f(b=2)] with superset args.

    A pairing exists (f()<->f(b=2), f(a=1)<->f(a=1)). First-fit gives f() the
    actual f(a=1) and then finds nothing for f(a=1).
    """
    outputs = run(call("f", a=1), call("f", b=2))
    reference = run(call("f"), call("f", a=1))
    for mode in ("unordered", "superset"):
        assert score(mode, outputs, reference, tool_args_match_mode="superset")["score"] is True
        assert agentevals_score(mode, outputs, reference, tool_args_match_mode="superset") is False


def test_strict_parallel_calls_with_partial_args_pair_by_matching():
    outputs = run([call("f", a=1), call("f", b=2)])
    reference = run([call("f"), call("f", a=1)])
    options = {"tool_args_match_mode": "superset"}
    assert score("strict", outputs, reference, **options)["score"] is True
    assert agentevals_score("strict", outputs, reference, **options) is False


def test_subset_mode_applies_args_rules_with_actual_args_first():
    """agentevals swaps the arguments in the subset direction: superset args then
    demand reference ⊇ actual. Here the actual call f(a=1, b=2) satisfies the
    reference f(a=1) under superset args, so the run is a subset of the reference."""
    outputs = run(call("f", a=1, b=2))
    reference = run(call("f", a=1))
    options = {"tool_args_match_mode": "superset"}
    assert score("subset", outputs, reference, **options)["score"] is True
    assert score("unordered", outputs, reference, **options)["score"] is True
    assert agentevals_score("subset", outputs, reference, **options) is False
    assert agentevals_score("unordered", outputs, reference, **options) is False


def test_greedy_also_fails_with_a_custom_comparator():
    def within_one(actual, reference):
        return abs(actual["x"] - reference["x"]) <= 1

    outputs = run(call("f", x=1), call("f", x=3))
    reference = run(call("f", x=2), call("f", x=0))
    options = {"tool_args_match_overrides": {"f": within_one}}
    assert score("superset", outputs, reference, **options)["score"] is True
    assert agentevals_score("superset", outputs, reference, **options) is False


# --------------------------------------------------------------------------- shapes


def openai_form():
    return [
        {"role": "user", "content": "weather?"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"id": "1", "function": {"name": "w", "arguments": json.dumps({"city": "SF"})}}
            ],
        },
        {"role": "tool", "tool_call_id": "1", "content": "sunny"},
        {"role": "assistant", "content": "Sunny."},
    ]


def langchain_form():
    return [
        HumanMessage("weather?"),
        AIMessage("", tool_calls=[{"name": "w", "args": {"city": "SF"}, "id": "1"}]),
        ToolMessage("sunny", tool_call_id="1"),
        AIMessage("Sunny."),
    ]


@pytest.mark.parametrize(
    "outputs",
    [
        langchain_form(),
        {"messages": langchain_form()},
        {"outputs": {"messages": openai_form()}},
        [
            {"role": "user", "content": "weather?"},
            {"role": "ai", "content": "", "tool_calls": [{"name": "w", "args": {"city": "SF"}}]},
            {"role": "tool", "content": "sunny"},
            {"role": "assistant", "content": "Sunny."},
        ],
        ThreadTrajectory(
            thread_id="t",
            turns=[
                Turn(
                    index=0, kind="input", status="completed", state={"messages": langchain_form()}
                )
            ],
        ),
    ],
    ids=["langchain", "state", "envelope", "langchain-dicts", "thread"],
)
@pytest.mark.parametrize("mode", MODES)
def test_every_input_shape_scores_the_same(outputs, mode):
    assert score(mode, outputs, openai_form())["score"] is True


def test_set_modes_accept_plain_call_lists():
    outputs = [{"name": "w", "args": {"city": "SF"}}, {"name": "x", "args": {}}]
    assert score("superset", outputs, openai_form())["score"] is True
    assert score("unordered", outputs, ["w", "x"], tool_args_match_mode="ignore")["score"] is True


def test_missing_reference_is_a_clear_error():
    evaluator = create_trajectory_match_evaluator()
    with pytest.raises(
        TrajectoryFormatError, match="trajectory_strict_match needs reference_outputs"
    ):
        evaluator(outputs=openai_form())


def test_bad_output_shape_names_the_argument():
    with pytest.raises(TrajectoryFormatError, match="outputs is a str"):
        score("unordered", "not messages", openai_form())


def test_unknown_modes_are_rejected_at_creation_naming_allowed_values():
    with pytest.raises(
        InvalidOptionError,
        match=r"^trajectory_match_mode='fuzzy': input should be 'strict', 'unordered', 'subset' or",
    ):
        create_trajectory_match_evaluator(trajectory_match_mode="fuzzy")  # type: ignore[arg-type]
    with pytest.raises(
        InvalidOptionError,
        match=r"^tool_args_match_mode='close': input should be 'exact', 'ignore', 'subset' or",
    ):
        create_trajectory_match_evaluator(tool_args_match_mode="close")  # type: ignore[arg-type]


async def test_async_twin_gives_the_same_result():
    outputs, reference = run(call("f", a=1), call("f", b=2)), run(call("f"), call("f", a=1))
    sync = create_trajectory_match_evaluator(
        trajectory_match_mode="superset", tool_args_match_mode="superset"
    )
    twin = create_async_trajectory_match_evaluator(
        trajectory_match_mode="superset", tool_args_match_mode="superset"
    )
    assert await twin(outputs=outputs, reference_outputs=reference) == sync(
        outputs=outputs, reference_outputs=reference
    )
