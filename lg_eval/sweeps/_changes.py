"""Which threads of a checkpointer changed since the last look, without reading the others.

A watch asks every few seconds, and most of the time nothing changed: on a store of
100,000 idle threads the question must not cost a listing of them all. Each saver is asked
only for the root checkpoints written since a cursor:

* **SQLite**: the ``checkpoints`` table has a rowid, and SQLite gives a new row the largest
  rowid so far plus one, in commit order (one writer at a time). The cursor is the largest
  rowid seen; a poll reads ``rowid > cursor``, a range of the table's own b-tree, so an idle
  poll reads no row. Rowids are reused only when the newest rows are deleted (a thread
  deleted by ``delete_thread``): a table whose largest rowid fell below the cursor is
  reported as unknown, and the watch lists every thread once.
* **Postgres**: ids of LangGraph's checkpoints are uuid6, ordered by the time they were
  made. A poll first compares the server's transaction snapshot
  (``pg_current_snapshot()``) with the one of the previous poll: equal, nothing was
  committed anywhere on the server since, and no table is read. Otherwise it reads the
  root checkpoints whose id is newer than the previous poll's time less ``margin`` seconds
  (a checkpoint made before it was committed, or on a host whose clock is behind, is still
  seen). Without an index on ``checkpoints (checkpoint_id)`` that read scans the table;
  docs/scale.md shows the index to create for a busy database.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from lg_eval.sweeps._listing import checkpoint_bound, saver_kind, saver_rows

PAGE = 5000
"""Rows read per query of new checkpoints (SQLite), so a burst is read in steps."""


@dataclass
class CheckpointChanges:
    """The threads of ``saver`` (SqliteSaver or PostgresSaver) with a root checkpoint
    written since the previous :meth:`poll` (or since :meth:`start`).

    :meth:`poll` returns their ids, or ``None`` when it cannot tell (rowids reused after a
    deletion): then every thread must be listed once. ``queries`` counts the queries made,
    for the benchmark of an idle poll."""

    saver: Any
    margin: float = 60.0
    kind: str = field(init=False)
    queries: int = field(default=0, init=False)
    _rowid: int = field(default=0, init=False)
    _snapshot: str | None = field(default=None, init=False)
    _since: float = field(default=0.0, init=False)

    def __post_init__(self) -> None:
        self.kind = saver_kind(self.saver)

    def start(self) -> None:
        """Mark now: the next poll returns the threads written after this call."""
        if self.kind == "sqlite":
            self._rowid = self._largest_rowid()
        else:
            self._since = time.time()
            self._snapshot = self._current_snapshot()

    def poll(self) -> list[str] | None:
        """The ids of the threads with a root checkpoint written since the last poll, or
        ``None`` when that cannot be known (list every thread instead)."""
        return self._poll_sqlite() if self.kind == "sqlite" else self._poll_postgres()

    # ------------------------------------------------------------------ SQLite

    def _largest_rowid(self) -> int:
        rows = self._rows("SELECT MAX(rowid) FROM checkpoints", [])
        return int(rows[0][0] or 0) if rows else 0

    def _poll_sqlite(self) -> list[str] | None:
        found: dict[str, None] = {}
        while True:
            rows = self._rows(
                "SELECT rowid, thread_id, checkpoint_ns FROM checkpoints WHERE rowid > ?"
                f" ORDER BY rowid LIMIT {PAGE}",
                [self._rowid],
            )
            for rowid, thread_id, namespace in rows:
                self._rowid = max(self._rowid, int(rowid))
                if namespace == "":
                    found[str(thread_id)] = None
            if len(rows) < PAGE:
                break
        if not found and self._largest_rowid() < self._rowid:
            self._rowid = self._largest_rowid()  # the newest rows were deleted: rowids reused
            return None
        return list(found)

    # ------------------------------------------------------------------ Postgres

    def _current_snapshot(self) -> str | None:
        try:
            rows = self._rows("SELECT pg_current_snapshot()::text", [])
        except Exception:  # before PostgreSQL 13: read the table every poll
            return None
        return str(rows[0][0]) if rows else None

    def _poll_postgres(self) -> list[str]:
        asked = time.time()
        snapshot = self._current_snapshot()
        if snapshot is not None and snapshot == self._snapshot:
            self._since = asked  # nothing was committed since the last poll
            return []
        since = datetime.fromtimestamp(self._since, UTC) - timedelta(seconds=self.margin)
        rows = self._rows(
            "SELECT DISTINCT thread_id FROM checkpoints"
            " WHERE checkpoint_ns = '' AND checkpoint_id > %s",
            [checkpoint_bound(since)],
        )
        self._since, self._snapshot = asked, snapshot
        return [str(thread_id) for (thread_id,) in rows]

    def _rows(self, sql: str, params: list[Any]) -> list[tuple[Any, ...]]:
        self.queries += 1
        return saver_rows(self.saver, sql, params)
