"""The built-in evaluators, registered under their stable names (imported once by the package).

Names double as feedback keys wherever the key does not depend on a mode.
Options given to :func:`lg_eval.evaluators.get` go to the factory listed here.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from lg_eval.evaluators._approval_policy import create_approval_policy_evaluator
from lg_eval.evaluators._composite import create_composite_evaluator
from lg_eval.evaluators._graph_match import (
    create_graph_trajectory_match_evaluator,
    graph_trajectory_strict_match,
)
from lg_eval.evaluators._graph_similarity import create_graph_trajectory_similarity_evaluator
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
from lg_eval.evaluators._registry import register_builtin
from lg_eval.evaluators._text import TEXT_METRICS, create_keywords_evaluator, create_text_evaluator
from lg_eval.evaluators._text_json import create_json_schema_evaluator, json_valid
from lg_eval.evaluators._tool_match import create_trajectory_match_evaluator
from lg_eval.evaluators._tool_sequence import create_tool_sequence_evaluator

BUILTINS: dict[str, Callable[..., Any]] = {
    # graph trajectories
    "graph_trajectory_strict_match": graph_trajectory_strict_match,
    "graph_trajectory_match": create_graph_trajectory_match_evaluator,
    "graph_trajectory_similarity": create_graph_trajectory_similarity_evaluator,
    "hitl_match": create_hitl_evaluator,
    "hitl_policy": create_approval_policy_evaluator,
    # tool calls
    "trajectory_match": create_trajectory_match_evaluator,
    "tool_sequence": create_tool_sequence_evaluator,
    # agent metrics
    "tool_selection_accuracy": partial(create_tool_selection_evaluator, penalize_extra=False),
    "tool_selection_f1": partial(create_tool_selection_evaluator, penalize_extra=True),
    "tool_order": create_tool_order_evaluator,
    "argument_precision": create_argument_precision_evaluator,
    "step_efficiency": create_step_efficiency_evaluator,
    "redundancy": create_redundancy_evaluator,
    "call_budget": create_call_budget_evaluator,
    "reasoning_coherence": create_reasoning_coherence_evaluator,
    "specialized_tool_usage": create_specialized_tool_evaluator,
    "source_citation": create_source_citation_evaluator,
    "composite": create_composite_evaluator,
    # final answers
    **{metric: partial(create_text_evaluator, metric) for metric in TEXT_METRICS},
    "keywords": create_keywords_evaluator,
    "json_valid": json_valid,
    "json_schema": create_json_schema_evaluator,
}

NEEDS_REFERENCE: dict[str, bool | None] = {
    **dict.fromkeys(
        [
            "graph_trajectory_strict_match", "graph_trajectory_match",
            "graph_trajectory_similarity", "hitl_match", "trajectory_match", "tool_sequence",
            "tool_selection_accuracy", "tool_selection_f1", "tool_order", "argument_precision",
            "step_efficiency", *TEXT_METRICS, "keywords", "json_schema",
        ],
        True,
    ),
    **dict.fromkeys(
        ["redundancy", "call_budget", "reasoning_coherence", "specialized_tool_usage",
         "source_citation", "json_valid", "hitl_policy"],
        False,
    ),
    "composite": None,  # as its parts
}  # fmt: skip
"""Whether each built-in, made without options, needs ``reference_outputs`` (the text
metrics and ``keywords`` score an answer against the reference's; without one they have
nothing to compare). Options can supply what the reference would (``step_efficiency``'s
``expected``, ``tool_selection_*``'s ``expected_tools``), which the declaration does not
cover."""

for _name, _factory in BUILTINS.items():
    register_builtin(_name, _factory, needs_reference=NEEDS_REFERENCE[_name])
