"""``update_state`` checkpoints: which planned tasks' writes were an update's, and what
the update wrote."""

from __future__ import annotations

from typing import Any

from lg_eval.extract._index import CheckpointIndex
from lg_eval.extract._plans import ARRIVING_SOURCES
from lg_eval.extract._records import CheckpointRecord, TaskRecord, is_state_channel


def update_writers(
    ckpt: CheckpointRecord, child: CheckpointRecord | None, index: CheckpointIndex
) -> list[TaskRecord]:
    """Planned tasks whose writes ``update_state(..., as_node=<their node>)`` stored under
    their ids (LangGraph reuses a planned task's id for an update as that node): the run
    stopped here without running anything (no pause, no error) and the next checkpoint on
    the lineage is the update's, so those writes are the update's, not the node's (had the
    node run, the run would have gone on to a ``loop`` checkpoint, on some branch)."""
    if child is None or child.source != "update" or ckpt.source not in ARRIVING_SOURCES:
        return []
    if (ckpt.ns, ckpt.id) in index.ran_from:
        return []
    if any(t.interrupts or t.resumes or t.error for t in ckpt.tasks):
        return []
    return [t for t in ckpt.tasks if t.finished and t.caller_id is None]


def update_of(ckpt: CheckpointRecord, writers: list[TaskRecord]) -> tuple[str | None, Any]:
    """``(as_node, values)`` of the update whose writes ``writers`` hold."""
    names = {t.name for t in writers}
    values = {ch: v for t in writers for ch, v in t.writes if is_state_channel(ch)}
    values.update(ckpt.update_writes or {})
    return (names.pop() if len(names) == 1 else None), values or None
