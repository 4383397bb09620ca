"""The results store's database: opened, its errors named, its schema made and migrated.

**Opening.** A store URL comes from a command line and its errors end up in CI logs, so
nothing a driver says about it is shown raw: psycopg quotes the DSN (password included)
in its messages, and SQLite's ``file is not a database`` is a traceback unless caught.
Every failure of the database, at open time or mid-run (a corrupt file, a server that
went away), becomes a :class:`~lg_eval.errors.StoreError` whose message names the store
by its redacted URL, with the driver's words scrubbed of the password and no exception
chained (a chained psycopg error would print the DSN again).

**The schema** (:data:`SCHEMA`, the same DDL on both engines, every statement
``IF NOT EXISTS``) and its version.
A store records its version in a one-row table, ``lg_eval_schema (id = 1, version)``.
Opening a store (:class:`~lg_eval.experiments.ResultStore`) reads it first:

* no lg_eval table at all: a new store; its tables are created and :data:`SCHEMA_VERSION`
  is recorded;
* lg_eval tables but no recorded version: a store written before versions existed,
  version 1; it is migrated;
* an older version: the steps of :data:`MIGRATIONS` from it up to :data:`SCHEMA_VERSION`
  run, then the current DDL (every statement ``IF NOT EXISTS``, so the tables and indexes
  added since are created and nothing stored is touched), then the new version is
  recorded — last, so a migration cut short runs again, whole, on the next open;
* the current version: the current DDL runs (it adds nothing) and nothing is written;
* a version newer than this lg_eval knows: a :class:`~lg_eval.errors.StoreError` naming
  the store and both versions, before anything is written to it.

Version 2 is the first recorded one: version 1 plus the version table. Version 3 adds the
viewer's indexes (a run's cases and scores in case order, its failed and its errored
feedback rows), made by the current DDL, so that a store already at version 3 opens without
a write (a read-only store opens too). Version 4 keeps what the agent answered in each case
result (``output``, ``expected_output``, ``answers`` in the result JSON): no table changes,
and rows written before it read with those fields empty; the version says that an older
lg_eval, which refuses fields it does not know, cannot read the rows written since. Version 5
keeps who wrote each played turn and what the agent answered it (``by``, ``reply``) and a
simulated conversation's record (``simulation``), again in the result JSON alone. Version 6
adds the people's labels (``lg_eval_labels``, see :mod:`lg_eval.labels`) and an index of
the cases by case id across runs (where a thread's labels find the sweeps that scored it),
both in the current DDL: nothing stored before is changed.

To add a table or an index: append its DDL to :data:`SCHEMA`, add an (empty) step to
:data:`MIGRATIONS` for the version it brings and raise :data:`SCHEMA_VERSION`.
"""

from __future__ import annotations

import logging
import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lg_eval._files import private_dirs
from lg_eval._urls import (
    is_keyword_dsn,
    keyword_dsn_problem,
    malformed_url_problem,
    parse_checkpointer_url,
    redact_url,
    scrub,
)
from lg_eval.errors import InvalidOptionError, StoreError

CONNECT_TIMEOUT = 10
"""Seconds to wait for a Postgres server before the store gives up."""


@dataclass(frozen=True)
class Connection:
    """An open DB-API connection and what the store needs to know about it."""

    connection: Any
    url: str
    postgres: bool
    errors: tuple[type[BaseException], ...]


def connect(url: str) -> Connection:
    """Open the database ``url`` names (``sqlite:///``, a path, ``postgresql://``).

    Raises:
        StoreError: the URL is malformed, the server cannot be reached, or the
            file is not a SQLite database (the message never holds the password).
        InvalidOptionError: ``url`` names something that cannot hold results
            (``memory://``, a libpq keyword DSN).
    """
    problem = malformed_url_problem(url)
    if problem is not None:
        raise InvalidOptionError(f"store: {problem}")
    if is_postgres(url):
        return _postgres(url)
    if is_keyword_dsn(url):
        raise InvalidOptionError(f"store: {keyword_dsn_problem(url)}")
    path = sqlite_path(url)
    if path is None:
        raise InvalidOptionError(
            f"store={redact_url(url)!r}: use sqlite:///file.sqlite, a path, or postgresql://..."
        )
    with driver_errors(url, (sqlite3.Error, OSError), opening=True):
        connection = sqlite_connection(path)
    return Connection(connection, url, postgres=False, errors=(sqlite3.Error,))


