"""The results store's schema version: set on create, an unversioned (v1) store migrated on
open with nothing lost, a newer store refused by name — on SQLite and on Postgres."""

from __future__ import annotations

import json
import sqlite3
import uuid
from collections.abc import Callable, Iterator
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from lg_eval.errors import StoreError
from lg_eval.experiments import ResultStore, open_store
from lg_eval.experiments.results import (
    CaseResult,
    PlayedTurnRecord,
    RunInfo,
    ScoreRow,
    SimulationRecord,
)
from lg_eval.experiments.schema_version import SCHEMA_VERSION

# The DDL of lg_eval's first results store (commit 600a795), which recorded no version.
V1_SCHEMA = (
    """CREATE TABLE lg_eval_runs (
        run_id TEXT PRIMARY KEY, dataset TEXT NOT NULL, dataset_hash TEXT NOT NULL,
        status TEXT NOT NULL, started_at TEXT NOT NULL, finished_at TEXT, info TEXT NOT NULL)""",
    """CREATE TABLE lg_eval_cases (
        run_id TEXT NOT NULL, case_id TEXT NOT NULL, repetition INTEGER NOT NULL,
        ordinal INTEGER NOT NULL, status TEXT NOT NULL, latency_s DOUBLE PRECISION,
        tokens BIGINT, cost DOUBLE PRECISION, model_calls INTEGER, finished_at TEXT,
        result TEXT NOT NULL, PRIMARY KEY (run_id, case_id, repetition))""",
    """CREATE TABLE lg_eval_scores (
        run_id TEXT NOT NULL, case_id TEXT NOT NULL, repetition INTEGER NOT NULL,
        idx INTEGER NOT NULL, evaluator TEXT NOT NULL, key TEXT NOT NULL,
        score DOUBLE PRECISION, passed INTEGER, row TEXT NOT NULL,
        PRIMARY KEY (run_id, case_id, repetition, idx))""",
    "CREATE INDEX lg_eval_runs_dataset ON lg_eval_runs (dataset, started_at)",
)
INFO = RunInfo(
    run_id="old-run",
    dataset="support",
    dataset_hash="abc",
    target="t",
    checkpointer="c",
    started_at=datetime(2026, 11, 30, 9, 0, tzinfo=UTC),
    status="finished",
)
ROW = ScoreRow(evaluator="exact_match", key="exact_match", score=True, passed=True)
RESULT = CaseResult(run_id="old-run", case_id="c1", status="passed", latency_s=1.5, scores=[ROW])


class Backend:
    """One database for one test: its store URL and a raw DB-API connection to it."""

    def __init__(self, url: str, connect: Callable[[], Any], mark: str) -> None:
        self.url, self.connect, self.mark = url, connect, mark

    def run(self, *statements: tuple[str, tuple[Any, ...]]) -> list[tuple[Any, ...]]:
        with closing(self.connect()) as conn:
            rows: list[tuple[Any, ...]] = []
            for statement, params in statements:
                cursor = conn.execute(statement.replace("?", self.mark), params)
                rows = list(cursor.fetchall()) if cursor.description else rows
            conn.commit()
            return rows

    def version(self) -> list[tuple[Any, ...]]:
        return self.run(("SELECT id, version FROM lg_eval_schema", ()))

    def write_v1_store(self) -> None:
        """A store as the first lg_eval wrote it: three tables, one run, one case, one score."""
        self.run(
            *[(statement, ()) for statement in V1_SCHEMA],
            (
                "INSERT INTO lg_eval_runs VALUES (?, ?, ?, ?, ?, ?, ?)",
                ("old-run", "support", "abc", "finished", INFO.started_at.isoformat(), None,
                 INFO.model_dump_json()),
            ),
            (
                "INSERT INTO lg_eval_cases VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                ("old-run", "c1", 0, 0, "passed", 1.5, 0, None, 0, None,
                 RESULT.model_dump_json(exclude={"scores"})),
            ),
            (
                "INSERT INTO lg_eval_scores VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                ("old-run", "c1", 0, 0, "exact_match", "exact_match", 1.0, 1,
                 ROW.model_dump_json()),
            ),
        )  # fmt: skip


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    if request.param == "sqlite":
        path = tmp_path / "results.sqlite"
        yield Backend(f"sqlite:///{path}", lambda: sqlite3.connect(path), "?")
        return
    import psycopg

    dsn = request.getfixturevalue("pg_dsn")
    schema = f"schema_version_{uuid.uuid4().hex[:12]}"  # a schema of its own: nothing shared
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    joiner = "&" if "?" in dsn else "?"
    url = f"{dsn}{joiner}options=-csearch_path%3D{schema}"
    try:
        yield Backend(url, lambda: psycopg.connect(url), "%s")
    finally:
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")


def test_a_new_store_records_the_current_version(backend: Backend) -> None:
    with open_store(backend.url) as store:
        assert store.opened_version is None
    assert backend.version() == [(1, SCHEMA_VERSION)]
    with open_store(backend.url) as store:
        assert store.opened_version == SCHEMA_VERSION == 6
    assert backend.version() == [(1, 6)]


