"""One summary from two paths: a run's results in memory (``build_report``) and the same run
stored and counted in SQL (``stream_report``, whose queries the viewer's run page reads its
status counts, evaluator table and charts' bins with) give equal headline numbers,
evaluator and tag summaries, notes and distributions, on SQLite and on Postgres; so does
``stream_report`` given a ``ResultTally`` of the results as they were stored (a sweep's),
which reads no result's notes, tags or attempts from the store. Counts are
equal exactly; a sum or mean the database adds up in another order is held equal to the
rounding of that sum."""

from __future__ import annotations

import tempfile
import uuid
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lg_eval.experiments import (
    CaseResult,
    ExperimentRun,
    ResultStore,
    RunInfo,
    ScoreRow,
    open_store,
)
from lg_eval.reports import EvaluatorSummary, Report, ResultTally, build_report, stream_report
from lg_eval.viewer._summary import run_summary

STATUSES = ("passed", "failed", "error", "timeout")
SETTINGS = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)

finite = st.floats(min_value=0.0, max_value=100.0, allow_nan=False, allow_infinity=False)
score_rows = st.builds(
    ScoreRow,
    evaluator=st.just("e"),
    key=st.sampled_from(["exact", "judge", "tools"]),
    score=st.one_of(st.none(), st.booleans(), st.floats(-2.0, 3.0, allow_nan=False)),
    passed=st.one_of(st.none(), st.booleans()),
    error=st.one_of(st.none(), st.just("ValueError: boom")),
)
# per case: a list of repetitions, each
# (status, latency, tokens, cost, calls, attempts, tags, rows, notes)
repetition = st.tuples(
    st.sampled_from(STATUSES),
    finite,
    st.integers(0, 5000),
    st.one_of(st.none(), finite),
    st.integers(0, 9),
    st.integers(1, 3),
    st.lists(st.sampled_from(["billing", "refund", "vip"]), max_size=2),
    st.lists(score_rows, max_size=3),
    st.lists(st.sampled_from(["Turn 1 resumes 2 interrupts", "No checkpoint", "z"]), max_size=2),
)
runs = st.lists(st.lists(repetition, min_size=1, max_size=3), max_size=8)


def experiment(run_id: str, cases: list[list[tuple]]) -> ExperimentRun:  # type: ignore[type-arg]
    """Results in dataset order (case, then repetition), as the runner stores them."""
    info = RunInfo(
        run_id=run_id,
        dataset="differential",
        dataset_hash="h",
        target="t",
        checkpointer="c",
        started_at=datetime(2026, 1, 1, tzinfo=UTC),
    )
    results = [
        CaseResult(
            run_id=run_id,
            case_id=f"case-{index}",
            repetition=rep,
            status=status,
            latency_s=latency,
            tokens=tokens,
            cost=cost,
            model_calls=calls,
            attempts=attempts,
            tags=tags,
            scores=rows,
            notes=notes,
        )
        for index, repetitions in enumerate(cases)
        for rep, (status, latency, tokens, cost, calls, attempts, tags, rows, notes) in enumerate(
            repetitions
        )
    ]
    return ExperimentRun(info=info, results=results)


def stored(store: ResultStore, run: ExperimentRun) -> None:
    store.begin_run(run.info)
    ordinals = {case: i for i, case in enumerate(dict.fromkeys(r.case_id for r in run.results))}
    store.write([(ordinals[r.case_id], r) for r in run.results])


def tallied(run: ExperimentRun) -> ResultTally:
    """The run's results counted in run order, a few at a time, as a sweep stores them."""
    tally = ResultTally()
    for at in range(0, len(run.results), 2):
        tally.add(run.results[at : at + 2])
    return tally


def assert_same_report(run: ExperimentRun, memory: Report, sql: Report) -> None:
    """The SQL path's report against the in-memory one: every count exactly, the sums and
    means to the rounding of a float sum."""
    summed = {"latency_mean_s", "cost"}
    got, expected = sql.summary.model_dump(), memory.summary.model_dump()
    assert {k: v for k, v in got.items() if k not in summed} == {
        k: v for k, v in expected.items() if k not in summed
    }
    for name in summed:
        if expected[name] is None:
            assert got[name] is None, name
        else:
            assert got[name] == pytest.approx(expected[name], rel=1e-12), name
    assert_same_evaluators(run, sql.evaluators, memory.evaluators)
    assert sql.tags == memory.tags
    assert (sql.score_histogram, sql.latency_histogram) == (
        memory.score_histogram,
        memory.latency_histogram,
    )
    assert sql.cases_total == memory.summary.results


