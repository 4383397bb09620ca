"""Evaluators: score trajectories, tool calls and answers, LangSmith-style.

Every factory here returns an :class:`lg_eval.Evaluator`: call it as
``evaluator(*, outputs, reference_outputs=None, inputs=None)`` for the feedback
dict ``{"key", "score", "comment", "metadata"}``, or ``await
evaluator.aevaluate(...)`` for the same feedback with its I/O awaited. Each
evaluator reads its own field from dict-shaped ``outputs`` and
``reference_outputs`` (see :mod:`lg_eval._inputs`). Built-ins are also
available by name (:func:`get_evaluator`, :func:`available_evaluators`).

Families:

* graph trajectories: :func:`create_graph_trajectory_match_evaluator` (modes in
  :data:`GRAPH_MATCH_MODES`), :data:`graph_trajectory_strict_match`,
  :func:`create_graph_trajectory_similarity_evaluator`;
* human-in-the-loop: :func:`create_hitl_evaluator` (what was asked, what was answered),
  :func:`create_approval_policy_evaluator` (rules over the calls that ran and the human's
  decisions: :class:`ApprovalPolicy`);
* tool calls: :func:`create_trajectory_match_evaluator`,
  :func:`create_tool_sequence_evaluator`, and the metrics
  :func:`create_tool_selection_evaluator`, :func:`create_tool_order_evaluator`,
  :func:`create_argument_precision_evaluator`;
* runs: step efficiency, redundancy, call budget, reasoning coherence,
  specialized tools, source citation;
* final answers: :func:`create_text_evaluator` (:data:`TEXT_METRICS`) and the
  ready :data:`exact_match`, :data:`contains`, ..., keywords, JSON validity and
  schema;
* :func:`create_composite_evaluator`: a weighted mean of other evaluators.
"""

from lg_eval._feedback import FeedbackDict, ScoreRange, verdict
from lg_eval.evaluators import _catalog  # noqa: F401  (registers the built-ins)
from lg_eval.evaluators._approval_policy import (
    ApprovalPolicy,
    ArgBound,
    create_approval_policy_evaluator,
)
from lg_eval.evaluators._composite import create_composite_evaluator
from lg_eval.evaluators._graph_match import (
    GRAPH_MATCH_MODES,
    create_graph_trajectory_match_evaluator,
    graph_trajectory_strict_match,
    graph_trajectory_strict_match_async,
)
from lg_eval.evaluators._graph_similarity import create_graph_trajectory_similarity_evaluator
from lg_eval.evaluators._graph_view import GraphViewOptions
from lg_eval.evaluators._hitl import create_hitl_evaluator
from lg_eval.evaluators._metrics_reasoning import (
    create_reasoning_coherence_evaluator,
    create_source_citation_evaluator,
    create_specialized_tool_evaluator,
)
from lg_eval.evaluators._metrics_run import (
    create_call_budget_evaluator,
    create_redundancy_evaluator,
    create_step_efficiency_evaluator,
)
from lg_eval.evaluators._metrics_tools import (
    create_argument_precision_evaluator,
    create_tool_order_evaluator,
    create_tool_selection_evaluator,
)
from lg_eval.evaluators._registry import (
    available_evaluators,
    get_evaluator,
    near_name,
    needs_reference,
    reference_free_evaluators,
    register_evaluator,
    resolve_evaluator,
)
from lg_eval.evaluators._text import (
    TEXT_METRICS,
    bleu,
    contains,
    create_keywords_evaluator,
    create_text_evaluator,
    exact_match,
    levenshtein,
    rouge_l,
    token_overlap,
    word_error_rate,
)
from lg_eval.evaluators._text_json import create_json_schema_evaluator, json_valid
from lg_eval.evaluators._tool_args import TOOL_ARGS_MATCH_MODES
from lg_eval.evaluators._tool_match import (
    TRAJECTORY_MATCH_MODES,
    create_async_trajectory_match_evaluator,
    create_trajectory_match_evaluator,
)
from lg_eval.evaluators._tool_sequence import SEQUENCE_MODES, create_tool_sequence_evaluator

__all__ = [
    "GRAPH_MATCH_MODES",
    "SEQUENCE_MODES",
    "TEXT_METRICS",
    "TOOL_ARGS_MATCH_MODES",
    "TRAJECTORY_MATCH_MODES",
    "ApprovalPolicy",
    "ArgBound",
    "FeedbackDict",
    "GraphViewOptions",
    "ScoreRange",
    "available_evaluators",
    "bleu",
    "contains",
    "create_approval_policy_evaluator",
    "create_argument_precision_evaluator",
    "create_async_trajectory_match_evaluator",
    "create_call_budget_evaluator",
    "create_composite_evaluator",
    "create_graph_trajectory_match_evaluator",
    "create_graph_trajectory_similarity_evaluator",
    "create_hitl_evaluator",
    "create_json_schema_evaluator",
    "create_keywords_evaluator",
    "create_reasoning_coherence_evaluator",
    "create_redundancy_evaluator",
    "create_source_citation_evaluator",
    "create_specialized_tool_evaluator",
    "create_step_efficiency_evaluator",
    "create_text_evaluator",
    "create_tool_order_evaluator",
    "create_tool_selection_evaluator",
    "create_tool_sequence_evaluator",
    "create_trajectory_match_evaluator",
    "exact_match",
    "get_evaluator",
    "graph_trajectory_strict_match",
    "graph_trajectory_strict_match_async",
    "json_valid",
    "levenshtein",
    "near_name",
    "needs_reference",
    "reference_free_evaluators",
    "register_evaluator",
    "resolve_evaluator",
    "rouge_l",
    "token_overlap",
    "verdict",
    "word_error_rate",
]
