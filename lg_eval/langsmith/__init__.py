"""LangSmith without glue, and offline that sends nothing (see ``docs/langsmith.md``)."""

from lg_eval.langsmith._errors import (
    LangSmithDatasetError,
    LangSmithIntegrationError,
    MissingAPIKeyError,
    OfflineError,
)
from lg_eval.langsmith._offline import OfflineClient, is_offline, offline, offline_client
from lg_eval.langsmith._target import (
    TargetOutputs,
    agraph_target,
    aplay_outputs,
    graph_target,
    outputs_of,
    play_outputs,
)

__all__ = [
    "LangSmithDatasetError",
    "LangSmithIntegrationError",
    "MissingAPIKeyError",
    "OfflineClient",
    "OfflineError",
    "TargetOutputs",
    "agraph_target",
    "aplay_outputs",
    "graph_target",
    "is_offline",
    "offline",
    "offline_client",
    "outputs_of",
    "play_outputs",
]
