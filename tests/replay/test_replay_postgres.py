"""Replay from a Postgres checkpointer: the same changed threads, its tables untouched."""

from __future__ import annotations

from typing import Any

from lg_eval.replay import replay_threads
from tests.replay import helpers
from tests.replay.helpers import thread_id, waiting

FIRST, COUNT = 140, 20  # t140..t159: both sides of v2's 150 line
WAITING = [thread_id(i) for i in range(FIRST, FIRST + COUNT) if waiting(i)]  # t140 t147 t154


def _dump(saver: Any) -> list[Any]:
    """Every row of the Postgres checkpointer's tables, in key order."""
    with saver.conn.cursor() as cur:
        tables = []
        for table in ("checkpoints", "checkpoint_blobs", "checkpoint_writes"):
            cur.execute(f"SELECT * FROM {table} ORDER BY 1, 2, 3, 4")
            tables.append([tuple(row.values()) for row in cur.fetchall()])
        return tables


def test_postgres_replay_changes_the_threads_over_150_and_writes_nothing(
    postgres_saver: Any,
) -> None:
    helpers.populate(helpers.build(postgres_saver), COUNT, start=FIRST)
    before = _dump(postgres_saver)
    result = replay_threads(
        helpers.build_v2, postgres_saver, evaluators=["tests.replay.helpers:nodes"], run="pg"
    )
    assert [t.thread_id for t in result.threads] == [
        thread_id(i) for i in range(FIRST, FIRST + COUNT)
    ]
    assert result.changed_thread_ids == [thread_id(i) for i in range(151, 160) if not waiting(i)]
    assert [t.thread_id for t in result.threads if t.status == "stopped"] == WAITING
    assert _dump(postgres_saver) == before
    assert len(before[0]) == 5 * COUNT - 2 * len(WAITING)
