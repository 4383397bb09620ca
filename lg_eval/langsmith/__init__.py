"""LangSmith without glue, and offline that sends nothing (see ``docs/langsmith.md``).

* :func:`graph_target` / :func:`agraph_target`: a ``langsmith.evaluate`` /
  ``aevaluate`` target playing each example's ``turns`` on a fresh checkpointed
  thread and returning ``{"trajectory", "thread", "messages", "output"}``, which
  lg_eval evaluators read unwrapped.
* :func:`push_dataset` / :func:`pull_dataset`: lg_eval datasets to LangSmith
  examples and back, idempotently.
* :func:`pass_rate` / :func:`mean_score`: summary evaluators per feedback key.
* :func:`run_langsmith_experiment`: push and run an uploaded experiment (the
  ``lg-eval run --langsmith`` path).
* :func:`offline_client` and :func:`offline`: a client that cannot send, and a
  block in which nothing is traced.
"""

from lg_eval._offline import OfflineClient, is_offline, offline, offline_client
from lg_eval.langsmith._datasets import (
    PushResult,
    case_from_example,
    case_to_example,
    example_id,
    pull_dataset,
    push_dataset,
)
from lg_eval.langsmith._errors import (
    LangSmithDatasetError,
    LangSmithIntegrationError,
    MissingAPIKeyError,
    MissingTargetError,
    OfflineError,
)
from lg_eval.langsmith._experiment import require_api_key, run_langsmith_experiment
from lg_eval.langsmith._summary import mean_score, pass_rate
from lg_eval.langsmith._target import (
    Checkpointer,
    TargetOutputs,
    agraph_target,
    aplay_outputs,
    case_from_inputs,
    graph_target,
    outputs_of,
    play_outputs,
)

__all__ = [
    "Checkpointer",
    "LangSmithDatasetError",
    "LangSmithIntegrationError",
    "MissingAPIKeyError",
    "MissingTargetError",
    "OfflineClient",
    "OfflineError",
    "PushResult",
    "TargetOutputs",
    "agraph_target",
    "aplay_outputs",
    "case_from_example",
    "case_from_inputs",
    "case_to_example",
    "example_id",
    "graph_target",
    "is_offline",
    "mean_score",
    "offline",
    "offline_client",
    "outputs_of",
    "pass_rate",
    "play_outputs",
    "pull_dataset",
    "push_dataset",
    "require_api_key",
    "run_langsmith_experiment",
]
