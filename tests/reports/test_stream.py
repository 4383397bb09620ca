"""stream_report: a stored run's report counted in SQL equals build_report's numbers."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from lg_eval.errors import InvalidOptionError, StoreError
from lg_eval.experiments import CaseResult, ExperimentRun, ResultStore, ScoreRow, open_store
from lg_eval.reports import build_report, render_html, stream_report
from tests.reports.conftest import RUN_ID, T0, info, make_history, make_support_run


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


def test_aggregates_equal_build_report(tmp_path: Path) -> None:
    store = _store(tmp_path, make_support_run(), *make_history())
    full = build_report(store.load_run(RUN_ID), history=store.latest_runs("support-bot", 10))
    streamed = stream_report(store, RUN_ID)
    summed = {"latency_mean_s": pytest.approx(42.0 / 7), "cost": pytest.approx(0.021)}
    assert streamed.summary.model_dump() == {**full.summary.model_dump(), **summed}
    assert full.summary.model_dump() == {**streamed.summary.model_dump(), **summed}
    assert [e.model_dump(exclude={"mean", "mean_interval"}) for e in streamed.evaluators] == [
        e.model_dump(exclude={"mean", "mean_interval"}) for e in full.evaluators
    ]
    assert [e.mean for e in streamed.evaluators] == [pytest.approx(e.mean) for e in full.evaluators]
    assert streamed.tags == full.tags
    assert streamed.score_histogram == full.score_histogram
    assert streamed.latency_histogram == full.latency_histogram
    assert streamed.trend == full.trend
    store.close()


def test_every_result_is_listed_in_run_order_without_a_worst_limit(tmp_path: Path) -> None:
    run = make_support_run()
    store = _store(tmp_path, run)
    report = stream_report(store, RUN_ID, worst=None)
    assert report.cases_total is None
    listed = [(c.result.case_id, c.result.repetition) for c in report.cases]
    assert listed == [
        ("refund-happy", 0),
        ("refund-happy", 1),  # a case's repetitions together, as the store keeps them
        ("refund-over-limit", 0),
        ("cancel-order", 0),
        ("address-change", 0),
        ("slow-search", 0),
        ("faq-shipping", 0),
    ]
    assert report.cases[2].result == run.results[1]
    assert report.cases[2].diff == build_report(run).cases[1].diff
    store.close()


def test_worst_cases_are_errors_then_timeouts_then_failures_by_lowest_mean(
    tmp_path: Path,
) -> None:
    store = _store(tmp_path, make_support_run())
    report = stream_report(store, RUN_ID, worst=4)
    assert [c.label for c in report.cases] == [
        "address-change",  # error
        "slow-search",  # timeout
        "refund-over-limit",  # failed, mean (0 + 0.4) / 2 = 0.2
        "refund-happy#1",  # failed, mean (0 + 0.5) / 2 = 0.25
    ]
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
    streamed = stream_report(store, RUN_ID).score_histogram
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


def _nul_run(run_id: str) -> ExperimentRun:
    """A case whose tag, note and answer hold a NUL character."""
    return ExperimentRun(
        info=info(run_id, T0),
        results=[
            CaseResult(run_id=run_id, case_id="a", status="failed", tags=["bad\x00tag", "ok"],
                       output="x\x00y", notes=["cut\x00short"], attempts=2)
        ],
    )  # fmt: skip


def test_a_nul_in_a_stored_case_is_counted_as_its_picture(tmp_path: Path) -> None:
    # SQLite's JSON functions cut a text at a NUL: the SQL reads it as U+2400, as every
    # rendering shows it
    store = _store(tmp_path, _nul_run("nul"))
    report = stream_report(store, "nul", worst=None)
    assert [t.tag for t in report.tags] == ["bad\u2400tag", "ok"]
    assert (report.summary.notes[0].text, report.summary.retries) == ("cut\u2400short", 1)
    assert report.cases[0].result.output == "x\x00y"  # the result itself is read verbatim
    store.close()


@pytest.mark.postgres
def test_on_postgres_a_nul_in_a_stored_case_is_read_as_its_picture(pg_dsn: str) -> None:
    # Postgres' JSON types refuse a NUL: read as U+2400 there too
    run_id = f"nul-{uuid.uuid4().hex}"
    with open_store(pg_dsn) as store:
        store.begin_run(_nul_run(run_id).info)
        store.write([(0, _nul_run(run_id).results[0])])
        report = stream_report(store, run_id, worst=None)
    assert [t.tag for t in report.tags] == ["bad\u2400tag", "ok"]
    assert (report.summary.notes[0].text, report.summary.retries) == ("cut\u2400short", 1)
    assert report.cases[0].result.output == "x\x00y"  # the result itself is read verbatim
