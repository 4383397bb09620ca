"""The viewer's SQL against the Python that defines each number, on real SQLite stores.

The comparison's SQL (``lg_eval.viewer._compare``) is checked against ``compare_runs`` over
the loaded runs on generated pairs of runs (missing cases, repeated feedback keys, scores
that are booleans, numbers or None, tolerances); the evaluator table of a key with more
scores than the bootstrap takes, and of keys of runs with repetitions (intervals over cases,
from few and from many cases), against ``build_report``; the aggregate cache against a
run still being written; and the run page against loading the whole run.
"""

from __future__ import annotations

import re
import sqlite3
import uuid
from collections.abc import Iterator
from contextlib import closing, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lg_eval.experiments import (
    SCHEMA_VERSION,
    CaseResult,
    ExperimentRun,
    ResultStore,
    RunInfo,
    ScoreRow,
    compare_runs,
    open_store,
)
from lg_eval.reports import build_report
from lg_eval.reports._keys import evaluator_table
from lg_eval.reports._stored import column_histograms
from lg_eval.stats import BOOTSTRAP_LIMIT
from lg_eval.viewer import Pages
from lg_eval.viewer import _queries as q
from lg_eval.viewer._compare import CHANGES, change_counts, changes_page
from lg_eval.viewer._summary import AggregateCache

STARTED = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
KEYS = ("exact", "judge")


def info(run_id: str, status: str = "finished") -> RunInfo:
    return RunInfo(
        run_id=run_id,
        dataset="support",
        dataset_hash="h",
        target="t",
        checkpointer="memory",
        started_at=STARTED,
        status=status,  # type: ignore[arg-type]
    )


@contextmanager
def memory_store() -> Iterator[ResultStore]:
    with closing(sqlite3.connect(":memory:", check_same_thread=False)) as conn:
        yield ResultStore(conn, url="sqlite:///:memory:")


def store_run(store: ResultStore, run: ExperimentRun) -> None:
    store.begin_run(run.info)
    store.write(list(enumerate(run.results)))


scores = st.one_of(st.none(), st.booleans(), st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0]))
rows = st.lists(st.tuples(st.sampled_from(KEYS), scores), max_size=4)  # keys may repeat
case = st.tuples(st.sampled_from(["passed", "failed", "error"]), rows)
cases = st.dictionaries(
    st.tuples(st.sampled_from(["c1", "c2", "c10", "b", "é"]), st.integers(0, 1)),
    case,
    max_size=8,
)


def make_run(run_id: str, drawn: dict[tuple[str, int], Any]) -> ExperimentRun:
    results = [
        CaseResult(
            run_id=run_id,
            case_id=case_id,
            repetition=repetition,
            status=status,
            latency_s=1.0,
            scores=[ScoreRow(evaluator=key, key=key, score=score) for key, score in found],
        )
        for (case_id, repetition), (status, found) in drawn.items()
    ]
    return ExperimentRun(info=info(run_id), results=results)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(a=cases, b=cases, tolerance=st.sampled_from([0.0, 0.3]))
def test_the_sql_comparison_labels_every_case_as_compare_runs_does(
    a: dict[tuple[str, int], Any], b: dict[tuple[str, int], Any], tolerance: float
) -> None:
    run_a, run_b = make_run("a", a), make_run("b", b)
    expected = compare_runs(run_a, run_b, tolerance=tolerance).cases
    with memory_store() as store:
        store_run(store, run_a)
        store_run(store, run_b)
        counts = change_counts(store, "a", "b", tolerance=tolerance)
        assert counts == {c: sum(e.change == c for e in expected) for c in CHANGES}
        for change in CHANGES:
            wanted = sorted((e for e in expected if e.change == change), key=order)
            found = changes_page(store, "a", "b", change, offset=0, limit=50, tolerance=tolerance)
            assert found == wanted
            # pages of two: the same rows, in the same order, a page at a time
            paged = [
                row
                for start in range(0, len(wanted), 2)
                for row in changes_page(
                    store, "a", "b", change, offset=start, limit=2, tolerance=tolerance
                )
            ]
            assert paged == wanted


def order(change: Any) -> tuple[str, int]:
    return (change.case_id, change.repetition)


def test_a_key_with_more_scores_than_the_bootstrap_takes_has_the_reports_interval() -> None:
    n = BOOTSTRAP_LIMIT + 200
    results = [
        CaseResult(
            run_id="big",
            case_id=f"c{i}",
            status="passed",
            scores=[ScoreRow(evaluator="judge", key="judge", score=(i * 37 % 101) / 100)],
        )
        for i in range(n)
    ]
    run = ExperimentRun(info=info("big"), results=results)
    report = build_report(run)
    with memory_store() as store:
        store_run(store, run)
        (row,) = evaluator_table(store, "big")
    (expected,) = report.evaluators
    interval, wanted = row.mean_interval, expected.mean_interval
    assert interval is not None and wanted is not None and wanted.method == "normal"
    assert interval.method == "normal"
    assert interval.low == pytest.approx(wanted.low, rel=1e-12)
    assert interval.high == pytest.approx(wanted.high, rel=1e-12)
    assert row.model_dump(exclude={"mean_interval", "mean"}) == expected.model_dump(
        exclude={"mean_interval", "mean"}
    )
    assert row.mean == pytest.approx(expected.mean, rel=1e-12)


