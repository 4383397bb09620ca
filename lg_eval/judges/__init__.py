"""LLM judges: evaluators that ask a model whether a trajectory was sensible.

* :func:`create_graph_trajectory_llm_as_judge` judges a LangGraph thread's route
  through the graph (``graph_trajectory_accuracy``);
* :func:`create_trajectory_llm_as_judge` judges a message/tool-call trajectory
  (``trajectory_accuracy``);
* :func:`create_rubric_judge` grades several rubric dimensions at once;
* :func:`create_pairwise_trajectory_judge` picks the better of two trajectories;
* :func:`create_goal_completion_judge`, :func:`create_user_frustration_judge` and
  :func:`create_knowledge_retention_judge` grade a whole conversation (rubric presets).

:func:`structured_answer` lends the judges' way of getting a structured answer from a
chat model (one tool call, checked, retried) to the player's simulated user; :func:`escape`
is how every prompt fences text written by strangers.

:class:`RateLimiter` keeps every judge call of a process under a provider's
:class:`RateLimits` (requests and tokens per minute, calls in flight).

Each returns an :class:`lg_eval.Evaluator` (await it with ``.aevaluate``).
All share :class:`JudgeOptions` (model, retries, timeouts, consensus sampling,
a prompt budget) and never raise when the model fails: the result then has
``score=None`` and ``metadata["error"]``.
"""

from lg_eval.evaluators._registry import register_evaluator
from lg_eval.judges._ask import StructuredAnswer, structured_answer
from lg_eval.judges._consensus import REDUCERS
from lg_eval.judges._conversation import (
    create_goal_completion_judge,
    create_knowledge_retention_judge,
    create_user_frustration_judge,
)
from lg_eval.judges._graph import (
    create_async_graph_trajectory_llm_as_judge,
    create_graph_trajectory_llm_as_judge,
)
from lg_eval.judges._limits import JudgeConcurrency, set_judge_concurrency
from lg_eval.judges._model import DEFAULT_MODEL, MODEL_ENV, REQUEST_HOOK, RequestHook, use_hook
from lg_eval.judges._options import JudgeOptions
from lg_eval.judges._pairwise import (
    create_pairwise_trajectory_judge,
)
from lg_eval.judges._prompts import (
    GRAPH_TRAJECTORY_ACCURACY_PROMPT,
    PAIRWISE_TRAJECTORY_PROMPT,
    RUBRIC_PROMPT,
    TRAJECTORY_ACCURACY_PROMPT,
    TRAJECTORY_ACCURACY_PROMPT_WITH_REFERENCE,
)
from lg_eval.judges._rate_limits import LimiterStats, RateLimiter, RateLimits
from lg_eval.judges._retry import RetryPolicy, is_transient
from lg_eval.judges._rubric import (
    DEFAULT_RUBRIC,
    RubricDimension,
    create_rubric_judge,
)
from lg_eval.judges._schema import OutputSpec
from lg_eval.judges._text import escape
from lg_eval.judges._trajectory import (
    create_async_trajectory_llm_as_judge,
    create_trajectory_llm_as_judge,
)
from lg_eval.judges._usage import Usage

# REQUEST_HOOK, OutputSpec and Usage are the extension points for what wraps model calls
# (lg_eval.experiments' judge cache, the RateLimiter): the hook sees each request, its answer
# schema and cost; hooks compose (lg_eval.judges._model.use_hook).

# Judges by name, for dataset files and configs ("graph_trajectory_accuracy"); the model
# a judge uses is only resolved on its first call, so registering costs nothing.
register_evaluator("graph_trajectory_accuracy", create_graph_trajectory_llm_as_judge)
register_evaluator("trajectory_accuracy", create_trajectory_llm_as_judge)
register_evaluator("rubric", create_rubric_judge)
register_evaluator("goal_completion", create_goal_completion_judge)
register_evaluator("user_frustration", create_user_frustration_judge)
register_evaluator("knowledge_retention", create_knowledge_retention_judge)

__all__ = [
    "DEFAULT_MODEL",
    "DEFAULT_RUBRIC",
    "GRAPH_TRAJECTORY_ACCURACY_PROMPT",
    "MODEL_ENV",
    "PAIRWISE_TRAJECTORY_PROMPT",
    "REDUCERS",
    "REQUEST_HOOK",
    "RUBRIC_PROMPT",
    "TRAJECTORY_ACCURACY_PROMPT",
    "TRAJECTORY_ACCURACY_PROMPT_WITH_REFERENCE",
    "JudgeConcurrency",
    "JudgeOptions",
    "LimiterStats",
    "OutputSpec",
    "RateLimiter",
    "RateLimits",
    "RequestHook",
    "RetryPolicy",
    "RubricDimension",
    "StructuredAnswer",
    "Usage",
    "create_async_graph_trajectory_llm_as_judge",
    "create_async_trajectory_llm_as_judge",
    "create_goal_completion_judge",
    "create_graph_trajectory_llm_as_judge",
    "create_knowledge_retention_judge",
    "create_pairwise_trajectory_judge",
    "create_rubric_judge",
    "create_trajectory_llm_as_judge",
    "create_user_frustration_judge",
    "escape",
    "is_transient",
    "set_judge_concurrency",
    "structured_answer",
    "use_hook",
]
