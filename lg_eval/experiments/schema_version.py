"""The results store's schema version: recorded on create, migrated on open, a newer refused.

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
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lg_eval.errors import StoreError

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


def prepare(connection: Any, schema: Sequence[str], *, postgres: bool, url: str) -> int | None:
    """Bring the store behind ``connection`` to :data:`SCHEMA_VERSION` (``schema``: the
    current DDL, every statement idempotent) and commit; the version it had (None: new).

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
        for statement in [*steps, *schema]:
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


__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "prepare", "stored_version"]
