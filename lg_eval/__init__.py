"""lg_eval: turn checkpointed LangGraph threads into trajectories and score them.

The root holds the core: extraction, the trajectory models, the evaluator and
its feedback, the evaluator and judge factories, the eval-node entry points,
the experiment runner, the thread sweep and the errors. Each subpackage's ``__init__`` is the
documented face of the rest:
:mod:`lg_eval.evaluators` (ready text evaluators, modes, options),
:mod:`lg_eval.judges` (prompts, concurrency, models), :mod:`lg_eval.nodes`
(state records, routing helpers, the evaluation graph's models),
:mod:`lg_eval.extract`, :mod:`lg_eval.messages`, :mod:`lg_eval.inputs`,
:mod:`lg_eval.datasets` and :mod:`lg_eval.play` (golden cases and the turn
player), :mod:`lg_eval.experiments` (results, store, aggregates),
:mod:`lg_eval.reports`, :mod:`lg_eval.langsmith` and :mod:`lg_eval.testing`.

The names shared with agentevals and openevals (``create_trajectory_match_evaluator``,
``graph_trajectory_strict_match``, the judges, ...) are lg_eval's own evaluators, whose
feedback says what differed; the drop-ins returning the peers' exact dicts are in
:mod:`lg_eval.compat` (``lg_eval.compat.agentevals``, ``lg_eval.compat.openevals``).

The names are imported on first use (``lg_eval.X`` imports the module that holds X
then), so ``import lg_eval`` and the ``lg-eval`` command stay fast to start.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lg_eval.errors import (
        CheckpointNotFoundError,
        ExtractionError,
        InvalidConfigError,
        InvalidOptionError,
        JudgeError,
        LgEvalError,
        MissingCheckpointerError,
        ThreadNotFoundError,
        TrajectoryFormatError,
    )
    from lg_eval.evaluator import (
        AsyncEvaluator,
        Evaluator,
        make_evaluator,
    )
    from lg_eval.evaluators import (
        available_evaluators,
        create_argument_precision_evaluator,
        create_async_trajectory_match_evaluator,
        create_call_budget_evaluator,
        create_composite_evaluator,
        create_graph_trajectory_match_evaluator,
        create_graph_trajectory_similarity_evaluator,
        create_hitl_evaluator,
        create_json_schema_evaluator,
        create_keywords_evaluator,
        create_reasoning_coherence_evaluator,
        create_redundancy_evaluator,
        create_source_citation_evaluator,
        create_specialized_tool_evaluator,
        create_step_efficiency_evaluator,
        create_text_evaluator,
        create_tool_order_evaluator,
        create_tool_selection_evaluator,
        create_tool_sequence_evaluator,
        create_trajectory_match_evaluator,
        get_evaluator,
        graph_trajectory_strict_match,
        graph_trajectory_strict_match_async,
        register_evaluator,
    )
    from lg_eval.experiments import (
        arun_experiment,
        compare_runs,
        open_store,
        run_experiment,
    )
    from lg_eval.extract import (
        ExtractionWarning,
        aextract_langgraph_trajectory_from_thread,
        aextract_thread,
        extract_langgraph_trajectory_from_snapshots,
        extract_langgraph_trajectory_from_thread,
        extract_thread,
    )
    from lg_eval.feedback import Feedback
    from lg_eval.judges import (
        JudgeOptions,
        create_async_graph_trajectory_llm_as_judge,
        create_async_trajectory_llm_as_judge,
        create_graph_trajectory_llm_as_judge,
        create_pairwise_trajectory_judge,
        create_rubric_judge,
        create_trajectory_llm_as_judge,
    )
    from lg_eval.nodes import (
        EvalNode,
        EvalSpec,
        Evaluations,
        batch_evaluate,
        create_evaluation_graph,
        route_on_score,
    )
    from lg_eval.sweeps import sweep_threads
    from lg_eval.trajectory import (
        GraphTrajectory,
        InterruptRecord,
        StateEdit,
        Superstep,
        TaskRun,
        ThreadTrajectory,
        Turn,
    )

_HOMES: dict[str, tuple[str, ...]] = {
    "lg_eval.errors": (
        "CheckpointNotFoundError",
        "ExtractionError",
        "InvalidConfigError",
        "InvalidOptionError",
        "JudgeError",
        "LgEvalError",
        "MissingCheckpointerError",
        "ThreadNotFoundError",
        "TrajectoryFormatError",
    ),
    "lg_eval.evaluator": (
        "AsyncEvaluator",
        "Evaluator",
        "make_evaluator",
    ),
    "lg_eval.evaluators": (
        "available_evaluators",
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
        "get_evaluator",
        "graph_trajectory_strict_match",
        "graph_trajectory_strict_match_async",
        "register_evaluator",
    ),
    "lg_eval.experiments": (
        "arun_experiment",
        "compare_runs",
        "open_store",
        "run_experiment",
    ),
    "lg_eval.extract": (
        "ExtractionWarning",
        "aextract_langgraph_trajectory_from_thread",
        "aextract_thread",
        "extract_langgraph_trajectory_from_snapshots",
        "extract_langgraph_trajectory_from_thread",
        "extract_thread",
    ),
    "lg_eval.feedback": ("Feedback",),
    "lg_eval.judges": (
        "JudgeOptions",
        "create_async_graph_trajectory_llm_as_judge",
        "create_async_trajectory_llm_as_judge",
        "create_graph_trajectory_llm_as_judge",
        "create_pairwise_trajectory_judge",
        "create_rubric_judge",
        "create_trajectory_llm_as_judge",
    ),
    "lg_eval.nodes": (
        "EvalNode",
        "EvalSpec",
        "Evaluations",
        "batch_evaluate",
        "create_evaluation_graph",
        "route_on_score",
    ),
    "lg_eval.sweeps": ("sweep_threads",),
    "lg_eval.trajectory": (
        "GraphTrajectory",
        "InterruptRecord",
        "StateEdit",
        "Superstep",
        "TaskRun",
        "ThreadTrajectory",
        "Turn",
    ),
}
_HOME_OF = {name: module for module, names in _HOMES.items() for name in names}


def __getattr__(name: str) -> Any:
    """Import the module holding ``name`` on first use, and keep the name here."""
    module = _HOME_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'lg_eval' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


__all__ = [
    "AsyncEvaluator",
    "CheckpointNotFoundError",
    "EvalNode",
    "EvalSpec",
    "Evaluations",
    "Evaluator",
    "ExtractionError",
    "ExtractionWarning",
    "Feedback",
    "GraphTrajectory",
    "InterruptRecord",
    "InvalidConfigError",
    "InvalidOptionError",
    "JudgeError",
    "JudgeOptions",
    "LgEvalError",
    "MissingCheckpointerError",
    "StateEdit",
    "Superstep",
    "TaskRun",
    "ThreadNotFoundError",
    "ThreadTrajectory",
    "TrajectoryFormatError",
    "Turn",
    "aextract_langgraph_trajectory_from_thread",
    "aextract_thread",
    "arun_experiment",
    "available_evaluators",
    "batch_evaluate",
    "compare_runs",
    "create_argument_precision_evaluator",
    "create_async_graph_trajectory_llm_as_judge",
    "create_async_trajectory_llm_as_judge",
    "create_async_trajectory_match_evaluator",
    "create_call_budget_evaluator",
    "create_composite_evaluator",
    "create_evaluation_graph",
    "create_graph_trajectory_llm_as_judge",
    "create_graph_trajectory_match_evaluator",
    "create_graph_trajectory_similarity_evaluator",
    "create_hitl_evaluator",
    "create_json_schema_evaluator",
    "create_keywords_evaluator",
    "create_pairwise_trajectory_judge",
    "create_reasoning_coherence_evaluator",
    "create_redundancy_evaluator",
    "create_rubric_judge",
    "create_source_citation_evaluator",
    "create_specialized_tool_evaluator",
    "create_step_efficiency_evaluator",
    "create_text_evaluator",
    "create_tool_order_evaluator",
    "create_tool_selection_evaluator",
    "create_tool_sequence_evaluator",
    "create_trajectory_llm_as_judge",
    "create_trajectory_match_evaluator",
    "extract_langgraph_trajectory_from_snapshots",
    "extract_langgraph_trajectory_from_thread",
    "extract_thread",
    "get_evaluator",
    "graph_trajectory_strict_match",
    "graph_trajectory_strict_match_async",
    "make_evaluator",
    "open_store",
    "register_evaluator",
    "route_on_score",
    "run_experiment",
    "sweep_threads",
]
