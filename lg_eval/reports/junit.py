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

from lg_eval.reports._text import number, percent, shorten, visible
from lg_eval.reports.model import CaseReport, Report, checked_report

MESSAGE_LIMIT = 500


def render_junit(report: Report) -> str:
    """The report as a JUnit XML document (``<testsuites>`` with one ``<testsuite>``)."""
    report = checked_report(report)
    summary = report.summary
    failures, errors = summary.counts.failed, summary.counts.error + summary.counts.timeout
    total_time = f"{sum(case.latency_s for case in report.cases):.3f}"
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


def _testcase(suite: ET.Element, dataset: str, case: CaseReport) -> None:
    element = ET.SubElement(
        suite,
        "testcase",
        _attrs(classname=dataset, name=case.label, time=f"{case.latency_s:.3f}"),
    )
    if case.status == "failed":
        lines = [
            _feedback_line(line.key, line.score, line.comment, line.error) for line in case.failing
        ] + [f"{line.key}: no verdict: {line.reason}" for line in case.no_verdicts]
        message = "; ".join(lines) or "the case failed"
        said = []
        if case.shows_answer:
            expected = "–" if case.expected_text is None else case.expected_text
            said = [
                f"{case.expected_label}: {expected}",
                f"said: {'–' if case.output is None else case.output}",
            ]
        details = "\n".join(
            [*lines, *said, *(f"turn {d.turn + 1}: {d.reason}" for d in case.diff if d.reason)]
        )
        failure = ET.SubElement(
            element, "failure", _attrs(message=shorten(message, MESSAGE_LIMIT), type="failed")
        )
        failure.text = visible(details)
    elif case.status in ("error", "timeout"):
        message = case.error or ("timed out" if case.status == "timeout" else "error")
        error = ET.SubElement(
            element, "error", _attrs(message=shorten(message, MESSAGE_LIMIT), type=case.status)
        )
        error.text = visible(message)
    out = ET.SubElement(element, "system-out")
    out.text = visible(
        "\n".join(
            f"{line.key}: no verdict: {line.reason}"
            if line.no_verdict
            else f"{line.key} = {number(line.score)}"
            for line in case.scores
        )
        or "no scores"
    )


def _feedback_line(key: str, score: object, comment: str | None, error: str | None) -> str:
    shown = number(score) if isinstance(score, int | float) else "none"  # bool is an int
    detail = error or comment
    return f"{key}={shown}" + (f": {detail}" if detail else "")


def _attrs(**values: object) -> dict[str, str]:
    return {name: visible(str(value)) for name, value in values.items()}


__all__ = ["render_junit"]
