"""Confidence intervals and paired tests reach the report model and every rendering."""

from __future__ import annotations

import io
import json
import math
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from lg_eval.experiments import CaseResult, ExperimentRun, ScoreRow, compare_runs
from lg_eval.reports import build_report, render_html, render_json, render_markdown, render_terminal
from lg_eval.stats import MeanSample, wilson_interval
from tests.reports.conftest import JUDGE, T0, info
from tests.reports.helpers import markdown_tables
from tests.stats.test_intervals import Z95, wilson_by_hand


def clustered_wilson_by_hand(counts: list[tuple[int, int]]) -> tuple[float, float]:
    """The rate over cases by its definition: per case (passed, results); p = Σy/Σm, the
    clustered variance V = Σ(y - p·m)² / (Σm)², the effective trials p(1-p)/V (at most Σm;
    the number of cases when p is 0 or 1), and the Wilson interval over that many."""
    y, m = sum(c[0] for c in counts), sum(c[1] for c in counts)
    p = y / m
    variance = sum((yi - p * mi) ** 2 for yi, mi in counts) / m**2
    n = len(counts) if p in (0.0, 1.0) else min(p * (1 - p) / variance, m) if variance else m
    centre, scale = p + Z95**2 / (2 * n), 1 + Z95**2 / n
    half = Z95 * math.sqrt(p * (1 - p) / n + Z95**2 / (4 * n * n))
    return max(0.0, (centre - half) / scale), min(1.0, (centre + half) / scale)


def per_case(run: ExperimentRun, counted: Callable[[CaseResult], tuple[int, int]]) -> list:  # type: ignore[type-arg]
    """``counted`` summed per case: ``[(successes, trials), ...]``."""
    found: dict[str, tuple[int, int]] = {}
    for result in run.results:
        y, m = found.get(result.case_id, (0, 0))
        dy, dm = counted(result)
        found[result.case_id] = (y + dy, m + dm)
    return [pair for pair in found.values() if pair[1]]


def test_pass_at_k_intervals_are_wilson_over_cases_and_the_pass_rate_counts_cases(
    support_run: ExperimentRun,
) -> None:
    # refund-happy has two repetitions (passed, failed): the pass rate's interval is over
    # cases, the Wilson interval on the effective trials (here 9.8 capped at the 7 results)
    summary = build_report(support_run).summary
    some = round(summary.pass_at_k * summary.cases)  # type: ignore[operator]
    every = round(summary.pass_hat_k * summary.cases)  # type: ignore[operator]
    for interval, (k, n) in [
        (summary.pass_at_k_interval, (some, summary.cases)),
        (summary.pass_hat_k_interval, (every, summary.cases)),
    ]:
        assert interval is not None and interval.method == "wilson"
        assert (interval.low, interval.high) == pytest.approx(wilson_by_hand(k, n), abs=1e-12)
    counts = per_case(support_run, lambda r: (int(r.status == "passed"), 1))
    assert counts == [(1, 2), (0, 1), (1, 1), (0, 1), (0, 1), (1, 1)]
    interval = summary.pass_rate_interval
    assert interval is not None and interval.method == "cluster_wilson"
    low, high = clustered_wilson_by_hand(counts)
    assert (interval.low, interval.high) == pytest.approx((low, high), abs=1e-12)
    assert (low, high) == pytest.approx(wilson_by_hand(3, 7), abs=1e-12)


def test_without_repetitions_the_pass_rate_interval_is_wilson_over_results(
    support_run: ExperimentRun,
) -> None:
    once = ExperimentRun(
        info=support_run.info, results=[r for r in support_run.results if r.repetition == 0]
    )
    summary = build_report(once).summary
    interval = summary.pass_rate_interval
    assert interval is not None and interval.method == "wilson"
    assert (interval.low, interval.high) == pytest.approx(wilson_by_hand(3, 6), abs=1e-12)


def test_each_evaluator_pass_rate_and_mean_interval_count_its_cases(
    support_run: ExperimentRun,
) -> None:
    evaluators = {e.key: e for e in build_report(support_run).evaluators}
    for e in evaluators.values():

        def verdicts(result: CaseResult, key: str = e.key) -> tuple[int, int]:
            rows = [row for row in result.scores if row.key == key and row.passed is not None]
            return sum(row.passed is True for row in rows), len(rows)

        counts = per_case(support_run, verdicts)
        if not counts:
            assert e.pass_rate_interval is None
            continue
        assert e.pass_rate_interval is not None
        several = max(m for _, m in counts) > 1
        assert e.pass_rate_interval.method == ("cluster_wilson" if several else "wilson")
        total = (sum(y for y, _ in counts), sum(m for _, m in counts))
        low, high = clustered_wilson_by_hand(counts) if several else wilson_by_hand(*total)
        assert (e.pass_rate_interval.low, e.pass_rate_interval.high) == pytest.approx(
            (low, high), abs=1e-12
        )
    # the judge scored refund-happy twice (0.9, 0.5): its mean's interval resamples the
    # three cases it scored, and stays inside the scores' range
    judge = evaluators[JUDGE]
    assert judge.mean_interval is not None and judge.mean_interval.method == "cluster_bootstrap"
    assert judge.min is not None and judge.max is not None
    assert judge.min <= judge.mean_interval.low <= judge.mean_interval.high <= judge.max


def test_markdown_html_terminal_and_json_show_the_pass_rate_interval(
    support_run: ExperimentRun,
) -> None:
    report = build_report(support_run)
    # over cases (refund-happy has two repetitions), the cases' spread allows all 7 results:
    # the Wilson interval of 3 passed in 7
    shown = "[15.8%, 75.0%]"
    assert f"Pass rate 95% CI {shown} (Wilson, over cases)" in render_markdown(report)
    once = ExperimentRun(
        info=support_run.info, results=[r for r in support_run.results if r.repetition == 0]
    )
    assert "Pass rate 95% CI [18.8%, 81.2%] (Wilson);" in render_markdown(build_report(once))
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


score_rows = st.lists(
    st.tuples(
        st.sampled_from(["strict", "judge"]),
        st.one_of(st.none(), st.booleans(), st.floats(0, 1)),
        st.one_of(st.none(), st.booleans()),
    ),
    max_size=3,
)  # a key may come twice in one result


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.booleans(), score_rows), min_size=1, max_size=12))
def test_without_repetitions_every_interval_is_the_one_over_rows_it_always_was(
    drawn: list[tuple[bool, list[tuple[str, Any, Any]]]],
) -> None:
    results = [
        CaseResult(
            run_id="once",
            case_id=f"c{index}",
            status="passed" if passed else "failed",
            scores=[ScoreRow(evaluator=k, key=k, score=s, passed=v) for k, s, v in rows],
        )
        for index, (passed, rows) in enumerate(drawn)
    ]
    report = build_report(ExperimentRun(info=info("once", T0), results=results))
    passed = sum(r.status == "passed" for r in results)
    assert report.summary.pass_rate_interval == wilson_interval(passed, len(results))
    for summary in report.evaluators:
        rows = [row for r in results for row in r.scores if row.key == summary.key]
        verdicts = [row.passed for row in rows if row.passed is not None]
        assert summary.pass_rate_interval == wilson_interval(sum(verdicts), len(verdicts))
        sample = MeanSample()
        for row in rows:
            if row.score is not None:
                sample.add(float(row.score))
        assert summary.mean_interval == sample.interval()