def fields(summary: EvaluatorSummary) -> dict[str, object]:
    """The summary's fields, its intervals' fields flattened beside them."""
    out: dict[str, object] = {}
    for name, value in summary.model_dump().items():
        if isinstance(value, dict):
            out.update({f"{name}.{inner}": v for inner, v in value.items()})
        else:
            out[name] = value
    return out


def largest_scores(run: ExperimentRun) -> dict[str, float]:
    """Per key, the largest magnitude of a score the mean counts."""
    out: dict[str, float] = {}
    for result in run.results:
        for row in result.scores:
            if row.score is not None and row.error is None:
                out[row.key] = max(out.get(row.key, 0.0), abs(float(row.score)))
    return out


def assert_same_evaluators(
    run: ExperimentRun, counted: list[EvaluatorSummary], memory: list[EvaluatorSummary]
) -> None:
    """Counts are equal exactly. A database sums a key's scores in an order of its own, so a
    mean (and what rests on it) may differ from the report's by the rounding of a float
    sum: a few units in the 13th digit of the largest score at most (scores of 0.5 and
    -0.5 beside 1e-12 leave a mean whose every digit is that rounding).
    """
    largest = largest_scores(run)
    assert [fields(e).keys() for e in counted] == [fields(e).keys() for e in memory]
    for sql_row, memory_row in zip(counted, memory, strict=True):
        rounding = 1e-13 * largest.get(memory_row.key, 0.0)
        for (name, got), expected in zip(
            fields(sql_row).items(), fields(memory_row).values(), strict=True
        ):
            if isinstance(got, float) and isinstance(expected, float):
                assert got == pytest.approx(expected, rel=1e-12, abs=rounding or 1e-300), name
            else:
                assert got == expected, name


def assert_viewer_reads_the_same(
    run: ExperimentRun, memory: Report, store: ResultStore, run_id: str
) -> None:
    """The viewer's run page reads its aggregates through the same SQL."""
    page = run_summary(store, run_id)
    assert page.counts == memory.summary.counts
    assert_same_evaluators(run, page.evaluators, memory.evaluators)
    assert page.histograms["latency_s"] == memory.latency_histogram


@SETTINGS
@given(cases=runs)
def test_memory_and_sqlite_give_one_summary(cases: list[list[tuple]]) -> None:  # type: ignore[type-arg]
    run = experiment("r", cases)
    with tempfile.TemporaryDirectory() as tmp, open_store(Path(tmp) / "r.sqlite") as store:
        stored(store, run)
        memory = build_report(run)
        assert_same_report(run, memory, stream_report(store, "r", history=0))
        assert_same_report(run, memory, stream_report(store, "r", history=0, tally=tallied(run)))
        assert_viewer_reads_the_same(run, memory, store, "r")


@pytest.mark.postgres
def test_memory_and_postgres_give_one_summary(pg_dsn: str) -> None:
    with open_store(pg_dsn) as store:

        @SETTINGS
        @given(cases=runs)
        def check(cases: list[list[tuple]]) -> None:  # type: ignore[type-arg]
            run = experiment(f"diff-{uuid.uuid4().hex}", cases)
            stored(store, run)
            streamed = stream_report(store, run.info.run_id, history=0)
            memory = build_report(run)
            assert_same_report(run, memory, streamed)
            counted = stream_report(store, run.info.run_id, history=0, tally=tallied(run))
            assert_same_report(run, memory, counted)
            assert_viewer_reads_the_same(run, memory, store, run.info.run_id)

        check()


def test_the_summary_counts_pass_at_k_over_cases_and_the_pass_rate_over_results() -> None:
    # case-0 passed then failed; case-1 passed twice; case-2 errored once
    run = experiment(
        "fixed",
        [
            [
                ("passed", 1.0, 0, None, 0, 1, [], [], []),
                ("failed", 3.0, 0, None, 0, 1, [], [], []),
            ],
            [
                ("passed", 2.0, 0, None, 0, 1, [], [], []),
                ("passed", 5.0, 0, None, 0, 2, [], [], []),
            ],
            [("error", 4.0, 0, None, 0, 1, [], [], [])],
        ],
    )
    summary = build_report(run).summary
    assert (summary.results, summary.cases, summary.k) == (5, 3, 2)
    assert (summary.pass_rate, summary.pass_at_k, summary.pass_hat_k) == (3 / 5, 2 / 3, 1 / 3)
    assert (summary.latency_p50_s, summary.latency_max_s, summary.retries) == (3.0, 5.0, 1)
