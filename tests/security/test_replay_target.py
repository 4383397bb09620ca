"""Replay never writes into production, however the production store is spelled (#40 item 1).

The attack: ``lg-eval replay --target`` naming the production checkpointer in another
spelling (``localhost`` for ``127.0.0.1``, ``hostaddr=``, extra query parameters; a hard
link, a symlink, a relative path to the same SQLite file) slipped past a comparison of
URL strings, and the replay's forks were written into the production tables. Here every
spelling is refused with exit 2 before the target is opened, and the production tables
are byte-identical afterwards.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pytest
from langgraph.checkpoint.sqlite import SqliteSaver

from lg_eval.cli._common import INPUT_ERROR
from lg_eval.errors import InvalidOptionError
from lg_eval.play import storage_of
from lg_eval.replay import replay_threads
from tests.replay import helpers
from tests.security.conftest import invoke, squash

THREADS = 6
REFUSED = "is the production checkpointer itself"


def _replay(checkpointer: str, target: str) -> Any:
    return invoke(
        "replay", "--graph", "tests.replay.helpers:build_v2", "--checkpointer", checkpointer,
        "--target", target, "--evaluator", "tests.replay.helpers:nodes", "--run-id", "r1",
    )  # fmt: skip


# --- SQLite: the same file under another name ---------------------------------------------


def _digest(path: Path) -> str:
    """The file's bytes, with the WAL folded in by a checkpoint first (none is pending)."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def prod_file(here: dict[str, str], tmp_path: Path) -> Path:
    """A production SQLite checkpointer of a few threads, closed (its WAL folded in)."""
    path = tmp_path / "prod" / "prod.sqlite"
    path.parent.mkdir()
    conn = sqlite3.connect(path, check_same_thread=False)
    helpers.populate(helpers.build(SqliteSaver(conn)), THREADS)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return path


def _spellings(path: Path) -> Iterator[tuple[str, str]]:
    """``(label, target URL)`` for every other name of ``path`` (cwd is its folder's parent)."""
    (path.parent / "hard.sqlite").hardlink_to(path)
    (path.parent / "soft.sqlite").symlink_to(path)
    (path.parent / "sub").mkdir()
    yield "the same absolute path", f"sqlite:///{path}"
    yield "a relative path", "sqlite:///prod/prod.sqlite"
    yield "a detour through ..", "sqlite:///prod/sub/../prod.sqlite"
    yield "a dot segment", "sqlite:///./prod//prod.sqlite"
    yield "a hard link", f"sqlite:///{path.parent / 'hard.sqlite'}"
    yield "a symlink", "sqlite:///prod/soft.sqlite"
    yield "a percent-encoded path", "sqlite:///prod/%70rod.sqlite"


def test_every_spelling_of_the_production_sqlite_file_is_refused_and_nothing_is_written(
    prod_file: Path, tmp_path: Path
) -> None:
    before = _digest(prod_file)
    checkpointer = f"sqlite:///{prod_file}"
    for label, target in _spellings(prod_file):
        result = _replay(checkpointer, target)
        assert result.exit_code == INPUT_ERROR, (label, result.output)
        assert squash(REFUSED) in squash(result.stderr), (label, result.stderr)
        assert "Traceback" not in result.output
        assert _digest(prod_file) == before, label
        assert not any(p.name.startswith("prod.sqlite-") for p in prod_file.parent.iterdir())
    assert sorted(p.name for p in prod_file.parent.iterdir()) == [
        "hard.sqlite", "prod.sqlite", "soft.sqlite", "sub",
    ]  # fmt: skip


def test_a_file_uri_saver_on_the_production_file_is_refused_through_the_api(
    prod_file: Path,
) -> None:
    before = _digest(prod_file)
    source = SqliteSaver(sqlite3.connect(prod_file, check_same_thread=False))
    uri = SqliteSaver(
        sqlite3.connect(f"file:{prod_file}?mode=rw", uri=True, check_same_thread=False)
    )
    try:
        assert storage_of(source) == storage_of(uri) == storage_of(f"sqlite:///{prod_file}")
        with pytest.raises(InvalidOptionError, match=REFUSED):
            replay_threads(helpers.build_v2, source, target=uri, evaluators=[])
        with pytest.raises(InvalidOptionError, match=REFUSED):
            replay_threads(helpers.build_v2, source, target=source, evaluators=[])
    finally:
        source.conn.close()
        uri.conn.close()
    assert _digest(prod_file) == before


