"""JUnit XML rendering: a run as a test suite CI systems already know how to show.

One ``<testsuite>`` per run (its run id, dataset and pass rate as properties) and one
``<testcase>`` per case × repetition; a failed case carries a ``<failure>`` whose message
names the failing feedback, an error or timeout an ``<error>``. The document is built
with ``xml.etree`` (which escapes ``&``, ``<``, ``>`` and quotes; no CDATA, so ``]]>`` is
only text) after :func:`~lg_eval.reports._text.visible` has replaced the characters
XML 1.0 cannot hold, so any content gives a well-formed file.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from lg_eval._arguments import validated
from lg_eval._visible import visible
from lg_eval.experiments import ScoreRow
from lg_eval.reports._model import Report, ReportCase, no_verdict, reason
from lg_eval.reports._text import number, percent, shorten

MESSAGE_LIMIT = 500


@validated
def render_junit(report: Report) -> str:
    """The report as a JUnit XML document (``<testsuites>`` with one ``<testsuite>``)."""
    summary = report.summary
    failures, errors = summary.counts.failed, summary.counts.error + summary.counts.timeout
    total_time = f"{sum(case.result.latency_s for case in report.cases):.3f}"
    suites = ET.Element(
        "testsuites",
        _attrs(
            name="lg_eval",
            tests=summary.results,
            failures=failures,
            errors=errors,
            time=total_time,
        ),
    )
    suite = ET.SubElement(
        suites,
        "testsuite",
        _attrs(
            name=f"{report.info.dataset} [{report.info.run_id}]",
            tests=summary.results,
            failures=failures,
            errors=errors,
            skipped=0,
            time=total_time,
            timestamp=report.info.started_at.isoformat(),
        ),
    )
    properties = ET.SubElement(suite, "properties")
    for name, value in (
        ("run_id", report.info.run_id),
        ("dataset", report.info.dataset),
        ("dataset_hash", report.info.dataset_hash),
        ("target", report.info.target),
        ("git_commit", report.info.git_commit or ""),
        ("pass_rate", percent(summary.pass_rate)),
    ):
        ET.SubElement(properties, "property", _attrs(name=name, value=value))
    for case in report.cases:
        _testcase(suite, report.info.dataset, case)
    ET.indent(suites)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"


def _testcase(suite: ET.Element, dataset: str, case: ReportCase) -> None:
    result = case.result
    element = ET.SubElement(
        suite,
        "testcase",
        _attrs(classname=dataset, name=case.label, time=f"{result.latency_s:.3f}"),
    )
    if result.status == "failed":
        lines = [
            _feedback_line(row.key, row.score, row.comment, row.error) for row in case.failing
        ] + [f"{row.key}: no verdict: {reason(row)}" for row in case.no_verdicts]
        message = "; ".join(lines) or "the case failed"
        said = []
        if case.shows_answer:
            expected = "–" if case.expected_text is None else case.expected_text
            said = [
                f"{case.expected_label}: {expected}",
                f"said: {'–' if result.output is None else result.output}",
            ]
        details = "\n".join(
            [*lines, *said, *(f"turn {d.turn + 1}: {d.reason}" for d in case.diff if d.reason)]
        )
        failure = ET.SubElement(
            element, "failure", _attrs(message=shorten(message, MESSAGE_LIMIT), type="failed")
        )
        failure.text = visible(details)
    elif result.status in ("error", "timeout"):
        message = result.error or ("timed out" if result.status == "timeout" else "error")
        error = ET.SubElement(
            element, "error", _attrs(message=shorten(message, MESSAGE_LIMIT), type=result.status)
        )
        error.text = visible(message)
    out = ET.SubElement(element, "system-out")
    out.text = visible("\n".join(_score_line(row) for row in result.scores) or "no scores")


def _score_line(row: ScoreRow) -> str:
    """``key = score``; without a verdict, the reason beside a score the row still holds
    (a number without a threshold) or in its place."""
    if not no_verdict(row):
        return f"{row.key} = {number(row.score)}"
    if row.score is None:
        return f"{row.key}: no verdict: {reason(row)}"
    return f"{row.key} = {number(row.score)} (no verdict: {reason(row)})"


def _feedback_line(key: str, score: object, comment: str | None, error: str | None) -> str:
    shown = number(score) if isinstance(score, int | float) else "none"  # bool is an int
    detail = error or comment
    return f"{key}={shown}" + (f": {detail}" if detail else "")


def _attrs(**values: object) -> dict[str, str]:
    return {name: visible(str(value)) for name, value in values.items()}
