"""The results store: resuming, Postgres, file modes, what the run config keeps."""

from __future__ import annotations

import sqlite3
import stat
from pathlib import Path
from typing import Any

import pytest

from lg_eval.experiments import (
    ExperimentRun,
    case_counts,
    open_store,
    run_experiment,
    scrub_secrets,
)
from lg_eval.stats import RateMoments
from tests.experiments.conftest import ask, dataset
from tests.experiments.graphs import build_echo


def essentials(run: ExperimentRun) -> list[tuple[Any, ...]]:
    """What must be equal between an interrupted-then-resumed run and an uninterrupted one."""
    return [
        (
            r.case_id,
            r.repetition,
            r.status,
            r.trajectory,
            r.error,
            [(s.key, s.score, s.passed, s.comment) for s in r.scores],
        )
        for r in run.results
    ]


def echo_dataset(n: int = 6) -> Any:
    cases = [
        {"id": f"c{i}", "turns": ask(f"w{i}"), "expected": {"output": f"W{i}" if i % 2 else "x"}}
        for i in range(n)
    ]
    return dataset("echo", cases)


def test_rerunning_a_run_id_scores_only_the_cases_the_store_lacks(where, tmp_path):
    """The two cases lost from the store are scored again; their threads already hold
    every turn (mid-case resume), so no turn of theirs is played again."""
    clean = run_experiment(build_echo(), echo_dataset(), run_id="clean", **where)
    first = build_echo()
    run_experiment(first, echo_dataset(), run_id="r", **where)
    with sqlite3.connect(tmp_path / "results.sqlite") as conn:  # lose two finished cases
        for table in ("lg_eval_cases", "lg_eval_scores"):
            conn.execute(f"DELETE FROM {table} WHERE run_id = 'r' AND case_id IN ('c1', 'c4')")
    again = build_echo()
    resumed = run_experiment(again, echo_dataset(), run_id="r", **where)
    assert sorted(again.calls.counts) == []
    assert essentials(resumed) == essentials(clean)
    assert [r.case_id for r in resumed.results] == [f"c{i}" for i in range(6)]
    assert resumed.info.status == "finished"


def test_a_run_id_of_another_dataset_is_refused(where):
    run_experiment(build_echo(), echo_dataset(2), run_id="r", **where)
    with pytest.raises(Exception, match="was started on dataset 'echo'"):
        run_experiment(build_echo(), echo_dataset(3), run_id="r", **where)


def test_store_files_are_owner_only(where, tmp_path):
    run_experiment(build_echo(), echo_dataset(1), store=None, checkpointer=where["checkpointer"])
    folder = tmp_path / ".lg_eval"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    for name in ("results.sqlite", "judge_cache.sqlite"):
        assert stat.S_IMODE((folder / name).stat().st_mode) == 0o600, name


def test_the_stored_config_has_no_password_and_no_secret_from_the_environment(where, monkeypatch):
    monkeypatch.setenv("MY_API_KEY", "sk-test-0123456789")
    target = build_echo()
    run = run_experiment(
        target,
        echo_dataset(1),
        checkpointer=where["checkpointer"],
        store=where["store"],
        judge_cache=False,
        thresholds={"sk-test-0123456789": 0.5},
    )
    text = run.info.model_dump_json()
    assert "sk-test-0123456789" not in text
    assert run.info.config["thresholds"] == {"***": 0.5}
    assert scrub_secrets({"url": "postgresql://u:hunter22@h/db"}, {"DB_PASSWORD": "hunter22"}) == {
        "url": "postgresql://u:***@h/db"
    }


def test_runs_and_latest_runs_list_what_the_store_holds(where):
    for run_id in ("a", "b", "c"):
        run_experiment(build_echo(), echo_dataset(1), run_id=run_id, **where)
    with open_store(where["store"]) as store:
        assert [info.run_id for info in store.runs()] == ["a", "b", "c"]
        assert [run.info.run_id for run in store.latest_runs("echo", 2)] == ["b", "c"]
        with pytest.raises(Exception, match="No run 'zzz'"):
            store.load_run("zzz")


@pytest.mark.postgres
def test_a_postgres_store_round_trips_a_run(pg_dsn, where):
    import psycopg

    open_store(pg_dsn).close()  # creates the tables
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        for table in ("lg_eval_scores", "lg_eval_cases", "lg_eval_runs"):
            conn.execute(f"DELETE FROM {table} WHERE run_id = 'pg'")
    options = {**where, "store": pg_dsn}
    run = run_experiment(build_echo(), echo_dataset(4), run_id="pg", **options)
    with open_store(pg_dsn) as store:
        assert store.load_run("pg") == run
        assert store.finished("pg") == {
            ("c0", 0): "failed",
            ("c1", 0): "passed",
            ("c2", 0): "failed",
            ("c3", 0): "passed",
        }
    again = build_echo()
    assert run_experiment(again, echo_dataset(4), run_id="pg", **options).results == run.results
    assert not again.calls.counts


