"""render_junit: one testsuite per run, one testcase per case × repetition, parsed back."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from lg_eval.experiments import ExperimentRun
from lg_eval.reports import build_report, render_junit


def _suite(run: ExperimentRun) -> ET.Element:
    root = ET.fromstring(render_junit(build_report(run)))
    assert root.tag == "testsuites"
    (suite,) = root.findall("testsuite")
    return suite


def test_counts_match_the_run(support_run: ExperimentRun) -> None:
    suite = _suite(support_run)
    assert {k: suite.get(k) for k in ("tests", "failures", "errors", "skipped")} == {
        "tests": "7",
        "failures": "2",
        "errors": "2",
        "skipped": "0",
    }
    assert suite.get("name") == "support-bot [run-0304]"
    properties = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert properties["run_id"] == "run-0304"
    assert properties["pass_rate"] == "42.9%"


def test_one_testcase_per_case_and_repetition(support_run: ExperimentRun) -> None:
    cases = _suite(support_run).findall("testcase")
    assert [(c.get("classname"), c.get("name"), c.get("time")) for c in cases][:2] == [
        ("support-bot", "refund-happy", "1.200"),
        ("support-bot", "refund-over-limit", "3.400"),
    ]
    assert cases[-1].get("name") == "refund-happy#1"


def test_failures_name_the_failing_feedback_and_errors_carry_the_error(
    support_run: ExperimentRun,
) -> None:
    cases = {c.get("name"): c for c in _suite(support_run).findall("testcase")}
    failure = cases["refund-over-limit"].find("failure")
    assert failure is not None
    assert failure.get("message") == (
        "graph_trajectory_strict_match=false: Turn 2: step 2 differs: expected 'refund', got "
        "'respond'.; trajectory_accuracy=0.4: The reviewer approved, yet the agent answered "
        "without refunding."
    )
    assert (
        failure.text is not None
        and "turn 2: step 2: expected 'refund', got 'respond'" in failure.text
    )
    error = cases["address-change"].find("error")
    assert error is not None and error.get("type") == "error"
    assert error.get("message", "").startswith("GraphRecursionError: Recursion limit of 25")
    timeout = cases["slow-search"].find("error")
    assert timeout is not None and timeout.get("type") == "timeout"
    assert timeout.get("message") == "timed out after 30s"
    assert cases["refund-happy"].find("failure") is None
    assert cases["refund-happy"].find("error") is None
