"""What ``run``, ``report`` and ``compare`` share about judges and people's labels:
``--min-judge-kappa`` (its option, its parser, its gate) and the report's calibration."""

from __future__ import annotations

from collections.abc import Collection
from typing import Annotated

import typer

from lg_eval.cli._common import fail, parse_pairs, say
from lg_eval.experiments import ResultStore
from lg_eval.reports import Report

MinJudgeKappa = Annotated[
    list[str] | None,
    typer.Option(
        metavar="KEY=MIN",
        help="Trust the gate only if judge KEY agrees with people's labels in the store at "
        "Cohen's kappa >= MIN (-1..1; repeatable): exit 1 when it was never calibrated "
        "(no label pairs with its verdicts) or falls short. See lg-eval calibrate.",
    ),
]


def judge_minimums(items: list[str] | None) -> dict[str, float]:
    """``--min-judge-kappa KEY=MIN`` items, each minimum in [-1, 1]; a bad one is a usage
    error (exit 2), found before anything runs."""
    minimums = parse_pairs(items or [], "--min-judge-kappa", float)
    for key, minimum in minimums.items():
        if not -1 <= minimum <= 1:
            fail(f"--min-judge-kappa {key}={minimum:g}: kappa is between -1 and 1")
    return minimums


def judges_trusted(store: ResultStore, minimums: dict[str, float], keys: Collection[str]) -> bool:
    """Whether every judge in ``minimums`` agrees with people enough to gate on; each one
    that does not is said on stderr. A key the run does not have is a usage error (exit 2):
    a misspelt key would otherwise gate on nothing."""
    from lg_eval.labels import judge_gate_problems

    for key in minimums:
        if key not in keys:
            known = ", ".join(sorted(keys)) or "none"
            fail(f"--min-judge-kappa {key}: the run has no feedback key {key!r} (keys: {known})")
    _, problems = judge_gate_problems(store, minimums)
    for problem in problems:
        say(f"lg-eval: {problem}")
    return not problems


def calibrated(report: Report, store: ResultStore) -> Report:
    """``report`` with its labelled judges' agreement with people (see
    :func:`lg_eval.reports.with_calibration`)."""
    from lg_eval.reports import with_calibration

    return with_calibration(report, store)