def test_an_unversioned_store_is_migrated_and_keeps_its_runs(backend: Backend) -> None:
    backend.write_v1_store()
    with open_store(backend.url) as store:
        assert store.opened_version == 1
        run = store.load_run("old-run")
        assert run.info == INFO
        assert run.results == [RESULT]
        # what the current schema added since: the lease table and the indexes
        store.begin_run(INFO.model_copy(update={"run_id": "new-run"}))
        assert store.status_counts("old-run") == {"passed": 1}
    assert backend.version() == [(1, 6)]
    assert backend.run(("SELECT COUNT(*) FROM lg_eval_leases", ())) == [(0,)]
    with open_store(backend.url) as store:
        assert store.opened_version == 6
        assert [r.case_id for r in store.load_run("old-run").results] == ["c1"]


def test_a_migration_cut_short_runs_again_on_the_next_open(backend: Backend) -> None:
    backend.write_v1_store()
    # the version table was created but the version never written (a crash between them)
    backend.run(("CREATE TABLE lg_eval_schema (id INTEGER PRIMARY KEY, version INTEGER)", ()))
    with open_store(backend.url) as store:
        assert store.opened_version == 1
        assert store.load_run("old-run").results == [RESULT]
    assert backend.version() == [(1, 6)]


def test_a_store_newer_than_lg_eval_is_refused_naming_it_and_both_versions(
    backend: Backend,
) -> None:
    open_store(backend.url).close()
    backend.run(("UPDATE lg_eval_schema SET version = ? WHERE id = 1", (7,)))
    with pytest.raises(StoreError) as caught:
        open_store(backend.url)
    message = str(caught.value)
    assert "schema version 7, newer than version 6" in message
    assert "upgrade lg_eval" in message
    assert ("results.sqlite" in message) if backend.mark == "?" else ("postgresql://" in message)
    assert backend.version() == [(1, 7)]  # refused before anything was written


def test_a_current_store_opens_read_only_writing_nothing(tmp_path: Path) -> None:
    path = tmp_path / "results.sqlite"
    with open_store(path) as store:
        store.begin_run(INFO)
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as conn:
        store = ResultStore(conn, url=str(path))
        assert store.opened_version == 6
        assert store.run_info("old-run") == INFO


def test_a_version_3_store_reads_its_results_without_answers_and_is_marked_current(
    backend: Backend,
) -> None:
    """Version 4 added the agent's answers to the result JSON, nothing to the tables: a
    version-3 store's rows read with them empty, and rows written since carry them."""
    backend.write_v1_store()
    backend.run(
        ("CREATE TABLE lg_eval_schema (id INTEGER PRIMARY KEY, version INTEGER NOT NULL)", ()),
        ("INSERT INTO lg_eval_schema (id, version) VALUES (1, 3)", ()),
    )
    with open_store(backend.url) as store:
        assert store.opened_version == 3
        [old] = store.load_run("old-run").results
        assert (old.output, old.expected_output, old.answers) == (None, None, None)
        said = RESULT.model_copy(
            update={"case_id": "c2", "output": "Refunded.", "answers": [None, "Refunded."],
                    "expected_output": {"contains": ["refund"]}}
        )  # fmt: skip
        store.write([(1, said)])
    assert backend.version() == [(1, 6)]
    with open_store(backend.url) as store:
        assert store.load_run("old-run").results == [RESULT, said]


def test_a_version_4_store_reads_its_turns_as_the_scripts_and_keeps_simulations(
    backend: Backend,
) -> None:
    """Version 5 added who wrote each turn, the agent's reply and the simulated conversation
    to the result JSON: a version-4 store's turns read as the script's, with no simulation,
    and rows written since carry them."""
    backend.write_v1_store()
    turn = {"index": 0, "kind": "input", "sent": "hi", "asked": [], "error": None}  # version 4
    row = {**RESULT.model_dump(mode="json", exclude={"scores"}), "case_id": "c0", "turns": [turn]}
    backend.run(
        ("CREATE TABLE lg_eval_schema (id INTEGER PRIMARY KEY, version INTEGER NOT NULL)", ()),
        ("INSERT INTO lg_eval_schema (id, version) VALUES (1, 4)", ()),
        (
            "INSERT INTO lg_eval_cases VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            ("old-run", "c0", 0, 1, "passed", 1.5, 0, None, 0, None, json.dumps(row)),
        ),
    )
    with open_store(backend.url) as store:
        assert store.opened_version == 4
        old = store.load_run("old-run").results[1]
        assert (old.case_id, old.turns[0].by, old.turns[0].reply, old.simulation) == (
            "c0",
            "script",
            None,
            None,
        )
        simulated = RESULT.model_copy(
            update={
                "case_id": "c3",
                "turns": [
                    PlayedTurnRecord(index=0, kind="input", sent="hi", by="user", reply="Hello.")
                ],
                "simulation": SimulationRecord(
                    stop="user", detail="Thanks.", user_turns=1, calls=2, tokens=116
                ),
            }
        )
        store.write([(1, simulated)])
    assert backend.version() == [(1, 6)]
    with open_store(backend.url) as store:
        assert store.load_run("old-run").results[2] == simulated