def is_postgres(url: str) -> bool:
    """Whether ``url`` names a Postgres server."""
    return url.partition("://")[0].lower() in ("postgresql", "postgres")


def sqlite_path(url: str) -> Path | None:
    """The file a ``sqlite:///rel`` / ``sqlite:////abs`` URL or a plain path names (None: not
    SQLite)."""
    if "://" not in url:
        return Path(url)
    scheme = url.partition("://")[0].lower()
    if scheme == "memory":
        raise InvalidOptionError(
            "memory:// keeps nothing; the results store needs a file or Postgres."
        )
    if scheme != "sqlite":
        raise InvalidOptionError(
            f"store={redact_url(url)!r}: {scheme!r} is not a results store scheme; use "
            "sqlite:///file.sqlite, a path, or postgresql://..."
        )
    return parse_checkpointer_url(url).path


def _postgres(url: str) -> Connection:
    try:
        import psycopg
    except ImportError:  # pragma: no cover - the postgres extra is missing
        raise StoreError(
            "A Postgres results store needs psycopg: pip install 'lg-eval[postgres]'."
        ) from None
    kwargs: dict[str, Any] = (
        {} if "connect_timeout=" in url else {"connect_timeout": CONNECT_TIMEOUT}
    )
    # psycopg logs a lost connection itself ("error ignored terminating <Pipeline>"), which
    # Python prints raw when no logging is configured; the StoreError says it once instead.
    _quiet_unless_configured(logging.getLogger("psycopg"))
    with driver_errors(url, (psycopg.Error,), opening=True):
        connection = psycopg.connect(url, **kwargs)
    return Connection(connection, url, postgres=True, errors=(psycopg.Error,))


def _quiet_unless_configured(logger: logging.Logger) -> None:
    """A NullHandler on ``logger``: its records still reach the handlers an application
    configured, but no longer Python's last-resort print to stderr."""
    if not any(isinstance(handler, logging.NullHandler) for handler in logger.handlers):
        logger.addHandler(logging.NullHandler())


@contextmanager
def driver_errors(
    url: str, errors: tuple[type[BaseException], ...], *, opening: bool = False
) -> Iterator[None]:
    """The driver's ``errors`` raised inside as a :class:`StoreError` naming the store;
    ``opening``: while connecting (nothing of a run can have been stored yet)."""
    try:
        yield
    except errors as exc:
        raise StoreError(store_problem(url, exc, opening=opening)) from None


def store_problem(url: str, exc: BaseException, *, opening: bool = False) -> str:
    """What went wrong with the store at ``url``, in one line, without its password."""
    detail = " ".join(scrub(str(exc), url).split()).rstrip(".") or type(exc).__name__
    where = redact_url(url)
    if isinstance(exc, sqlite3.DatabaseError) and not isinstance(exc, sqlite3.OperationalError):
        return (
            f"the results store {where} is not a usable SQLite database ({detail}); it may be "
            "corrupt or another kind of file: move it aside, or pass another --store."
        )
    if isinstance(exc, OSError):
        return f"cannot open the results store {where}: {exc.strerror or detail}."
    if opening:
        return (
            f"cannot open the results store {where}: {type(exc).__name__}: {detail}. Check the "
            "URL (postgresql://user:password@host:port/dbname, special characters in the "
            "password percent-encoded) and that the server is running."
        )
    return (
        f"the results store {where} failed: {type(exc).__name__}: {detail}. What was stored "
        "is kept: once the database is reachable, run the same command with the same run id "
        "to resume."
    )


def sqlite_connection(path: Path) -> sqlite3.Connection:
    """A connection to ``path``, the file made ``0600`` and the folders lg_eval creates
    ``0700`` (whatever the umask)."""
    private_dirs(path.parent)
    if not path.exists():
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
    connection = sqlite3.connect(path, check_same_thread=False, timeout=30)
    try:
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("PRAGMA synchronous=NORMAL")
    except BaseException:
        connection.close()
        raise
    return connection


# --------------------------------------------------------------------------- the schema

