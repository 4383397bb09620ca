"""lg_eval: turn checkpointed LangGraph threads into trajectories and score them.

The root holds the core: extraction and the trajectory models, the evaluator and its
feedback, evaluator lookup, a rubric judge, the eval-node entry points, the experiment
runner, the thread sweep and the errors users catch first. Everything else is imported from
the subpackage that owns it, each ``__init__`` its documented face:
:mod:`lg_eval.evaluators` (every evaluator factory, the text metrics, ``verdict``),
:mod:`lg_eval.judges` (LLM judges, prompts, concurrency), :mod:`lg_eval.nodes`,
:mod:`lg_eval.extract` (also the trajectory records), :mod:`lg_eval.messages`,
:mod:`lg_eval.datasets`, :mod:`lg_eval.play`, :mod:`lg_eval.experiments`,
:mod:`lg_eval.reports`, :mod:`lg_eval.langsmith`, :mod:`lg_eval.testing`,
:mod:`lg_eval.errors` (the whole error tree). Modules named ``_x`` are private.

The drop-ins returning agentevals' and openevals' exact dicts are in :mod:`lg_eval.compat`
(``lg_eval.compat.agentevals``, ``lg_eval.compat.openevals``); the same names in
:mod:`lg_eval.evaluators`, :mod:`lg_eval.judges` and :mod:`lg_eval.extract` are lg_eval's
own, whose feedback says what differed.

The names are imported on first use (``lg_eval.X`` imports the module that holds X
then), so ``import lg_eval`` and the ``lg-eval`` command stay fast to start.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lg_eval._evaluator import AsyncEvaluator, Evaluator, make_evaluator
    from lg_eval._feedback import Feedback
    from lg_eval._trajectory import GraphTrajectory, ThreadTrajectory, Turn
    from lg_eval.errors import ExtractionError, InvalidOptionError, LgEvalError
    from lg_eval.evaluators import available_evaluators, get_evaluator, register_evaluator
    from lg_eval.experiments import arun_experiment, compare_runs, open_store, run_experiment
    from lg_eval.extract import ExtractionWarning, aextract_thread, extract_thread
    from lg_eval.judges import JudgeOptions, create_rubric_judge
    from lg_eval.nodes import (
        EvalNode,
        EvalSpec,
        batch_evaluate,
        create_evaluation_graph,
        route_on_score,
    )
    from lg_eval.sweeps import sweep_threads

_HOMES: dict[str, tuple[str, ...]] = {
    "lg_eval._evaluator": (
        "AsyncEvaluator",
        "Evaluator",
        "make_evaluator",
    ),
    "lg_eval._feedback": ("Feedback",),
    "lg_eval._trajectory": (
        "GraphTrajectory",
        "ThreadTrajectory",
        "Turn",
    ),
    "lg_eval.errors": (
        "ExtractionError",
        "InvalidOptionError",
        "LgEvalError",
    ),
    "lg_eval.evaluators": (
        "available_evaluators",
        "get_evaluator",
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
        "aextract_thread",
        "extract_thread",
    ),
    "lg_eval.judges": (
        "JudgeOptions",
        "create_rubric_judge",
    ),
    "lg_eval.nodes": (
        "EvalNode",
        "EvalSpec",
        "batch_evaluate",
        "create_evaluation_graph",
        "route_on_score",
    ),
    "lg_eval.sweeps": ("sweep_threads",),
}
_HOME_OF = {name: module for module, names in _HOMES.items() for name in names}
_SUBPACKAGES = frozenset(
    {
        "calibration",
        "cli",
        "compat",
        "datasets",
        "evaluators",
        "executors",
        "experiments",
        "extract",
        "judges",
        "labels",
        "langsmith",
        "nodes",
        "play",
        "replay",
        "reports",
        "scoring",
        "server",
        "stats",
        "sweeps",
        "testing",
        "viewer",
    }
)


def __getattr__(name: str) -> Any:
    """Import the module holding ``name`` on first use, and keep the name here; a subpackage
    (``lg_eval.evaluators``) is imported on first use as well."""
    if name in _SUBPACKAGES:
        return importlib.import_module(f"lg_eval.{name}")
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
    "EvalNode",
    "EvalSpec",
    "Evaluator",
    "ExtractionError",
    "ExtractionWarning",
    "Feedback",
    "GraphTrajectory",
    "InvalidOptionError",
    "JudgeOptions",
    "LgEvalError",
    "ThreadTrajectory",
    "Turn",
    "aextract_thread",
    "arun_experiment",
    "available_evaluators",
    "batch_evaluate",
    "compare_runs",
    "create_evaluation_graph",
    "create_rubric_judge",
    "extract_thread",
    "get_evaluator",
    "make_evaluator",
    "open_store",
    "register_evaluator",
    "route_on_score",
    "run_experiment",
    "sweep_threads",
]