# --------------------------------------------------------------------------- streaming reads

SUPPORT_PASSES = RateMoments(6, 3, 7, 3, 4, 9, 2)
"""The support run's passed results per case, summed: refund-happy (1 of 2), three cases
1 of 1, two 0 of 1 -> Σy 3, Σm 7, Σy² 3, Σym 4, Σm² 9, at most 2 results a case."""


def _stored(url: Any, run_id: str = "stream") -> Any:
    """A store holding 7 results of ``run_id`` (one case repeated), written out of order."""
    from tests.reports.conftest import make_support_run

    run = make_support_run()
    info = run.info.model_copy(update={"run_id": run_id})
    results = [r.model_copy(update={"run_id": run_id}) for r in run.results]
    store = open_store(url)
    for table in ("lg_eval_scores", "lg_eval_cases", "lg_eval_runs"):
        store.execute_many(f"DELETE FROM {table} WHERE run_id = ?", [(run_id,)])
    store.begin_run(info)
    ordinals = [0, 1, 2, 3, 4, 5, 0]  # the repetition of case 0 shares its ordinal
    pairs = list(zip(ordinals, results, strict=True))
    store.write(pairs[4:])
    store.write(pairs[:4])
    return store, run_id


def test_iter_results_reads_the_same_results_as_load_run_in_pages(tmp_path: Path) -> None:
    store, run_id = _stored(tmp_path / "stream.sqlite")
    full = [r.model_dump() for r in store.load_run(run_id).results]
    for batch in (1, 2, 3, 7, 100):
        assert [r.model_dump() for r in store.iter_results(run_id, batch=batch)] == full
    store.close()


@pytest.mark.postgres
def test_iter_results_and_sql_counts_on_postgres(pg_dsn: str) -> None:
    store, run_id = _stored(pg_dsn, "stream-pg")
    full = [r.model_dump() for r in store.load_run(run_id).results]
    assert [r.model_dump() for r in store.iter_results(run_id, batch=2)] == full
    assert store.case_counts(run_id) == (6, 2, 3, 2, SUPPORT_PASSES)
    from lg_eval.experiments import percentile

    latencies = [r["latency_s"] for r in full]
    assert store.latency_percentile(run_id, 95) == percentile(latencies, 95) != 30.0
    store.close()


def test_iter_results_refuses_a_batch_below_one(tmp_path: Path) -> None:
    from lg_eval.errors import InvalidOptionError

    store, run_id = _stored(tmp_path / "stream.sqlite")
    with pytest.raises(InvalidOptionError, match="batch=0"):
        next(store.iter_results(run_id, batch=0))
    store.close()


def test_sql_counts_equal_counting_the_loaded_run(tmp_path: Path) -> None:
    store, run_id = _stored(tmp_path / "stream.sqlite")
    assert store.status_counts(run_id) == {"passed": 3, "failed": 2, "error": 1, "timeout": 1}
    # (cases, k, cases with a passed repetition, cases whose every repetition passed):
    # refund-happy passed then failed, so it counts for pass@2 and not for pass^2
    assert store.case_counts(run_id) == (6, 2, 3, 2, SUPPORT_PASSES)
    assert store.case_counts(run_id) == case_counts(store.load_run(run_id).results)
    assert store.status_counts("nope") == {}
    assert store.case_counts("nope") == (0, 0, 0, 0, RateMoments())
    store.close()


def test_sql_latency_percentiles_equal_the_interpolated_percentile(tmp_path: Path) -> None:
    from lg_eval.experiments import percentile

    store, run_id = _stored(tmp_path / "stream.sqlite")
    latencies = [r.latency_s for r in store.load_run(run_id).results]
    for q in (0, 10, 50, 95, 100):
        assert store.latency_percentile(run_id, q) == percentile(latencies, q)
    assert store.latency_max(run_id) == 30.0
    assert store.latency_percentile("nope", 50) is None and store.latency_max("nope") is None
    store.close()


@pytest.mark.postgres
def test_a_read_that_fails_on_postgres_leaves_the_store_usable(pg_dsn: str) -> None:
    from lg_eval.errors import StoreError

    store, run_id = _stored(pg_dsn, "after-failure")
    with pytest.raises(StoreError, match="division by zero"):
        store.query("SELECT 1 / 0 FROM lg_eval_runs WHERE run_id = ?", (run_id,))
    # the failed read's transaction was ended: the next reads and writes go through
    assert store.case_counts(run_id) == (6, 2, 3, 2, SUPPORT_PASSES)
    info = store.run_info(run_id)
    assert info is not None
    store.update_run(info.model_copy(update={"status": "finished"}))
    finished = store.run_info(run_id)
    assert finished is not None and finished.status == "finished"
    store.close()
