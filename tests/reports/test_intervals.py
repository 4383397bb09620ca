"""Confidence intervals and paired tests reach the report model and every rendering."""

from __future__ import annotations

import io
import json

import pytest
from rich.console import Console

from lg_eval.experiments import ExperimentRun, compare_runs
from lg_eval.reports import build_report, render_html, render_json, render_markdown
from lg_eval.reports.terminal import render_terminal
from tests.reports.helpers import markdown_tables
from tests.stats.test_intervals import wilson_by_hand


def test_summary_intervals_are_wilson_over_results_and_over_cases(
    support_run: ExperimentRun,
) -> None:
    summary = build_report(support_run).summary
    passed = summary.counts.passed
    some = round(summary.pass_at_k * summary.cases)  # type: ignore[operator]
    every = round(summary.pass_hat_k * summary.cases)  # type: ignore[operator]
    for interval, (k, n) in [
        (summary.pass_rate_interval, (passed, summary.results)),
        (summary.pass_at_k_interval, (some, summary.cases)),
        (summary.pass_hat_k_interval, (every, summary.cases)),
    ]:
        assert interval is not None and interval.method == "wilson"
        assert (interval.low, interval.high) == pytest.approx(wilson_by_hand(k, n), abs=1e-12)


def test_each_evaluator_has_a_wilson_pass_rate_and_a_bootstrap_mean_interval(
    support_run: ExperimentRun,
) -> None:
    for e in build_report(support_run).evaluators:
        if e.passed + e.failed:
            assert e.pass_rate_interval is not None
            low, high = wilson_by_hand(e.passed, e.passed + e.failed)
            assert (e.pass_rate_interval.low, e.pass_rate_interval.high) == pytest.approx(
                (low, high), abs=1e-12
            )
        else:
            assert e.pass_rate_interval is None
        if e.mean_interval is not None:
            assert e.mean_interval.method == "bootstrap"
            assert e.min is not None and e.max is not None
            assert e.min <= e.mean_interval.low <= e.mean_interval.high <= e.max


def test_markdown_html_terminal_and_json_show_the_pass_rate_interval(
    support_run: ExperimentRun,
) -> None:
    report = build_report(support_run)
    shown = "[15.8%, 75.0%]"  # Wilson of 3 passed in 7 results
    assert f"Pass rate 95% CI {shown} (Wilson)" in render_markdown(report)
    assert f"95% CI {shown}" in render_html(report)
    console = Console(record=True, width=160, file=io.StringIO(), color_system=None)
    render_terminal(report, console=console)
    assert f"42.9% {shown} of 7 results" in console.export_text()
    document = json.loads(render_json(report))
    assert document["summary"]["pass_rate_interval"]["low"] == pytest.approx(
        wilson_by_hand(3, 7)[0]
    )
    evaluators = markdown_tables(render_markdown(report))[2]
    assert evaluators[0][:3] == ["key", "pass rate", "95% CI"]
    assert evaluators[0][7:9] == ["mean", "95% CI"]


def test_a_comparison_of_a_run_with_itself_has_no_significant_change(
    support_run: ExperimentRun,
) -> None:
    comparison = compare_runs(support_run, support_run)
    assert comparison.tests and not comparison.significant_regression
    assert {t.p_value for t in comparison.tests} == {1.0}
    assert all(t.effect == 0.0 for t in comparison.tests)
    report = build_report(support_run, comparison=comparison)
    assert report.comparison is not None and report.comparison.tests == comparison.tests
    assert "Paired tests (alpha 0.05)" in render_html(report)
