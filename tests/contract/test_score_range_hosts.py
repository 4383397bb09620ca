"""One range rule in every host: a plain function that declares no range scores a bool or
0..1; 7, -0.1, NaN and infinity become an error feedback with score None and the reason."""

from __future__ import annotations

import math
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from lg_eval._evaluator import evaluator_of
from lg_eval.experiments import CaseEvaluator
from lg_eval.experiments._score import score_rows
from lg_eval.langsmith import mean_score
from lg_eval.nodes import (
    EvalFeedback,
    EvalNode,
    EvalSpec,
    EvaluationResult,
    create_evaluation_graph,
)
from lg_eval.scoring import call_evaluators, read_outcome
from lg_eval.sweeps._worker import resolve_evaluators
from tests.nodes.hosts_contract import run

UNDECLARED = (
    "outside the range of an evaluator that declares none (a bool or a number from 0 to 1; "
    "declare score_range for another scale)"
)
REFUSED = [
    (7, f"evaluator 'plain' produced the score 7, {UNDECLARED}"),
    (-0.1, f"evaluator 'plain' produced the score -0.1, {UNDECLARED}"),
    (math.nan, "evaluator 'plain' produced a non-finite score (nan)"),
    (math.inf, "evaluator 'plain' produced a non-finite score (inf)"),
]
KEPT = [True, 1, 0.5]


def plain_returning(value: Any, name: str = "plain") -> Any:
    def plain(**_: Any) -> Any:
        return value

    plain.__name__ = name
    return plain


def rows_of(name: str, evaluator: Any, thresholds: dict[str, float]) -> Any:
    """The rows the runner's scoring step writes for ``evaluator`` on one run."""
    call = CaseEvaluator(name, evaluator).calling("run", None, None)
    (outcome,) = call_evaluators([call]).run()
    return score_rows(name, read_outcome(call, outcome), thresholds)


@pytest.mark.parametrize(("score", "why"), REFUSED)
def test_an_eval_node_stores_a_refused_score_as_an_error(tmp_path, score, why):
    state = run(EvalNode([EvalSpec(plain_returning(score), threshold=0.5)]), tmp_path / "db.sqlite")
    (record,) = [EvalFeedback.model_validate(r) for r in state["evaluations"]]
    assert (record.score, record.passed, record.error) == (None, None, f"InvalidScoreError: {why}")


@pytest.mark.parametrize("score", KEPT)
def test_an_eval_node_keeps_a_bool_or_unit_score(tmp_path, score):
    state = run(EvalNode([EvalSpec(plain_returning(score), threshold=0.5)]), tmp_path / "db.sqlite")
    (record,) = [EvalFeedback.model_validate(r) for r in state["evaluations"]]
    assert (record.score, record.passed, record.error) == (score, True, None)


@pytest.mark.parametrize(("score", "why"), REFUSED)
def test_the_evaluation_graph_fails_a_case_on_a_refused_score(score, why):
    graph = create_evaluation_graph([plain_returning(score)], checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}
    graph.invoke({"trajectory": {"steps": [["__start__", "agent"]]}}, config)
    result = EvaluationResult.model_validate(graph.get_state(config).values["result"])
    (record,) = result.results
    assert (record.score, record.error) == (None, f"InvalidScoreError: {why}")
    assert (result.score, result.passed) == (None, False)


@pytest.mark.parametrize(("score", "why"), REFUSED)
def test_the_runner_records_a_refused_score_as_an_error_row(score, why):
    evaluator = evaluator_of(plain_returning(score))
    assert evaluator is not None
    (row,), _ = rows_of("plain", evaluator, {})
    assert (row.score, row.passed, row.error) == (None, None, f"InvalidScoreError: {why}")


@pytest.mark.parametrize("score", KEPT)
def test_the_runner_keeps_a_bool_or_unit_score(score):
    evaluator = evaluator_of(plain_returning(score))
    assert evaluator is not None
    (row,), _ = rows_of("plain", evaluator, {"plain": 0.5})
    assert (row.score, row.passed, row.error) == (score, True, None)


@pytest.mark.parametrize(("score", "why"), REFUSED)
def test_a_sweep_wraps_a_plain_function_under_the_same_rule(score, why):
    ((name, evaluator),) = resolve_evaluators([plain_returning(score)])
    (row,), _ = rows_of(name, evaluator, {})
    assert (name, row.score, row.error) == ("plain", None, f"InvalidScoreError: {why}")


@pytest.mark.parametrize(("score", "why"), REFUSED)
def test_a_langsmith_summary_leaves_refused_scores_out_of_the_mean(score, why):
    """A refused score is that row's error, as in a run: counted apart, with its reason."""
    summary = mean_score(plain_returning(score), plain_returning(0.5, "half"))
    (refused, kept) = summary(outputs=["a", "b"], reference_outputs=[None, None], inputs=[{}, {}])[
        "results"
    ]
    assert refused == {
        "key": "plain:mean",
        "score": None,
        "comment": f"mean of 0 scores; 2 errored (InvalidScoreError: {why})",
    }
    assert kept["score"] == 0.5