def test_a_file_uri_inside_a_sqlite_url_is_refused_not_opened(prod_file: Path) -> None:
    before = _digest(prod_file)
    result = _replay(f"sqlite:///{prod_file}", "sqlite:///file:prod/prod.sqlite?mode=rw")
    assert result.exit_code == INPUT_ERROR
    assert squash("as a file: URI") in squash(result.stderr)
    assert _digest(prod_file) == before
    assert not (prod_file.parent.parent / "file:prod").exists()


def test_another_sqlite_file_is_a_target_and_the_replay_runs(prod_file: Path) -> None:
    before = _digest(prod_file)
    result = _replay(f"sqlite:///{prod_file}", "sqlite:///replays.sqlite")
    assert result.exit_code == 0, result.output
    assert f"replayed {THREADS} threads" in result.output
    assert _digest(prod_file) == before


# --- Postgres: the same server and database under another address ------------------------


def _pg_dump(url: str) -> list[Any]:
    import psycopg

    with psycopg.connect(url) as conn:
        return [
            conn.execute(f"SELECT * FROM {table} ORDER BY 1, 2, 3, 4").fetchall()
            for table in ("checkpoints", "checkpoint_blobs", "checkpoint_writes")
        ] + [conn.execute("SELECT * FROM checkpoint_migrations ORDER BY 1").fetchall()]


@pytest.fixture
def prod_pg(pg_url: str) -> str:
    """A production Postgres checkpointer of a few threads, in a database of its own."""
    from langgraph.checkpoint.postgres import PostgresSaver

    with PostgresSaver.from_conn_string(pg_url) as saver:
        saver.setup()
        helpers.populate(helpers.build(saver), THREADS)
    return pg_url


def _respelled(url: str) -> Iterator[tuple[str, str]]:
    parts = urlsplit(url)
    port, db = parts.port, parts.path
    query = parts.query

    def at(netloc: str, extra: str = "") -> str:
        joined = "&".join(q for q in (query, extra) if q)
        return urlunsplit((parts.scheme, netloc, db, joined, ""))

    yield "localhost", at(f"postgres@localhost:{port}")
    yield "127.1", at(f"postgres@127.1:{port}")
    yield "hostaddr=", at(f"postgres@db.invalid:{port}", "hostaddr=127.0.0.1")
    yield (
        "query parameters",
        at(f"postgres@127.0.0.1:{port}", "application_name=x&connect_timeout=9"),
    )
    yield (
        "a password and postgres://",
        at(f"postgres:ignored@127.0.0.1:{port}").replace("postgresql://", "postgres://"),
    )


@pytest.mark.postgres
def test_every_spelling_of_the_production_postgres_database_is_refused_and_nothing_is_written(
    prod_pg: str, here: dict[str, str]
) -> None:
    before = _pg_dump(prod_pg)
    for label, target in _respelled(prod_pg):
        result = _replay(prod_pg, target)
        assert result.exit_code == INPUT_ERROR, (label, result.output)
        assert squash(REFUSED) in squash(result.stderr), (label, result.stderr)
        assert "ignored" not in result.output
        assert _pg_dump(prod_pg) == before, label


@pytest.mark.postgres
def test_another_database_on_the_same_server_is_a_target(prod_pg: str, pg_dsn: str) -> None:
    before = _pg_dump(prod_pg)
    assert storage_of(prod_pg) != storage_of(pg_dsn)
    result = _replay(prod_pg, pg_dsn)
    assert result.exit_code == 0, result.output
    assert f"replayed {THREADS} threads" in result.output
    assert _pg_dump(prod_pg) == before


def test_storage_of_a_missing_file_or_memory_is_private(tmp_path: Path) -> None:
    assert storage_of("memory://") is None
    assert storage_of(f"sqlite:///{tmp_path / 'nope.sqlite'}") is None
    assert not (tmp_path / "nope.sqlite").exists()
    assert os.listdir(tmp_path) == []
