"""One test per item of the reliability issue (each failed before its fix)."""

from __future__ import annotations

import math
import re

import pytest

from lg_eval import Evaluator, Feedback, make_evaluator
from lg_eval._feedback import ScoreRange
from lg_eval.errors import InvalidOptionError, LgEvalError, TrajectoryFormatError
from lg_eval.evaluators import (
    create_call_budget_evaluator,
    create_composite_evaluator,
    create_graph_trajectory_match_evaluator,
    create_redundancy_evaluator,
    create_tool_order_evaluator,
    create_tool_sequence_evaluator,
    create_trajectory_match_evaluator,
    get_evaluator,
    graph_trajectory_strict_match,
    json_valid,
)
from lg_eval.messages import (
    message_text,
    parse_arguments,
    to_openai_messages,
    tool_calls_from_openai,
)
from tests.contract.strategies import nested, nested_dict

REPLY = {"role": "assistant", "content": "x"}
USAGE = {"input_tokens": 1, "output_tokens": 1, "total_tokens": 2}

# --------------------------------------------------------------------------- silent wrong scores


@pytest.mark.parametrize("limit", [math.nan, math.inf, -math.inf])
def test_a_non_finite_budget_is_refused_when_created(limit):
    with pytest.raises(
        InvalidOptionError, match=r"max_tokens=.* must be a number >= 0, and finite"
    ):
        create_call_budget_evaluator(max_tokens=limit)


def test_a_non_finite_token_price_is_refused():
    with pytest.raises(InvalidOptionError, match="input_token_price=nan"):
        create_call_budget_evaluator(
            max_cost=1.0, input_token_price=math.nan, output_token_price=0.1
        )


@pytest.mark.parametrize("score", [math.nan, math.inf, 7, -0.5])
def test_the_composite_never_passes_a_broken_part_score_through(score):
    composite = create_composite_evaluator({"a": lambda **_: {"score": score}, "b": lambda **_: 1})
    result = composite(outputs="run")
    assert result["score"] is None
    assert result["metadata"]["error"]["type"] == "invalid_part_score"
    assert "a scored" in result["comment"]


def test_the_composite_takes_a_part_on_its_declared_scale():
    five = make_evaluator("five", lambda **_: 4, score_range=ScoreRange.of_choices([1, 2, 3, 4, 5]))
    composite = create_composite_evaluator({"five": five, "yes": lambda **_: True})
    assert composite(outputs="run")["score"] == 2.5
    assert composite.score_range == ScoreRange.between(0, 5)


@pytest.mark.parametrize("score", [math.nan, math.inf, -math.inf])
def test_a_non_finite_score_never_leaves_an_evaluator(score):
    evaluator = make_evaluator("k", lambda **_: Feedback(score=score, comment="mine"))
    result = evaluator(outputs="run")
    assert result["score"] is None
    assert result["metadata"]["error"] == {
        "type": "invalid_score",
        "message": f"evaluator 'k' produced a non-finite score ({score!r})",
        "score": repr(score),
        "comment": "mine",
    }
    assert result["comment"].startswith("Not scored: evaluator 'k' produced")


@pytest.mark.parametrize(
    ("declared", "score"),
    [("bool", 1), ("bool", 0.5), ((0, 1), 1.5), ((0, 1), -1), (ScoreRange.of_choices([1, 3]), 2)],
)
def test_a_score_outside_the_declared_range_becomes_an_error(declared, score):
    evaluator = make_evaluator("k", lambda **_: score, score_range=declared)
    result = evaluator(outputs="run")
    assert result["score"] is None
    assert "outside its range" in result["metadata"]["error"]["message"]


@pytest.mark.parametrize(
    ("declared", "score"),
    [
        ("bool", True),
        ((0, 1), True),
        ((0, 1), 1),
        ((0, 1), 0.25),
        (ScoreRange.of_choices([1, 3]), 3),
    ],
)
def test_a_score_inside_the_declared_range_passes_unchanged(declared, score):
    result = make_evaluator("k", lambda **_: score, score_range=declared)(outputs="run")
    assert result["score"] is score


NONE_CASES = [
    create_redundancy_evaluator(),
    create_trajectory_match_evaluator(trajectory_match_mode="superset"),
    create_call_budget_evaluator(max_tool_calls=3),
    create_composite_evaluator([create_redundancy_evaluator()]),
    graph_trajectory_strict_match,
    json_valid,
    make_evaluator("custom", lambda **_: True),
]