SCHEMA = (
    """CREATE TABLE IF NOT EXISTS lg_eval_runs (
        run_id TEXT PRIMARY KEY, dataset TEXT NOT NULL, dataset_hash TEXT NOT NULL,
        status TEXT NOT NULL, started_at TEXT NOT NULL, finished_at TEXT, info TEXT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS lg_eval_cases (
        run_id TEXT NOT NULL, case_id TEXT NOT NULL, repetition INTEGER NOT NULL,
        ordinal INTEGER NOT NULL, status TEXT NOT NULL, latency_s DOUBLE PRECISION,
        tokens BIGINT, cost DOUBLE PRECISION, model_calls INTEGER, finished_at TEXT,
        result TEXT NOT NULL, PRIMARY KEY (run_id, case_id, repetition))""",
    """CREATE TABLE IF NOT EXISTS lg_eval_scores (
        run_id TEXT NOT NULL, case_id TEXT NOT NULL, repetition INTEGER NOT NULL,
        idx INTEGER NOT NULL, evaluator TEXT NOT NULL, key TEXT NOT NULL,
        score DOUBLE PRECISION, passed INTEGER, row TEXT NOT NULL,
        PRIMARY KEY (run_id, case_id, repetition, idx))""",
    # one live run per run id (_lifecycle.Lease): its owner and when its lease expires
    """CREATE TABLE IF NOT EXISTS lg_eval_leases (
        run_id TEXT PRIMARY KEY, host TEXT NOT NULL, pid INTEGER NOT NULL,
        token TEXT NOT NULL, expires_at DOUBLE PRECISION NOT NULL)""",
    # people's labels (lg_eval.labels): one per labelled unit, key and labeler; '' and -1
    # stand for "none" in the key's columns (a NULL is never equal to itself in a key)
    """CREATE TABLE IF NOT EXISTS lg_eval_labels (
        key TEXT NOT NULL, run_id TEXT NOT NULL, case_id TEXT NOT NULL,
        repetition INTEGER NOT NULL, thread_id TEXT NOT NULL, turn INTEGER NOT NULL,
        item TEXT NOT NULL, labeler TEXT NOT NULL, verdict TEXT, score DOUBLE PRECISION,
        labeled_at TEXT NOT NULL, label TEXT NOT NULL,
        PRIMARY KEY (key, run_id, case_id, repetition, thread_id, turn, item, labeler))""",
    # a thread's labels, and a case's labels of any key (the viewer's case page)
    "CREATE INDEX IF NOT EXISTS lg_eval_labels_thread ON lg_eval_labels (key, thread_id)",
    "CREATE INDEX IF NOT EXISTS lg_eval_labels_case ON lg_eval_labels"
    " (run_id, case_id, repetition)",
    # a thread's cases across runs (a sweep's case id is its thread's): where its labels pair
    "CREATE INDEX IF NOT EXISTS lg_eval_cases_thread"
    " ON lg_eval_cases (case_id, run_id, repetition)",
    "CREATE INDEX IF NOT EXISTS lg_eval_runs_dataset ON lg_eval_runs (dataset, started_at)",
    # keyset pages of a run in dataset order (iter_results), without a scan per page
    "CREATE INDEX IF NOT EXISTS lg_eval_cases_order ON lg_eval_cases (run_id, ordinal, repetition)",
    # the viewer: status counts of a run from the index alone, its cases by status
    "CREATE INDEX IF NOT EXISTS lg_eval_cases_status ON lg_eval_cases"
    " (run_id, status, ordinal, repetition)",
    "CREATE INDEX IF NOT EXISTS lg_eval_cases_numbers ON lg_eval_cases"
    " (run_id, latency_s, tokens, cost)",
    "CREATE INDEX IF NOT EXISTS lg_eval_scores_key ON lg_eval_scores"
    " (run_id, key, passed, score, evaluator, idx)",
    # the viewer's comparison: a run's cases and scores in case order, read from the index
    "CREATE INDEX IF NOT EXISTS lg_eval_cases_case ON lg_eval_cases"
    " (run_id, case_id, repetition, status)",
    "CREATE INDEX IF NOT EXISTS lg_eval_scores_case ON lg_eval_scores"
    " (run_id, case_id, repetition, key, idx, score)",
    # the viewer's "failing" filter: the cases a key failed, without reading the others
    "CREATE INDEX IF NOT EXISTS lg_eval_scores_failed ON lg_eval_scores"
    " (run_id, key, case_id, repetition) WHERE passed = 0",
)

"""The tables and indexes of a store, on both engines."""

