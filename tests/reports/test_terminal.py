"""render_terminal: the summary table and the failed cases, printed through rich."""

from __future__ import annotations

import io

from rich.console import Console

from lg_eval.experiments import Comparison, ExperimentRun
from lg_eval.reports import build_report, render_terminal


def _printed(report_run: ExperimentRun, **kwargs: object) -> str:
    console = Console(record=True, width=140, file=io.StringIO(), color_system=None)
    render_terminal(build_report(report_run, **kwargs), console=console)  # type: ignore[arg-type]
    return console.export_text()


def test_summary_table_has_the_headline_numbers(support_run: ExperimentRun) -> None:
    text = _printed(support_run)
    assert "lg_eval report: support-bot" in text
    assert "42.9% [15.8%, 75.0%] of 7 results" in text  # Wilson interval of 3 in 7
    assert "3 passed  2 failed  1 error  1 timeout" in text
    assert "1.20s / 22.50s" in text
    assert "3700 / $0.0210" in text


def test_failed_cases_show_the_diff_turns_played_and_judge_reasoning(
    support_run: ExperimentRun,
) -> None:
    text = _printed(support_run)
    assert "✗ refund-over-limit  failed  [refunds, hitl]" in text
    assert "approve → refund → respond" in text
    assert "step 2: expected 'refund', got 'respond'" in text
    assert '{"approved": true}' in text
    assert "judge trajectory_accuracy = 0.4: The reviewer approved" in text
    assert "✗ address-change  error" in text and "error: GraphRecursionError" in text
    assert "✗ slow-search  timeout" in text
    assert "✗ refund-happy " not in text and "refund-happy#1" in text


def test_passed_cases_are_not_detailed(support_run: ExperimentRun) -> None:
    assert "✗ cancel-order" not in _printed(support_run)


def test_trend_and_comparison(
    support_run: ExperimentRun, history: list[ExperimentRun], comparison: Comparison
) -> None:
    text = _printed(support_run, history=history, comparison=comparison)
    assert "trend: 50.0% → 60.0% → 80.0% → 42.9%" in text
    assert "run-0304 against run-0303: pass rate 80.0% → 42.9%" in text
    assert "regressed" in text and "legacy-greeting" in text


def test_the_differing_step_is_styled(support_run: ExperimentRun) -> None:
    console = Console(record=True, width=140, file=io.StringIO(), force_terminal=True)
    render_terminal(build_report(support_run), console=console)
    assert "\x1b[1;31mrefund\x1b[0m" in console.file.getvalue()  # type: ignore[attr-defined]