def repeated_run(run_id: str, cases: int) -> ExperimentRun:
    """``cases`` cases × 2 repetitions, a verdict and a score each; a case's two scores
    are close, its verdicts often alike (the run's intervals resample cases)."""
    results = [
        CaseResult(
            run_id=run_id,
            case_id=f"c{i}",
            repetition=rep,
            status="passed",
            scores=[
                ScoreRow(
                    evaluator="judge",
                    key="judge",
                    score=(i * 37 % 101) / 100 + rep / 1000,
                    passed=(i * 37 % 101) + rep * 5 >= 50,
                )
            ],
        )
        for i in range(cases)
        for rep in range(2)
    ]
    return ExperimentRun(info=info(run_id), results=results)


def assert_the_reports_row(row: Any, expected: Any, method: str) -> None:
    assert row.pass_rate_interval == expected.pass_rate_interval  # whole-number moments
    assert expected.pass_rate_interval.method == "cluster_wilson"
    interval, wanted = row.mean_interval, expected.mean_interval
    assert interval is not None and wanted is not None
    assert interval.method == wanted.method == method
    assert interval.low == pytest.approx(wanted.low, rel=1e-12)
    assert interval.high == pytest.approx(wanted.high, rel=1e-12)


@pytest.mark.parametrize(("cases", "method"), [(40, "cluster_bootstrap"), (1100, "cluster_normal")])
def test_a_key_with_repetitions_has_the_reports_intervals_over_cases(
    cases: int, method: str
) -> None:
    run = repeated_run("reps", cases)
    (expected,) = build_report(run).evaluators
    with memory_store() as store:
        store_run(store, run)
        (row,) = evaluator_table(store, "reps")
    assert_the_reports_row(row, expected, method)


@pytest.mark.postgres
@pytest.mark.parametrize(("cases", "method"), [(40, "cluster_bootstrap"), (1100, "cluster_normal")])
def test_on_postgres_a_key_with_repetitions_has_the_reports_intervals_over_cases(
    pg_dsn: str, cases: int, method: str
) -> None:
    run = repeated_run(f"reps-{uuid.uuid4().hex}", cases)
    (expected,) = build_report(run).evaluators
    with open_store(pg_dsn) as store:
        store_run(store, run)
        (row,) = evaluator_table(store, run.info.run_id)
    assert_the_reports_row(row, expected, method)


@pytest.mark.postgres
def test_on_postgres_a_deviation_too_small_to_square_in_floats_is_summed(pg_dsn: str) -> None:
    # squared, a deviation of 1e-170 underflows: Postgres refuses such a float product, so
    # the moments are summed in decimals there; the interval is the report's all the same
    n = BOOTSTRAP_LIMIT + 5
    run_id = f"tiny-{uuid.uuid4().hex}"
    results = [
        CaseResult(
            run_id=run_id,
            case_id=f"c{i}",
            status="passed",
            latency_s=1e-320 if i % 2 else 0.5,
            scores=[ScoreRow(evaluator="j", key="j", score=1e-170 if i % 3 == 0 else 0.0)],
        )
        for i in range(n)
    ]
    run = ExperimentRun(info=info(run_id), results=results)
    report = build_report(run)
    with open_store(pg_dsn) as store:
        store_run(store, run)
        (row,) = evaluator_table(store, run_id)
        bins = column_histograms(store, run_id)["latency_s"]
    (expected,) = report.evaluators
    assert row.mean_interval is not None and expected.mean_interval is not None
    assert row.mean_interval.method == expected.mean_interval.method == "normal"
    assert row.mean_interval.low == pytest.approx(expected.mean_interval.low, rel=1e-12)
    assert row.mean_interval.high == pytest.approx(expected.mean_interval.high, rel=1e-12)
    assert bins == report.latency_histogram
    assert bins.counts[0] == n // 2  # the odd cases' latencies


def test_a_finished_runs_aggregates_are_counted_once_and_a_running_runs_each_time() -> None:
    result = CaseResult(run_id="r", case_id="c1", status="passed")
    with memory_store() as store:
        store.begin_run(info("r", "running"))
        store.write([(0, result)])
        cache = AggregateCache(store)
        running = store.run_info("r")
        assert running is not None and cache.summary(running).counts.passed == 1
        store.write([(1, result.model_copy(update={"case_id": "c2", "status": "failed"}))])
        assert cache.summary(running).counts.failed == 1  # read again: not cached
        store.update_run(running.model_copy(update={"status": "finished", "finished_at": STARTED}))
        finished = store.run_info("r")
        assert finished is not None
        first = cache.summary(finished)
        assert cache.summary(finished) is first
        assert (first.counts.passed, first.counts.failed) == (1, 1)