@pytest.mark.parametrize(
    ("evaluator", "outputs", "where"),
    [(e, None, "got None") for e in NONE_CASES]
    + [
        (e, {e.reads: None}, f"outputs[{e.reads!r}] is None")
        for e in NONE_CASES
        if e.reads is not None
    ],
    ids=str,
)
def test_no_evaluator_scores_outputs_none(evaluator, outputs, where):
    expected = re.escape(f"{evaluator.key} needs outputs; {where}")
    with pytest.raises(TrajectoryFormatError, match=expected):
        evaluator(outputs=outputs, reference_outputs=[])


async def test_no_evaluator_scores_outputs_none_when_awaited_either():
    with pytest.raises(TrajectoryFormatError, match="redundancy needs outputs"):
        await create_redundancy_evaluator().aevaluate(outputs=None)


@pytest.mark.parametrize(
    "answer",
    ['{"a": NaN}', "Infinity", "-Infinity", "[1, NaN]", {"a": b"x"}, {"a": math.nan}, [math.inf]],
)
def test_json_valid_refuses_what_is_not_json(answer):
    result = json_valid(outputs=answer)
    assert result["score"] is False
    assert result["comment"].startswith("Not valid JSON")


def test_json_valid_refuses_non_string_keys():
    assert json_valid(outputs={1: "a"})["score"] is False


def test_an_empty_bare_tool_name_is_refused():
    with pytest.raises(TrajectoryFormatError, match=r"expected\[0\] is an empty tool name"):
        create_tool_sequence_evaluator([""])
    with pytest.raises(TrajectoryFormatError, match=r"outputs\[0\] is an empty tool name"):
        create_tool_sequence_evaluator(["a"])(outputs=[""])


@pytest.mark.parametrize("expected", [{"search": 1, "answer": 2}, "search", {"search"}])
def test_a_dict_or_string_of_expected_calls_is_refused_not_iterated(expected):
    with pytest.raises(TrajectoryFormatError, match="expected is a"):
        create_tool_sequence_evaluator(expected)
    with pytest.raises(TrajectoryFormatError, match="expected_order is a"):
        create_tool_order_evaluator(expected)


# --------------------------------------------------------------------------- typed errors


@pytest.mark.parametrize(
    ("usage", "shown"),
    [
        ({"total_tokens": "n/a"}, "'n/a'"),
        ({"total_tokens": math.inf}, "inf"),
        ({"total_tokens": {"a": 1}}, "{'a': 1}"),
        ({"input_tokens": -3}, "-3"),
        ({"output_tokens": True}, "True"),
        ({"total_tokens": 2.5}, "2.5"),
    ],
)
def test_unreadable_token_usage_is_a_typed_error_naming_the_field(usage, shown):
    with pytest.raises(TrajectoryFormatError, match=r"outputs\[0\]\.usage_metadata\[.*\] is "):
        to_openai_messages([{**REPLY, "usage_metadata": usage}])
    with pytest.raises(TrajectoryFormatError, match="whole numbers >= 0"):
        create_call_budget_evaluator(max_tokens=5)(outputs=[{**REPLY, "usage": usage}])
    assert shown


def test_whole_float_token_counts_are_read():
    usage = {"input_tokens": 1.0, "output_tokens": 2.0, "total_tokens": 3.0}
    assert to_openai_messages([{**REPLY, "usage_metadata": usage}])[0]["usage_metadata"] == {
        "input_tokens": 1,
        "output_tokens": 2,
        "total_tokens": 3,
    }


@pytest.mark.parametrize("calls", [True, 3, "search", {"name": "x"}])
def test_tool_calls_that_are_no_list_are_a_typed_error(calls):
    with pytest.raises(TrajectoryFormatError, match=r"outputs\[0\]\.tool_calls is a"):
        to_openai_messages([{**REPLY, "tool_calls": calls}])


@pytest.mark.parametrize("value", ["hi", ["a"], 3, None, b"x"])
def test_message_text_on_anything_but_a_message_is_a_typed_error(value):
    with pytest.raises(TrajectoryFormatError, match="message is a"):
        message_text(value)


@pytest.mark.parametrize(
    "messages",
    ["x", [1], ["x"], [{"tool_calls": 1}], [{"tool_calls": [1]}], [{"tool_calls": [{}]}]],
)
def test_tool_calls_from_openai_on_unnormalized_input_is_a_typed_error(messages):
    with pytest.raises(TrajectoryFormatError, match=r"messages|message 0"):
        tool_calls_from_openai(messages)


@pytest.mark.parametrize("arguments", [b"\xff\xfe", b'{"a": "\xe9"}', "1" * 5000, "[" * 5000])
def test_parse_arguments_on_undecodable_input_is_a_typed_error(arguments):
    with pytest.raises(TrajectoryFormatError, match=r"^here: tool-call arguments"):
        parse_arguments(arguments, "here")


