"""Tool selection, tool order and argument precision metrics."""

from __future__ import annotations

import pytest

from lg_eval.evaluators import (
    create_argument_precision_evaluator,
    create_tool_order_evaluator,
    create_tool_selection_evaluator,
)

from .builders import call, run

# The course's Bitcoin example: a redundant second search, then the calculation.
BITCOIN_RUN = [
    {"name": "web_search", "args": {"query": "bitcoin price"}},
    {"name": "web_search", "args": {"query": "BTC USD today"}},
    {"name": "calculator", "args": {"expression": "5000 / 42000"}},
]
BITCOIN_EXPECTED = [
    {"name": "web_search", "args": {"query": "bitcoin price USD"}},
    {"name": "calculator", "args": {"expression": "5000 / PRICE"}},
]


def names(*tools):
    return [{"name": t, "args": {}} for t in tools]


@pytest.mark.parametrize(
    ("used", "accuracy", "f1"),
    [
        (["a", "b"], 1.0, 1.0),
        (["a", "b", "c"], 1.0, 0.8),
        (["a"], 0.5, 2 / 3),
        (["c"], 0.0, 0.0),
        ([], 0.0, 0.0),
    ],
    ids=["perfect", "extra", "missing", "wrong", "none"],
)
def test_tool_selection_accuracy_and_f1(used, accuracy, f1):
    expected = ["a", "b"]
    got_accuracy = create_tool_selection_evaluator(expected)(outputs=names(*used))
    got_f1 = create_tool_selection_evaluator(expected, penalize_extra=True)(outputs=names(*used))
    assert got_accuracy["key"] == "tool_selection_accuracy"
    assert got_f1["key"] == "tool_selection_f1"
    assert got_accuracy["score"] == pytest.approx(accuracy)
    assert got_f1["score"] == pytest.approx(f1)


def test_tool_selection_with_nothing_expected():
    evaluator = create_tool_selection_evaluator([])
    assert evaluator(outputs=[])["score"] == 1.0
    result = evaluator(outputs=names("a"))
    assert result["score"] == 0.0
    assert result["comment"] == "Tools used but not expected: a."


def test_tool_selection_comment_and_metadata():
    result = create_tool_selection_evaluator(["a", "b"], penalize_extra=True)(
        outputs=names("a", "c")
    )
    assert result["comment"] == "Expected tools not used: b. Tools used but not expected: c."
    assert result["metadata"]["precision"] == 0.5 and result["metadata"]["recall"] == 0.5


def test_tool_selection_reads_expected_tools_from_the_reference_trajectory():
    evaluator = create_tool_selection_evaluator()
    result = evaluator(
        outputs=BITCOIN_RUN, reference_outputs=run(call("web_search"), call("calculator"))
    )
    assert result["score"] == 1.0


def test_tool_order_is_normalized_lcs():
    evaluator = create_tool_order_evaluator(["web_search", "calculator"])
    assert evaluator(outputs=BITCOIN_RUN)["score"] == 1.0
    reversed_run = list(reversed(BITCOIN_RUN))
    result = evaluator(outputs=reversed_run)
    assert result["score"] == 0.5
    assert result["metadata"]["out_of_order"] == ["calculator"]


def test_tool_order_with_nothing_expected_is_one():
    assert create_tool_order_evaluator([])(outputs=BITCOIN_RUN)["score"] == 1.0


def test_argument_precision_pairs_by_tool_not_by_position():
    result = create_argument_precision_evaluator(BITCOIN_EXPECTED)(outputs=BITCOIN_RUN)
    # query: {bitcoin, price} vs {bitcoin, price, usd} = 2/3; expression: 2 of 4 words = 1/2
    assert result["score"] == pytest.approx((2 / 3 + 1 / 2) / 2)
    pairs = [(c["expected_index"], c["actual_index"]) for c in result["metadata"]["calls"]]
    assert pairs == [(0, 0), (1, 2)]
    assert result["comment"] == (
        "Arguments below 1.0: web_search.query 0.67, calculator.expression 0.50."
    )


def test_argument_precision_picks_the_best_pairing_among_same_tool_calls():
    expected = [{"name": "s", "args": {"q": "cats"}}, {"name": "s", "args": {"q": "dogs"}}]
    actual = [{"name": "s", "args": {"q": "dogs"}}, {"name": "s", "args": {"q": "cats"}}]
    assert create_argument_precision_evaluator(expected)(outputs=actual)["score"] == 1.0


def test_argument_precision_scores_missing_calls_and_arguments_zero():
    expected = [{"name": "s", "args": {"q": "x", "n": 2}}, {"name": "t", "args": {"a": 1}}]
    result = create_argument_precision_evaluator(expected)(
        outputs=[{"name": "s", "args": {"q": "x"}}]
    )
    assert result["score"] == pytest.approx(0.25)
    assert "t not called" in result["comment"]


def test_argument_precision_exact_only_when_word_overlap_is_off():
    expected = [{"name": "s", "args": {"q": "bitcoin price USD"}}]
    actual = [{"name": "s", "args": {"q": "bitcoin price"}}]
    assert (
        create_argument_precision_evaluator(expected, word_overlap=False)(outputs=actual)["score"]
        == 0.0
    )


def test_argument_precision_with_nested_and_unicode_values():
    expected = [{"name": "s", "args": {"f": {"city": "Zürich"}, "q": "Crème brûlée"}}]
    actual = [{"name": "s", "args": {"f": {"city": "Zürich"}, "q": "crème BRÛLÉE recipe"}}]
    result = create_argument_precision_evaluator(expected)(outputs=actual)
    assert result["score"] == pytest.approx((1.0 + 2 / 3) / 2)


def test_argument_precision_with_nothing_expected_is_one():
    assert create_argument_precision_evaluator([])(outputs=BITCOIN_RUN)["score"] == 1.0


async def test_async_twin_of_a_metric():
    result = await create_tool_order_evaluator(["a"]).as_async()(outputs=names("a"))
    assert result["score"] == 1.0
