"""Weighted composite evaluator."""

from __future__ import annotations

import pytest

from lg_eval import make_evaluator
from lg_eval._feedback import Feedback
from lg_eval.errors import InvalidOptionError
from lg_eval.evaluators import (
    create_composite_evaluator,
    create_tool_order_evaluator,
    create_tool_selection_evaluator,
)

OUTPUTS = [{"name": "b", "args": {}}, {"name": "a", "args": {}}]
EXPECTED = ["a", "b"]


def parts():
    return {
        "selection": create_tool_selection_evaluator(EXPECTED),
        "order": create_tool_order_evaluator(EXPECTED),
    }


def test_weighted_mean_of_parts():
    composite = create_composite_evaluator(parts(), {"selection": 3, "order": 1})
    result = composite(outputs=OUTPUTS)
    assert result["key"] == "composite"
    assert result["score"] == pytest.approx((3 * 1.0 + 1 * 0.5) / 4)
    assert result["comment"] == "Below 1.0: order 0.50."
    assert result["metadata"]["parts"]["order"]["weight"] == 1.0


def test_equal_weights_by_default_and_registry_names_as_parts():
    composite = create_composite_evaluator(
        ["tool_order", "tool_selection_accuracy"], key="trajectory"
    )
    result = composite(outputs=OUTPUTS, reference_outputs=EXPECTED)
    assert result["key"] == "trajectory"
    assert result["score"] == pytest.approx(0.75)


def test_bool_scores_count_as_one_or_zero_and_none_is_left_out():
    yes = make_evaluator("yes", lambda **_: Feedback(score=True))
    nothing = make_evaluator("nothing", lambda **_: Feedback(score=None))
    result = create_composite_evaluator({"yes": yes, "nothing": nothing, **parts()})(
        outputs=OUTPUTS
    )
    assert result["score"] == pytest.approx((1.0 + 1.0 + 0.5) / 3)
    assert "No score from: nothing." in result["comment"]


def test_plain_functions_returning_numbers_are_parts():
    result = create_composite_evaluator({"half": lambda **_: 0.5})(outputs="run")
    assert result["score"] == 0.5


async def test_async_composite_awaits_async_parts():
    async def judge(**_):
        return {"key": "judge", "score": 0.0, "comment": "bad"}

    composite = create_composite_evaluator({"judge": judge, **parts()}).as_async()
    result = await composite(outputs=OUTPUTS)
    assert result["score"] == pytest.approx((0.0 + 1.0 + 0.5) / 3)


def test_sync_composite_refuses_async_parts_with_a_hint():
    async def judge(**_):
        return 1.0

    with pytest.raises(InvalidOptionError, match=r"await the composite \(its \.aevaluate\)"):
        create_composite_evaluator({"judge": judge})(outputs="run")


@pytest.mark.parametrize(
    ("evaluators", "weights", "fragment"),
    [
        ({}, None, "non-empty dict"),
        (parts(), {"style": 1}, "unknown parts"),
        (parts(), {"order": -1}, "must be a number >= 0"),
        (parts(), {"order": 0, "selection": 0}, "above 0"),
        ({"x": "no_such_evaluator"}, None, "No evaluator is registered"),
    ],
)
def test_option_errors(evaluators, weights, fragment):
    with pytest.raises(InvalidOptionError, match=fragment):
        create_composite_evaluator(evaluators, weights)