def test_steps_nested_5000_deep_are_a_typed_error_with_a_short_message():
    with pytest.raises(
        TrajectoryFormatError, match=r"outputs\['steps'\]\[0\] must be a list"
    ) as info:
        graph_trajectory_strict_match(outputs={"steps": nested(5000)}, reference_outputs=[["a"]])
    assert len(str(info.value)) < 300


def test_json_nested_100000_deep_is_too_deep_to_check_not_a_crash():
    result = json_valid(outputs="[" * 100_000 + "]" * 100_000)
    assert result["score"] is None
    assert "too deeply to check" in result["comment"]
    assert result["metadata"]["error"]["type"] == "too_deep"
    assert json_valid(outputs=nested(100_000))["score"] is None


@pytest.mark.parametrize("depth", [101, 900, 5000])
def test_tool_arguments_nested_too_deep_are_a_typed_error(depth):
    args = nested_dict(depth)
    evaluator = create_trajectory_match_evaluator(trajectory_match_mode="unordered")
    with pytest.raises(TrajectoryFormatError, match="nest more than 100 levels deep"):
        evaluator(outputs=[{"name": "f", "args": args}], reference_outputs=["f"])
    message = {"role": "assistant", "content": "", "tool_calls": [{"name": "f", "args": args}]}
    with pytest.raises(TrajectoryFormatError, match="nest more than 100 levels deep"):
        evaluator(outputs=[message], reference_outputs=["f"])


def test_tool_arguments_100_deep_are_still_compared():
    args = nested_dict(99)
    evaluator = create_trajectory_match_evaluator(trajectory_match_mode="unordered")
    call = [{"name": "f", "args": args}]
    assert evaluator(outputs=call, reference_outputs=call)["score"] is True


@pytest.mark.parametrize("name", [["x"], {"x": 1}, None, 3])
def test_get_evaluator_with_a_non_string_name_is_a_typed_error(name):
    with pytest.raises(InvalidOptionError, match="An evaluator name must be a string"):
        get_evaluator(name)


def test_graph_and_trajectory_match_treat_outputs_none_alike():
    graph = create_graph_trajectory_match_evaluator(trajectory_match_mode="superset")
    tools = create_trajectory_match_evaluator(trajectory_match_mode="superset")
    for evaluator in (graph, tools):
        with pytest.raises(TrajectoryFormatError, match="needs outputs; got None"):
            evaluator(outputs=None, reference_outputs=[])


def test_a_scorer_returning_a_malformed_dict_is_a_typed_error():
    evaluator = make_evaluator("k", lambda **_: {"score": "high", "extra": 1})
    with pytest.raises(InvalidOptionError, match="returned a dict that is no feedback"):
        evaluator(outputs="run")


def test_a_recursion_error_inside_a_scorer_becomes_a_typed_error():
    def scorer(**_: object) -> Feedback:
        raise RecursionError("deep")

    with pytest.raises(TrajectoryFormatError, match="nested too deeply"):
        Evaluator("k", scorer)(outputs="run")


@pytest.mark.parametrize("declared", ["int", (1, 0), (0, math.nan), ScoreRange.between], ids=repr)
def test_a_malformed_score_range_is_refused(declared):
    with pytest.raises(LgEvalError):
        make_evaluator("k", lambda **_: 1, score_range=declared)


@pytest.mark.parametrize("choices", [[], [math.nan], "12"])
def test_malformed_score_choices_are_refused(choices):
    with pytest.raises(InvalidOptionError, match="Score choices"):
        ScoreRange.of_choices(choices)


@pytest.mark.parametrize("field", ["steps", "results", "inputs"])
def test_a_graph_trajectory_field_that_is_no_list_is_a_typed_error(field):
    # found by the contract fuzz: {'steps': 1.0} raised TypeError from len()
    from lg_eval._inputs import graph_trajectory

    with pytest.raises(TrajectoryFormatError, match=rf"outputs\['{field}'\] is a float"):
        graph_trajectory({"steps": [["a"]], "results": [{}], field: 1.0})


def test_an_answer_dict_nested_too_deep_is_a_typed_error():
    # found by the contract fuzz: text_arg's json.dumps raised RecursionError
    from lg_eval.evaluators import exact_match

    with pytest.raises(TrajectoryFormatError, match="nested too deeply"):
        exact_match(outputs={"x": nested_dict(5000)}, reference_outputs="a")


def test_an_answer_dict_with_keys_that_do_not_sort_is_read_as_text():
    from lg_eval._inputs import text_arg

    assert text_arg({1: "a", "b": 2}, "outputs") == "{1: 'a', 'b': 2}"
