"""JSON rendering: the whole run as one document a script or dashboard can read.

Every case × repetition appears with the run id, its id, status, tags, ``{key: score}``,
verdicts, latency, tokens, cost and error, next to the run's identity and the report's
aggregates. Text is verbatim (JSON escaping is all it needs); ``json.loads`` of the
output gives the data back.
"""

from __future__ import annotations

import json
from typing import Any

from lg_eval.experiments.results import CaseResult, ExperimentRun
from lg_eval.reports.build import build_report
from lg_eval.reports.model import CaseReport, Report

SCHEMA = "lg_eval.report/1"


def render_json(report: Report | ExperimentRun, *, indent: int | None = 2) -> str:
    """The run as JSON (``report`` may be a :class:`Report` or the run itself)."""
    if isinstance(report, ExperimentRun):
        report = build_report(report)
    document = report_document(report)
    document["results"] = [result_entry(report.info.run_id, case) for case in report.cases]
    return json.dumps(document, indent=indent, ensure_ascii=False)


def report_document(report: Report) -> dict[str, Any]:
    """The JSON document of ``report`` without its ``results`` list (which a caller fills,
    from the report's cases or streamed from the store)."""
    return {
        "schema": SCHEMA,
        "run": report.info.model_dump(mode="json"),
        "summary": report.summary.model_dump(mode="json"),
        "evaluators": [e.model_dump(mode="json") for e in report.evaluators],
        "tags": [t.model_dump(mode="json") for t in report.tags],
        "results": [],
        "trend": [point.model_dump(mode="json") for point in report.trend],
        "comparison": report.comparison.model_dump(mode="json") if report.comparison else None,
    }


def result_entry(run_id: str, case: CaseReport | CaseResult) -> dict[str, Any]:
    """One case × repetition of the ``results`` list (a report's case or a stored result)."""
    return {
        "run_id": run_id,
        "case_id": case.case_id,
        "repetition": case.repetition,
        "status": case.status,
        "tags": case.tags,
        "scores": {line.key: line.score for line in case.scores},
        "passed": {line.key: line.passed for line in case.scores},
        "latency_s": case.latency_s,
        "tokens": case.tokens,
        "cost": case.cost,
        "attempts": case.attempts,
        "error": case.error,
    }


__all__ = ["SCHEMA", "render_json", "report_document", "result_entry"]
