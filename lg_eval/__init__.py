"""lg_eval: turn checkpointed LangGraph threads into trajectories and score them."""

from lg_eval.errors import (
    CheckpointNotFoundError,
    ExtractionError,
    InvalidConfigError,
    InvalidOptionError,
    LgEvalError,
    MissingCheckpointerError,
    ThreadNotFoundError,
    TrajectoryFormatError,
)
from lg_eval.evaluators._base import EvaluatorResult, Feedback, Score
from lg_eval.extract import ExtractionWarning, aextract_thread, extract_thread
from lg_eval.trajectory import (
    GraphTrajectory,
    InterruptRecord,
    StateEdit,
    Superstep,
    TaskRun,
    ThreadTrajectory,
    Turn,
)

__all__ = [
    "CheckpointNotFoundError",
    "EvaluatorResult",
    "ExtractionError",
    "ExtractionWarning",
    "Feedback",
    "GraphTrajectory",
    "InterruptRecord",
    "InvalidConfigError",
    "InvalidOptionError",
    "LgEvalError",
    "MissingCheckpointerError",
    "Score",
    "StateEdit",
    "Superstep",
    "TaskRun",
    "ThreadNotFoundError",
    "ThreadTrajectory",
    "TrajectoryFormatError",
    "Turn",
    "aextract_thread",
    "extract_thread",
]
