"""The sweep's own table in the results store: which checkpoint each run scored per thread.

::

    lg_eval_sweep_threads  (run_id, thread_id) PK, sweep, checkpoint_id

A row is written (upserted) in the transaction that puts the thread's result into
``lg_eval_cases`` (``case_id = thread_id``), one per partition. A thread counts as scored
at a checkpoint only when both exist, so nothing is ever skipped that was not stored. The
newest scored checkpoint of a thread is the greatest such id over the sweep's runs (uuid6
ids order as their times).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from lg_eval.experiments import ResultStore

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS lg_eval_sweep_threads (
        run_id TEXT NOT NULL, thread_id TEXT NOT NULL, sweep TEXT NOT NULL,
        checkpoint_id TEXT NOT NULL, PRIMARY KEY (run_id, thread_id))""",
    "CREATE INDEX IF NOT EXISTS lg_eval_sweep_threads_sweep ON lg_eval_sweep_threads"
    " (sweep, thread_id)",
)
_MARK = (
    "INSERT INTO lg_eval_sweep_threads (run_id, thread_id, sweep, checkpoint_id)"
    " VALUES (?, ?, ?, ?) ON CONFLICT (run_id, thread_id) DO UPDATE SET"
    " checkpoint_id = excluded.checkpoint_id"
)


class SweepState:
    """Reads and writes ``lg_eval_sweep_threads`` on the store's own connection.

    It shares the store's connection and lock (``ResultStore`` has no public hook for
    extra tables yet), so the store stays one database and one writer.
    """

    def __init__(self, store: ResultStore) -> None:
        self._store = store
        for statement in _SCHEMA:
            self._store.execute_many(statement, [])  # DDL: run once, no parameters

    @staticmethod
    def marks(
        sweep: str, run_id: str, heads: Iterable[tuple[str, str]]
    ) -> tuple[str, list[tuple[str, str, str, str]]]:
        """The upsert that marks ``(thread_id, checkpoint_id)`` as scored by ``run_id``, and
        its rows: for :meth:`~lg_eval.experiments.ResultStore.write`'s ``beside``, so the
        marks go in the transaction that stores the threads' results."""
        return _MARK, [(run_id, thread_id, sweep, checkpoint) for thread_id, checkpoint in heads]

    def scored(self, sweep: str, thread_ids: Sequence[str]) -> dict[str, str]:
        """The newest checkpoint stored as scored for each of ``thread_ids`` (absent: never)."""
        if not thread_ids:
            return {}
        marks = ", ".join("?" for _ in thread_ids)
        rows = self._query(
            "SELECT s.thread_id, MAX(s.checkpoint_id) FROM lg_eval_sweep_threads s"
            " JOIN lg_eval_cases c ON c.run_id = s.run_id AND c.case_id = s.thread_id"
            f" WHERE s.sweep = ? AND s.thread_id IN ({marks}) GROUP BY s.thread_id",
            [sweep, *thread_ids],
        )
        return {str(t): str(c) for t, c in rows}

    def done_in_run(self, run_id: str, thread_ids: Sequence[str]) -> set[str]:
        """Which of ``thread_ids`` already have a result in ``run_id`` (a resumed sweep)."""
        if not thread_ids:
            return set()
        marks = ", ".join("?" for _ in thread_ids)
        rows = self._query(
            f"SELECT case_id FROM lg_eval_cases WHERE run_id = ? AND case_id IN ({marks})",
            [run_id, *thread_ids],
        )
        return {str(t) for (t,) in rows}

    def checkpoints_of(self, run_id: str) -> dict[str, str]:
        """``thread_id -> checkpoint_id`` of every thread ``run_id`` scored."""
        rows = self._query(
            "SELECT s.thread_id, s.checkpoint_id FROM lg_eval_sweep_threads s"
            " JOIN lg_eval_cases c ON c.run_id = s.run_id AND c.case_id = s.thread_id"
            " WHERE s.run_id = ?",
            [run_id],
        )
        return {str(t): str(c) for t, c in rows}

    def checkpoints_for(self, run_id: str, thread_ids: Sequence[str]) -> dict[str, str]:
        """``thread_id -> checkpoint_id`` that ``run_id`` scored, for ``thread_ids`` only."""
        if not thread_ids:
            return {}
        marks = ", ".join("?" for _ in thread_ids)
        rows = self._query(
            "SELECT thread_id, checkpoint_id FROM lg_eval_sweep_threads"
            f" WHERE run_id = ? AND thread_id IN ({marks})",
            [run_id, *thread_ids],
        )
        return {str(t): str(c) for t, c in rows}

    def max_ordinal(self, run_id: str) -> int:
        rows = self._query("SELECT MAX(ordinal) FROM lg_eval_cases WHERE run_id = ?", [run_id])
        return -1 if not rows or rows[0][0] is None else int(rows[0][0])

    def _query(self, statement: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        return self._store.query(statement, params)
