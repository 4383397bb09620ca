"""Experiments: run a graph over a golden dataset, score every case, keep the results.

:func:`run_experiment` / :func:`arun_experiment` play each case × repetition on a
fresh thread, score it and write it to the results store (:func:`open_store`) as
it finishes; a run id resumes. :mod:`lg_eval.experiments.aggregate` holds the
aggregates (pass@k, pass^k, mean scores, latency percentiles, cost; a run's headline
numbers are :attr:`lg_eval.reports.Report.summary`) and
:func:`compare_runs` diffs two runs case by case. Wherever it changes nothing but speed,
a run scores its cases in a second process while this one plays the next ones
(``scoring=`` of :func:`run_experiment`).

:func:`score_thread` is the one scoring step (an extracted thread and its
:class:`CaseEvaluator` list in, the scored :class:`CaseResult` out), shared by the
runner, the scoring process and sweeps.
"""

from lg_eval.errors import RunInUseError, ScoringProcessError
from lg_eval.experiments._scoring_choice import Scoring
from lg_eval.experiments.aggregate import (
    latency_percentiles,
    mean_scores,
    pass_at_k,
    pass_hat_k,
    percentile,
)
from lg_eval.experiments.compare import compare_runs
from lg_eval.experiments.judge_cache import JudgeCache
from lg_eval.experiments.options import Progress, RunOptions
from lg_eval.experiments.results import (
    CaseChange,
    CaseResult,
    Comparison,
    ExperimentRun,
    PlayedTurnRecord,
    RunInfo,
    ScoreRow,
    SimulationRecord,
)
from lg_eval.experiments.runner import arun_experiment, run_experiment
from lg_eval.experiments.scoring import CaseEvaluator, score_thread
from lg_eval.experiments.store import ResultStore, StoreError, open_store

__all__ = [
    "CaseChange",
    "CaseEvaluator",
    "CaseResult",
    "Comparison",
    "ExperimentRun",
    "JudgeCache",
    "PlayedTurnRecord",
    "Progress",
    "ResultStore",
    "RunInUseError",
    "RunInfo",
    "RunOptions",
    "ScoreRow",
    "Scoring",
    "ScoringProcessError",
    "SimulationRecord",
    "StoreError",
    "arun_experiment",
    "compare_runs",
    "latency_percentiles",
    "mean_scores",
    "open_store",
    "pass_at_k",
    "pass_hat_k",
    "percentile",
    "run_experiment",
    "score_thread",
]
