"""The evaluator concept: one object, called or awaited, reading its own field."""

from __future__ import annotations

import inspect

import pytest

from lg_eval import Evaluator, Feedback, make_evaluator
from lg_eval._evaluator import async_twin
from lg_eval.errors import InvalidOptionError, TrajectoryFormatError
from lg_eval.evaluators import (
    create_async_trajectory_match_evaluator,
    create_graph_trajectory_match_evaluator,
    create_text_evaluator,
    create_trajectory_match_evaluator,
    exact_match,
    graph_trajectory_strict_match,
    graph_trajectory_strict_match_async,
)


def doubled(*, outputs, **_):
    """Twice the output."""
    return Feedback(score=outputs * 2)


def test_call_and_aevaluate_give_the_same_feedback_dict():
    evaluator = make_evaluator("k", doubled, score_range=(0, 10))
    assert evaluator(outputs=2) == {"key": "k", "score": 4, "comment": None, "metadata": None}


async def test_aevaluate_awaits_the_same_scorer():
    evaluator = make_evaluator("k", doubled, score_range=(0, 10))
    assert await evaluator.aevaluate(outputs=3) == {
        "key": "k",
        "score": 6,
        "comment": None,
        "metadata": None,
    }


async def test_as_async_is_a_coroutine_function_keeping_key_and_name():
    twin = make_evaluator("k", doubled, score_range=(0, 10)).as_async()
    assert inspect.iscoroutinefunction(twin)
    assert twin.__name__ == "k_async"
    assert twin.key == "k"
    assert twin.__doc__ == "Twice the output."
    assert (await twin(outputs=1))["score"] == 2


def test_a_feedback_key_from_the_scorer_wins():
    evaluator = make_evaluator("k", lambda **_: Feedback(key="other", score=True))
    assert evaluator(outputs=1)["key"] == "other"


def test_a_scorer_returning_garbage_is_a_typed_error_naming_the_evaluator():
    evaluator = make_evaluator("k", lambda **_: object())
    with pytest.raises(InvalidOptionError, match="evaluator 'k' returned a object"):
        evaluator(outputs=1)


def test_an_empty_key_is_refused():
    with pytest.raises(InvalidOptionError, match="non-empty string"):
        Evaluator("", doubled)


def test_async_twin_keeps_the_signature_and_names_the_twin():
    assert create_async_trajectory_match_evaluator.__name__ == (
        "create_async_trajectory_match_evaluator"
    )
    assert inspect.signature(create_async_trajectory_match_evaluator).parameters.keys() == (
        inspect.signature(create_trajectory_match_evaluator).parameters.keys()
    )
    assert inspect.iscoroutinefunction(create_async_trajectory_match_evaluator())


def test_async_twin_validates_options_like_the_factory():
    create = async_twin(create_trajectory_match_evaluator)
    with pytest.raises(InvalidOptionError, match="trajectory_match_mode"):
        create(trajectory_match_mode="nope")  # type: ignore[arg-type]


async def test_the_strict_match_drop_in_twin_is_awaitable_with_the_same_answer():
    outputs = {"steps": [["a", "b"]]}
    assert await graph_trajectory_strict_match_async(
        outputs=outputs, reference_outputs=outputs
    ) == graph_trajectory_strict_match(outputs=outputs, reference_outputs=outputs)


# --------------------------------------------------------------------------- fields

TARGET_OUTPUT = {
    "trajectory": {"inputs": [None], "results": [{}], "steps": [["__start__", "agent", "tools"]]},
    "messages": [
        {"role": "user", "content": "weather in sf?"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"function": {"name": "get_weather", "arguments": '{"city": "sf"}'}, "id": "1"}
            ],
        },
        {"role": "tool", "content": "sunny", "tool_call_id": "1"},
        {"role": "assistant", "content": "It is sunny."},
    ],
    "output": "It is sunny.",
}
REFERENCE = {
    "trajectory": {"steps": [["__start__", "agent", "tools"]]},
    "tool_calls": [{"name": "get_weather", "args": {"city": "sf"}}],
    "output": "it is sunny.",
}


def test_every_family_reads_its_field_from_one_multi_field_output_and_reference():
    graph = graph_trajectory_strict_match(outputs=TARGET_OUTPUT, reference_outputs=REFERENCE)
    tools = create_trajectory_match_evaluator(trajectory_match_mode="superset")(
        outputs=TARGET_OUTPUT, reference_outputs=REFERENCE
    )
    text = exact_match(outputs=TARGET_OUTPUT, reference_outputs=REFERENCE)
    assert (graph["score"], tools["score"], text["score"]) == (True, True, True)


def test_the_field_is_read_from_the_first_present_key():
    assert graph_trajectory_strict_match.reads == "trajectory"
    actual = {"thread": {"steps": [["a"]]}, "trajectory": {"steps": [["b"]]}}
    result = graph_trajectory_strict_match(outputs=actual, reference_outputs={"steps": [["b"]]})
    assert result["score"] is True


def test_an_answer_key_serves_text_evaluators():
    result = create_text_evaluator("exact_match")(
        outputs={"answer": "Yes", "messages": []}, reference_outputs="yes"
    )
    assert result["score"] is True


def test_a_dict_without_the_field_names_the_keys_looked_for():
    evaluator = create_graph_trajectory_match_evaluator()
    with pytest.raises(TrajectoryFormatError) as caught:
        evaluator(outputs={"answer": "x"}, reference_outputs={"steps": [["a"]]})
    assert str(caught.value) == (
        "outputs is a dict without 'steps'; expected a ThreadTrajectory, a GraphTrajectory, "
        "a dict with 'steps' (optionally inside an {'inputs', 'outputs'} envelope), or a list "
        "of per-turn lists of node names. (outputs is a dict without 'trajectory' or 'thread', "
        "so it was read whole; its keys: 'answer'. Put the trajectory under 'trajectory' or "
        "pass it directly.)"
    )