# the viewer, per engine (their JSON functions differ): the errored feedback rows (a
# partial index, so counting errors or filtering on them reads no other row's JSON)
ENGINE_INDEXES = {
    False: (
        "CREATE INDEX IF NOT EXISTS lg_eval_scores_errors ON lg_eval_scores"
        " (run_id, key, case_id, repetition) WHERE json_extract(row, '$.error') IS NOT NULL",
    ),
    True: (
        "CREATE INDEX IF NOT EXISTS lg_eval_scores_errors ON lg_eval_scores"
        " (run_id, key, case_id, repetition) WHERE (row::jsonb ->> 'error') IS NOT NULL",
    ),
}

SCHEMA_VERSION = 6
"""The version of the results store this lg_eval writes."""

_VERSION_TABLE = (
    "CREATE TABLE IF NOT EXISTS lg_eval_schema (id INTEGER PRIMARY KEY, version INTEGER NOT NULL)"
)

MIGRATIONS: dict[int, tuple[str, ...]] = {
    1: (_VERSION_TABLE,),
    2: (),  # the viewer's indexes: every one in the current DDL, run after these steps
    3: (),  # the agent's answers: new fields of the result JSON, no table changes
    4: (),  # speakers and simulated conversations: new fields of the result JSON
    5: (),  # people's labels: a new table and indexes, all in the current DDL
}
"""Per version ``n``: the statements that make a version-``n`` store a version ``n + 1`` one."""

_NAMES = "('lg_eval_schema', 'lg_eval_runs', 'lg_eval_cases', 'lg_eval_scores')"
_TABLES = {
    False: f"SELECT name FROM sqlite_master WHERE type = 'table' AND name IN {_NAMES}",
    True: "SELECT table_name FROM information_schema.tables"
    f" WHERE table_schema = current_schema() AND table_name IN {_NAMES}",
}


def stored_version(connection: Any, *, postgres: bool) -> int | None:
    """The schema version of the store behind ``connection``: None for a database without
    lg_eval tables, 1 for lg_eval tables without a recorded version."""
    tables = {str(name) for (name,) in _rows(connection, _TABLES[postgres], postgres)}
    if "lg_eval_schema" in tables:
        rows = _rows(connection, "SELECT version FROM lg_eval_schema WHERE id = 1", postgres)
        if rows:
            return int(rows[0][0])
        tables.discard("lg_eval_schema")  # created, but the version was never written
    return 1 if tables else None


def prepare(connection: Any, *, postgres: bool, url: str) -> int | None:
    """Bring the store behind ``connection`` to :data:`SCHEMA_VERSION` (the migrations from
    its version, then :data:`SCHEMA` and the engine's indexes, every statement idempotent)
    and commit; the version it had (None: new).

    Raises:
        StoreError: the store's version is newer than :data:`SCHEMA_VERSION`.
    """
    found = stored_version(connection, postgres=postgres)
    if found is not None and found > SCHEMA_VERSION:
        raise StoreError(
            f"The results store {url} has schema version {found}, newer than version "
            f"{SCHEMA_VERSION} that this lg_eval reads and writes: upgrade lg_eval to open it, "
            "or pass another --store."
        )
    older = range(0) if found is None else range(found, SCHEMA_VERSION)
    steps = [statement for version in older for statement in MIGRATIONS[version]]
    try:
        for statement in [*steps, *SCHEMA, *ENGINE_INDEXES[postgres]]:
            connection.execute(statement)
        if found == SCHEMA_VERSION:  # current: nothing to record (a read-only store opens)
            connection.commit()
            return found
        connection.execute(_VERSION_TABLE)
        mark = "%s" if postgres else "?"
        connection.execute(
            f"INSERT INTO lg_eval_schema (id, version) VALUES (1, {mark}) ON CONFLICT DO NOTHING",
            (SCHEMA_VERSION,),
        )
        connection.execute(
            f"UPDATE lg_eval_schema SET version = {mark} WHERE id = 1 AND version < {mark}",
            (SCHEMA_VERSION, SCHEMA_VERSION),
        )
        connection.commit()
    except BaseException:
        connection.rollback()
        raise
    return found


def _rows(connection: Any, statement: str, postgres: bool) -> list[tuple[Any, ...]]:
    rows = list(connection.execute(statement).fetchall())
    if postgres:
        connection.rollback()  # end the read transaction
    return rows
