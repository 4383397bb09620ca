"""Experiments: run a graph over a golden dataset, score every case, keep the results."""

from lg_eval.experiments.results import (
    CaseChange,
    CaseResult,
    Comparison,
    ExperimentRun,
    PlayedTurnRecord,
    RunInfo,
    ScoreRow,
)

__all__ = [
    "CaseChange",
    "CaseResult",
    "Comparison",
    "ExperimentRun",
    "PlayedTurnRecord",
    "RunInfo",
    "ScoreRow",
]
