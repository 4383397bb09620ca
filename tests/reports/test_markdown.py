"""render_markdown: the summary, evaluator, tag, case, failure, trend and comparison tables."""

from __future__ import annotations

from lg_eval.experiments import Comparison, ExperimentRun
from lg_eval.reports import build_report, render_markdown
from lg_eval.reports._markdown import md
from tests.reports.helpers import markdown_tables


def test_every_table_row_has_the_header_width(
    support_run: ExperimentRun, history: list[ExperimentRun], comparison: Comparison
) -> None:
    text = render_markdown(build_report(support_run, history=history, comparison=comparison))
    tables = markdown_tables(text)
    assert len(tables) >= 10
    for rows in tables:
        assert {len(row) for row in rows} == {len(rows[0])}, rows[0]
        assert set("".join(rows[1])) == {"-"}


def test_summary_table_holds_the_headline_numbers(support_run: ExperimentRun) -> None:
    text = render_markdown(build_report(support_run))
    summary, numbers = markdown_tables(text)[:2]
    assert summary[2] == ["run-0304", "support-bot", "finished", "42.9%", "3", "2", "1", "1"]
    assert numbers[0] == [
        "results",
        "pass@2",
        "pass^2",
        "latency p50",
        "latency p95",
        "tokens",
        "cost",
    ]
    assert numbers[2] == ["7", "50.0%", "33.3%", "1.20s", "22.50s", "3700", "$0.0210"]


def test_cases_table_has_one_row_per_result(support_run: ExperimentRun) -> None:
    text = render_markdown(build_report(support_run))
    cases = next(t for t in markdown_tables(text) if t[0][0] == "case" and t[0][1] == "status")
    assert [row[0] for row in cases[2:]] == [
        "refund-happy",
        "refund-over-limit",
        "cancel-order",
        "address-change",
        "slow-search",
        "faq-shipping",
        "refund-happy#1",
    ]
    assert cases[3][3] == r"graph\_trajectory\_strict\_match=false, trajectory\_accuracy=0.4"


def test_failed_case_shows_the_diff_with_the_missing_step_in_bold(
    support_run: ExperimentRun,
) -> None:
    text = render_markdown(build_report(support_run))
    assert "### refund-over-limit: failed" in text
    diff = next(t for t in markdown_tables(text) if t[0][:2] == ["turn", "expected"])
    assert diff[3] == [
        "2",
        "approve → **refund** → respond",
        "approve → respond",
        "step 2: expected 'refund', got 'respond'",
    ]
    assert "The reviewer approved, yet the agent answered without refunding." in text


def test_trend_and_comparison_sections(
    support_run: ExperimentRun, history: list[ExperimentRun], comparison: Comparison
) -> None:
    text = render_markdown(build_report(support_run, history=history, comparison=comparison))
    assert "## Trend" in text
    assert "| run-0304 (this run) |" in text
    assert "## Comparison: run-0304 against run-0303" in text
    assert "| refund-over-limit | regressed | passed → failed |" in text


def test_md_neutralises_html_markdown_and_table_syntax() -> None:
    assert md("<b>x</b> & [a](http://x) | *y*\nz") == (
        r"&lt;b&gt;x&lt;/b&gt; &amp; \[a\](http://x) \| \*y\*<br>z"
    )
