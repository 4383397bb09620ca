"""stream_report: a stored run's report read page by page equals build_report's numbers."""

from __future__ import annotations

from pathlib import Path

import pytest

from lg_eval.errors import InvalidOptionError
from lg_eval.experiments import ExperimentRun, ResultStore, ScoreRow, StoreError, open_store
from lg_eval.reports import build_report, render_html
from lg_eval.reports.stream import stream_report
from tests.reports.conftest import RUN_ID, make_history, make_support_run


def _store(tmp_path: Path, *runs: ExperimentRun) -> ResultStore:
    """The runs stored as the runner stores them: each result under its case's ordinal in
    the dataset, so a case's repetitions are read together."""
    store = open_store(tmp_path / "results.sqlite")
    for run in runs:
        store.begin_run(run.info)
        store.update_run(run.info)
        ordinals = {case: i for i, case in enumerate(dict.fromkeys(r.case_id for r in run.results))}
        store.write([(ordinals[r.case_id], r) for r in run.results])
    return store


def test_aggregates_equal_build_report_at_every_page_size(tmp_path: Path) -> None:
    store = _store(tmp_path, make_support_run(), *make_history())
    full = build_report(store.load_run(RUN_ID), history=store.latest_runs("support-bot", 10))
    for batch in (1, 2, 3, 500):
        streamed = stream_report(store, RUN_ID, batch=batch)
        assert streamed.summary == full.summary
        assert streamed.evaluators == full.evaluators
        assert streamed.tags == full.tags
        assert streamed.score_histogram == full.score_histogram
        assert streamed.latency_histogram == full.latency_histogram
        assert streamed.trend == full.trend
    store.close()


def test_worst_cases_are_errors_then_timeouts_then_failures_by_lowest_mean(
    tmp_path: Path,
) -> None:
    store = _store(tmp_path, make_support_run())
    report = stream_report(store, RUN_ID, worst=4, batch=2)
    assert [c.label for c in report.cases] == [
        "address-change",  # error
        "slow-search",  # timeout
        "refund-over-limit",  # failed, mean (0 + 0.4) / 2 = 0.2
        "refund-happy#1",  # failed, mean (0 + 0.5) / 2 = 0.25
    ]
    assert [c.index for c in report.cases] == [0, 1, 2, 3]
    assert report.cases_total == 7
    store.close()


def test_worst_zero_keeps_no_case_and_still_counts_every_result(tmp_path: Path) -> None:
    store = _store(tmp_path, make_support_run())
    report = stream_report(store, RUN_ID, worst=0)
    assert report.cases == []
    assert report.summary.results == 7 and report.summary.counts.passed == 3
    store.close()


def test_scores_outside_the_unit_interval_are_binned_over_their_range(tmp_path: Path) -> None:
    run = make_support_run()
    run.results[2].scores.append(ScoreRow(evaluator="len", key="length", score=12.0))
    run.results[5].scores.append(ScoreRow(evaluator="len", key="length", score=-3.0))
    store = _store(tmp_path, run)
    streamed = stream_report(store, RUN_ID, batch=2).score_histogram
    assert streamed == build_report(store.load_run(RUN_ID)).score_histogram
    assert (streamed.lo, streamed.hi) == (-3.0, 12.0)
    store.close()


def test_html_of_a_streamed_report_says_it_shows_only_the_worst(tmp_path: Path) -> None:
    store = _store(tmp_path, make_support_run())
    page = render_html(stream_report(store, RUN_ID, worst=2))
    assert "the 2 worst of 7 results" in page
    assert "address-change" in page and "faq-shipping" not in page
    store.close()


def test_an_unknown_run_or_a_negative_worst_is_refused(tmp_path: Path) -> None:
    store = _store(tmp_path, make_support_run())
    with pytest.raises(StoreError, match="nope"):
        stream_report(store, "nope")
    with pytest.raises(InvalidOptionError, match="worst=-1"):
        stream_report(store, RUN_ID, worst=-1)
    store.close()


def test_an_experiment_report_is_unchanged_by_the_big_run_field() -> None:
    report = build_report(make_support_run())
    assert report.cases_total is None
    assert "worst of" not in render_html(report)