class CountingStore(ResultStore):
    """A store that counts the rows its queries return."""

    fetched = 0

    def query(self, statement: str, params: Any = ()) -> list[tuple[Any, ...]]:
        found = super().query(statement, params)
        self.fetched += len(found)
        return found


def big_result(i: int, run_id: str) -> CaseResult:
    """Case ``i`` of a run of many: run ``big-b`` fails every fifth case ``big`` passed."""
    passed = i % 3 == 0 and not (run_id == "big-b" and i % 5 == 0)
    return CaseResult(
        run_id=run_id,
        case_id=f"c{i:05d}",
        status="passed" if passed else "failed",
        latency_s=i / 100,
        tags=["even"] if i % 2 == 0 else [],
        scores=[ScoreRow(evaluator="judge", key="judge", score=i % 5 / 4, passed=passed)],
    )


@pytest.fixture(scope="module")
def big_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two finished runs of more cases than the bootstrap takes and than a few pages."""
    path = tmp_path_factory.mktemp("big") / "results.sqlite"
    with open_store(path) as store:
        for run_id in ("big", "big-b"):
            results = [big_result(i, run_id) for i in range(BOOTSTRAP_LIMIT + 500)]
            store_run(store, ExperimentRun(info=info(run_id), results=results))
    return path


@contextmanager
def counting_pages(path: Path) -> Iterator[tuple[CountingStore, Pages]]:
    with closing(sqlite3.connect(path, check_same_thread=False)) as conn:
        counting = CountingStore(conn, url=str(path))
        yield counting, Pages(counting)


def test_the_run_page_reads_a_page_of_cases_not_the_run(big_store: Path) -> None:
    with counting_pages(big_store) as (counting, pages):
        for query in ({"id": "big"}, {"id": "big", "tag": "even"}, {"id": "big", "page": "9"}):
            counting.fetched = 0
            page = pages.respond("/run", query)
            assert page.status == 200 and page.body.count(b'class="case-link"') == q.PAGE
            # the 50 cases and their feedback, the grouped counts, the run record: no more
            assert counting.fetched < 3 * q.PAGE, query


def test_the_compare_page_reads_a_page_of_changes_not_the_runs(big_store: Path) -> None:
    with open_store(big_store) as store:
        comparison = compare_runs(store.load_run("big"), store.load_run("big-b"))
    regressed = sorted(c.case_id for c in comparison.cases if c.change == "regressed")
    assert len(regressed) >= 2 * q.PAGE
    with counting_pages(big_store) as (counting, pages):
        for page_number in ("0", "1"):
            counting.fetched = 0
            page = pages.respond("/compare", {"a": "big", "b": "big-b", "page": page_number})
            shown = re.findall(r'class="change-link"[^>]*><code>([^<]+)', page.body.decode())
            start = int(page_number) * q.PAGE
            assert shown == regressed[start : start + q.PAGE]
            # the page's keys; its cases and their feedback in each run; the counts: no more
            # (the two runs hold 3,000 cases and 3,000 feedback rows)
            assert counting.fetched <= 5 * q.PAGE + 10


@pytest.mark.parametrize("tag", ["hitl", "two words", 'say "hi"', "back\\slash", "café", "a/b<c>"])
def test_a_tag_filter_finds_the_cases_of_that_tag_whatever_its_characters(tag: str) -> None:
    tagged = {"c1": [tag], "c2": [tag + "x"], "c3": ["other", tag], "c4": []}
    results = [
        CaseResult(run_id="t", case_id=case_id, status="passed", tags=tags, error=tag)
        for case_id, tags in tagged.items()
    ]
    with memory_store() as store:
        store_run(store, ExperimentRun(info=info("t"), results=results))
        found = q.case_page(store, "t", q.CaseFilter(tag=tag), 0)
    assert sorted(r.case_id for r in found.results) == ["c1", "c3"]
    assert found.total == 2


VIEWER_INDEXES = {
    "lg_eval_cases_case",
    "lg_eval_scores_case",
    "lg_eval_scores_failed",
    "lg_eval_scores_errors",
}


def indexes(path: Path) -> set[str]:
    with closing(sqlite3.connect(path)) as conn:
        found = conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'").fetchall()
    return {str(name) for (name,) in found}


def test_a_version_2_store_gains_the_viewers_indexes_and_then_opens_read_only(
    tmp_path: Path,
) -> None:
    path = tmp_path / "results.sqlite"
    open_store(path).close()
    with closing(sqlite3.connect(path)) as conn:  # the store as lg_eval wrote it at version 2
        for name in VIEWER_INDEXES:
            conn.execute(f"DROP INDEX {name}")
        conn.execute("UPDATE lg_eval_schema SET version = 2")
        conn.commit()
    assert not VIEWER_INDEXES & indexes(path)
    with open_store(path) as store:
        assert store.opened_version == 2
    assert indexes(path) >= VIEWER_INDEXES
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as conn:
        assert ResultStore(conn, url=str(path)).opened_version == SCHEMA_VERSION
