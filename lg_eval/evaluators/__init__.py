"""Evaluators: functions that score trajectories and answers, LangSmith-style.

Every evaluator is called as ``evaluator(*, outputs, reference_outputs=None,
inputs=None, **kwargs)`` and returns ``{"key", "score", "comment",
"metadata"}``. Each has an async twin (``create_async_*`` for factories,
``*_async`` for ready evaluators) built from the same scoring core. Built-ins
are also available by name through :func:`get` (see :func:`available`).
"""

from lg_eval.evaluators import _catalog  # noqa: F401  (registers the built-ins)
from lg_eval.evaluators._base import (
    AsyncEvaluator,
    EvaluatorResult,
    Feedback,
    Score,
    SyncEvaluator,
    async_factory,
    evaluator_pair,
    make_async_evaluator,
    make_evaluator,
    to_async,
)
from lg_eval.evaluators._graph_view import GraphViewOptions
from lg_eval.evaluators._tool_args import TOOL_ARGS_MATCH_MODES
from lg_eval.evaluators.composite import (
    create_async_composite_evaluator,
    create_composite_evaluator,
)
from lg_eval.evaluators.graph_match import (
    GRAPH_MATCH_MODES,
    create_async_graph_trajectory_match_evaluator,
    create_graph_trajectory_match_evaluator,
    graph_trajectory_strict_match,
    graph_trajectory_strict_match_async,
)
from lg_eval.evaluators.graph_similarity import (
    create_async_graph_trajectory_similarity_evaluator,
    create_graph_trajectory_similarity_evaluator,
)
from lg_eval.evaluators.metrics_reasoning import (
    create_async_reasoning_coherence_evaluator,
    create_async_source_citation_evaluator,
    create_async_specialized_tool_evaluator,
    create_reasoning_coherence_evaluator,
    create_source_citation_evaluator,
    create_specialized_tool_evaluator,
)
from lg_eval.evaluators.metrics_run import (
    create_async_call_budget_evaluator,
    create_async_redundancy_evaluator,
    create_async_step_efficiency_evaluator,
    create_call_budget_evaluator,
    create_redundancy_evaluator,
    create_step_efficiency_evaluator,
)
from lg_eval.evaluators.metrics_tools import (
    create_argument_precision_evaluator,
    create_async_argument_precision_evaluator,
    create_async_tool_order_evaluator,
    create_async_tool_selection_evaluator,
    create_tool_order_evaluator,
    create_tool_selection_evaluator,
)
from lg_eval.evaluators.registry import available, get, get_async, register
from lg_eval.evaluators.text import (
    TEXT_METRICS,
    bleu,
    bleu_async,
    contains,
    contains_async,
    create_async_keywords_evaluator,
    create_async_text_evaluator,
    create_keywords_evaluator,
    create_text_evaluator,
    exact_match,
    exact_match_async,
    levenshtein,
    levenshtein_async,
    rouge_l,
    rouge_l_async,
    token_overlap,
    token_overlap_async,
    word_error_rate,
    word_error_rate_async,
)
from lg_eval.evaluators.text_json import (
    create_async_json_schema_evaluator,
    create_json_schema_evaluator,
    json_valid,
    json_valid_async,
)
from lg_eval.evaluators.tool_match import (
    TRAJECTORY_MATCH_MODES,
    create_async_trajectory_match_evaluator,
    create_trajectory_match_evaluator,
)
from lg_eval.evaluators.tool_sequence import (
    SEQUENCE_MODES,
    create_async_tool_sequence_evaluator,
    create_tool_sequence_evaluator,
)

# Unambiguous aliases for re-export from the package root.
get_evaluator = get
get_async_evaluator = get_async
register_evaluator = register
available_evaluators = available

__all__ = [
    "GRAPH_MATCH_MODES",
    "SEQUENCE_MODES",
    "TEXT_METRICS",
    "TOOL_ARGS_MATCH_MODES",
    "TRAJECTORY_MATCH_MODES",
    "AsyncEvaluator",
    "EvaluatorResult",
    "Feedback",
    "GraphViewOptions",
    "Score",
    "SyncEvaluator",
    "async_factory",
    "available",
    "available_evaluators",
    "bleu",
    "bleu_async",
    "contains",
    "contains_async",
    "create_argument_precision_evaluator",
    "create_async_argument_precision_evaluator",
    "create_async_call_budget_evaluator",
    "create_async_composite_evaluator",
    "create_async_graph_trajectory_match_evaluator",
    "create_async_graph_trajectory_similarity_evaluator",
    "create_async_json_schema_evaluator",
    "create_async_keywords_evaluator",
    "create_async_reasoning_coherence_evaluator",
    "create_async_redundancy_evaluator",
    "create_async_source_citation_evaluator",
    "create_async_specialized_tool_evaluator",
    "create_async_step_efficiency_evaluator",
    "create_async_text_evaluator",
    "create_async_tool_order_evaluator",
    "create_async_tool_selection_evaluator",
    "create_async_tool_sequence_evaluator",
    "create_async_trajectory_match_evaluator",
    "create_call_budget_evaluator",
    "create_composite_evaluator",
    "create_graph_trajectory_match_evaluator",
    "create_graph_trajectory_similarity_evaluator",
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
    "evaluator_pair",
    "exact_match",
    "exact_match_async",
    "get",
    "get_async",
    "get_async_evaluator",
    "get_evaluator",
    "graph_trajectory_strict_match",
    "graph_trajectory_strict_match_async",
    "json_valid",
    "json_valid_async",
    "levenshtein",
    "levenshtein_async",
    "make_async_evaluator",
    "make_evaluator",
    "register",
    "register_evaluator",
    "rouge_l",
    "rouge_l_async",
    "to_async",
    "token_overlap",
    "token_overlap_async",
    "word_error_rate",
    "word_error_rate_async",
]
