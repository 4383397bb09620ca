"""Evaluators as LangGraph nodes.

* :class:`EvalNode` runs evaluators inside the user's own graph and appends
  their feedback to a state key declared with :data:`Evaluations`;
  :func:`route_on_score` routes on the result (self-check, revise, escalate).
* :func:`create_evaluation_graph` is a checkpointed evaluation graph:
  extract, every evaluator in parallel, aggregate, optional human review;
  :func:`batch_evaluate` runs it over many threads with bounded concurrency.
"""

from lg_eval.errors import EvaluatorTimeoutError, InvalidScoreError, ReferenceKeyError
from lg_eval.nodes._batch import BatchItem, abatch_evaluate, batch_evaluate
from lg_eval.nodes._eval_node import (
    THREAD,
    EvalNode,
    FromConfig,
    FromState,
    from_config,
    from_state,
)
from lg_eval.nodes._evaluation_graph import GRAPHS_KEY, create_evaluation_graph
from lg_eval.nodes._evaluation_state import (
    EvalCase,
    EvaluationResult,
    Review,
    ReviewDecision,
    TargetRef,
)
from lg_eval.nodes._routing import (
    evaluation_passed,
    latest_evaluation,
    route_on_score,
    weighted_score,
)
from lg_eval.nodes._spec import EvalSpec
from lg_eval.nodes._state import EvalFeedback, EvalMessagesState, Evaluations, add_evaluations

__all__ = [
    "GRAPHS_KEY",
    "THREAD",
    "BatchItem",
    "EvalCase",
    "EvalFeedback",
    "EvalMessagesState",
    "EvalNode",
    "EvalSpec",
    "EvaluationResult",
    "Evaluations",
    "EvaluatorTimeoutError",
    "FromConfig",
    "FromState",
    "InvalidScoreError",
    "ReferenceKeyError",
    "Review",
    "ReviewDecision",
    "TargetRef",
    "abatch_evaluate",
    "add_evaluations",
    "batch_evaluate",
    "create_evaluation_graph",
    "evaluation_passed",
    "from_config",
    "from_state",
    "latest_evaluation",
    "route_on_score",
    "weighted_score",
]
