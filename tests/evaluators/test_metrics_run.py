"""Step efficiency, redundancy and call budget metrics."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from lg_eval.errors import InvalidOptionError
from lg_eval.evaluators import (
    create_call_budget_evaluator,
    create_redundancy_evaluator,
    create_step_efficiency_evaluator,
)

from .builders import call, run


def calls(*names):
    return [{"name": n, "args": {}} for n in names]


@pytest.mark.parametrize(
    ("expected", "used", "score"),
    [
        (2, 2, 1.0),
        (2, 1, 1.0),
        (2, 3, 2 / 3),
        (2, 0, 0.0),
        (0, 0, 1.0),
        (0, 2, 0.0),
        ((2, 4), 3, 1.0),
        ((2, 4), 8, 0.5),
        ((2, 4), 1, 0.5),
        ([3, 3], 3, 1.0),
    ],
)
def test_step_efficiency_inside_and_outside_the_range(expected, used, score):
    result = create_step_efficiency_evaluator(expected)(outputs=calls(*["t"] * used))
    assert result["key"] == "step_efficiency"
    assert result["score"] == pytest.approx(score)


def test_step_efficiency_comment_and_metadata():
    result = create_step_efficiency_evaluator((1, 2))(outputs=calls("a", "b", "c", "d"))
    assert result["comment"] == "4 tool calls, at most 2 expected."
    assert result["metadata"] == {"steps": 4, "expected_range": [1, 2]}


def test_step_efficiency_can_count_model_calls():
    evaluator = create_step_efficiency_evaluator(2, count="model_calls")
    assert evaluator(outputs=run(call("a"), call("b")))["score"] == pytest.approx(2 / 3)


def test_step_efficiency_reads_the_expectation_from_the_reference():
    evaluator = create_step_efficiency_evaluator()
    assert (
        evaluator(outputs=calls("a"), reference_outputs={"expected_steps": [1, 1]})["score"] == 1.0
    )


@pytest.mark.parametrize("bad", [-1, (3, 1), (1, 2, 3), "two", True])
def test_step_efficiency_rejects_bad_expectations(bad):
    with pytest.raises(InvalidOptionError, match="range"):
        create_step_efficiency_evaluator(bad)


def test_redundancy_counts_repeated_identical_calls():
    outputs = [
        {"name": "search", "args": {"q": "x"}},
        {"name": "search", "args": {"q": "y"}},
        {"name": "search", "args": {"q": "x"}},
        {"name": "search", "args": {"q": "x"}},
    ]
    result = create_redundancy_evaluator()(outputs=outputs)
    assert result["score"] == 0.5
    assert [(r["index"], r["repeats"]) for r in result["metadata"]["repeats"]] == [(2, 0), (3, 0)]
    assert result["comment"].startswith('Repeated calls: call 3 repeats call 1 (search(q="x"))')
    consecutive = create_redundancy_evaluator(consecutive_only=True)(outputs=outputs)
    assert consecutive["score"] == 0.75


def test_redundancy_of_short_runs_is_one():
    assert create_redundancy_evaluator()(outputs=[])["score"] == 1.0
    assert create_redundancy_evaluator()(outputs=calls("a"))["score"] == 1.0


def usage_run(*tokens):
    messages = [HumanMessage("q")]
    for n, (inp, out) in enumerate(tokens):
        usage = {"input_tokens": inp, "output_tokens": out, "total_tokens": inp + out}
        messages.append(
            AIMessage(
                "", tool_calls=[{"name": "t", "args": {}, "id": str(n)}], usage_metadata=usage
            )
        )
        messages.append(ToolMessage("ok", tool_call_id=str(n)))
    return messages


def test_call_budget_within_every_budget_is_one():
    evaluator = create_call_budget_evaluator(max_tool_calls=2, max_model_calls=2, max_tokens=100)
    result = evaluator(outputs=usage_run((10, 5), (20, 5)))
    assert result["score"] == 1.0 and result["comment"] is None
    assert result["metadata"]["budgets"]["tokens"] == {"used": 40, "limit": 100, "score": 1.0}


def test_call_budget_scores_the_worst_overrun():
    evaluator = create_call_budget_evaluator(max_tool_calls=1, max_tokens=20)
    result = evaluator(outputs=usage_run((10, 5), (20, 5)))
    assert result["score"] == pytest.approx(0.5)
    assert result["comment"] == "Over budget: tool_calls 2 > 1, tokens 40 > 20."


def test_call_budget_cost_from_token_prices():
    evaluator = create_call_budget_evaluator(
        max_cost=0.01, input_token_price=0.0001, output_token_price=0.001
    )
    result = evaluator(outputs=usage_run((10, 5), (20, 5)))
    # cost = 30 * 0.0001 + 10 * 0.001 = 0.013
    assert result["metadata"]["budgets"]["cost"]["used"] == pytest.approx(0.013)
    assert result["score"] == pytest.approx(0.01 / 0.013)


def test_call_budget_skips_what_it_cannot_measure():
    evaluator = create_call_budget_evaluator(max_tool_calls=5, max_tokens=10)
    result = evaluator(outputs=run(call("a")))
    assert result["score"] == 1.0
    assert result["metadata"]["unmeasured"] == ["tokens"]
    assert result["comment"] == "Not measured (no usage metadata): tokens."


def test_call_budget_accepts_a_plain_call_list():
    result = create_call_budget_evaluator(max_tool_calls=1, max_model_calls=1)(
        outputs=calls("a", "b")
    )
    assert result["score"] == 0.5
    assert result["metadata"]["unmeasured"] == ["model_calls"]


@pytest.mark.parametrize(
    ("options", "fragment"),
    [
        ({}, "at least one budget"),
        ({"max_tool_calls": -1}, "must be a number >= 0"),
        ({"max_cost": 1.0}, "needs input_token_price"),
    ],
)
def test_call_budget_option_errors(options, fragment):
    with pytest.raises(InvalidOptionError, match=fragment):
        create_call_budget_evaluator(**options)
