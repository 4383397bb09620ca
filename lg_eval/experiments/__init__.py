"""Experiments: run a graph over a golden dataset, score every case, keep the results.

:func:`run_experiment` / :func:`arun_experiment` play each case × repetition on a fresh
thread, score it and write it to the results store (:func:`open_store`) as it finishes;
a run id resumes. Their options are :class:`RunOptions` (each one's contract and default
written there once). :func:`compare_runs` diffs two runs case by case; the aggregates
(pass@k, pass^k, mean scores, latency percentiles) are computed here once for every report.

:func:`score_thread` is the one scoring step (an extracted thread and its
:class:`CaseEvaluator` list in, the scored :class:`CaseResult` out), shared by the runner,
sweeps and replay; :class:`RunLifecycle` is the one way a run (an experiment, a sweep) is
begun, counted and recorded in the store, holding its run id's :class:`Lease`.

The modules below are private; what other packages and users need is exported here.
"""

from lg_eval.errors import LeaseLostError, RunInUseError, StoreError
from lg_eval.experiments._compare import (
    CaseCounts,
    Latencies,
    by_case,
    case_change,
    case_counts,
    case_mean_scores,
    compare_runs,
    latencies,
    latency_percentiles,
    mean_scores,
    paired_tests,
    pass_at_k,
    pass_hat_k,
    percentile,
    total_cost,
)
from lg_eval.experiments._database import SCHEMA_VERSION
from lg_eval.experiments._judges import (
    DEFAULT_CACHE,
    JudgeCache,
    JudgeServices,
    LocalJudgeServices,
    judge_services,
    services_record,
)
from lg_eval.experiments._lifecycle import Lease, RunLifecycle, new_run_id
from lg_eval.experiments._options import (
    DatasetCheck,
    ExecutorOptions,
    Progress,
    RunOptions,
    check_dataset,
)
from lg_eval.experiments._results import (
    CaseChange,
    CaseResult,
    CaseStatus,
    Comparison,
    ExperimentRun,
    PlayedTurnRecord,
    RedactOption,
    Redactor,
    RunInfo,
    RunStatus,
    ScoreRow,
    SimulationRecord,
    make_redactor,
    redact_strings,
    redacted,
    scrub_secrets,
)
from lg_eval.experiments._run import arun_experiment, run_experiment
from lg_eval.experiments._score import (
    CaseEvaluator,
    ReferenceGap,
    reference_gap,
    score_thread,
    status_of,
)
from lg_eval.experiments._store import ResultStore, grouped_scores, open_store, stored, with_scores

__all__ = [
    "DEFAULT_CACHE",
    "SCHEMA_VERSION",
    "CaseChange",
    "CaseCounts",
    "CaseEvaluator",
    "CaseResult",
    "CaseStatus",
    "Comparison",
    "DatasetCheck",
    "ExecutorOptions",
    "ExperimentRun",
    "JudgeCache",
    "JudgeServices",
    "Latencies",
    "Lease",
    "LeaseLostError",
    "LocalJudgeServices",
    "PlayedTurnRecord",
    "Progress",
    "RedactOption",
    "Redactor",
    "ReferenceGap",
    "ResultStore",
    "RunInUseError",
    "RunInfo",
    "RunLifecycle",
    "RunOptions",
    "RunStatus",
    "ScoreRow",
    "SimulationRecord",
    "StoreError",
    "arun_experiment",
    "by_case",
    "case_change",
    "case_counts",
    "case_mean_scores",
    "check_dataset",
    "compare_runs",
    "grouped_scores",
    "judge_services",
    "latencies",
    "latency_percentiles",
    "make_redactor",
    "mean_scores",
    "new_run_id",
    "open_store",
    "paired_tests",
    "pass_at_k",
    "pass_hat_k",
    "percentile",
    "redact_strings",
    "redacted",
    "reference_gap",
    "run_experiment",
    "score_thread",
    "scrub_secrets",
    "services_record",
    "status_of",
    "stored",
    "total_cost",
    "with_scores",
]
