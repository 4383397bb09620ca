"""The fast reader: one pass over checkpoint and write rows, state decoded only at turn ends.

It fills :class:`~lg_eval.extract.records.CheckpointRecord` through the very
function the generic reader uses (``generic._record``), handing it what the
generic reader would get from ``checkpointer.list`` and ``get_state_history``
but built from storage rows without their values:

* the tasks planned at a checkpoint are the writers whose ids hash as a task
  of that checkpoint (:mod:`~lg_eval.extract.fast.naming`), which holds when
  the run went on past it (a ``loop`` child exists: every task then recorded
  an output write);
* where it did not (a pause, a breakpoint, an error, the end of a turn, a
  fork), and at every top-level checkpoint a turn can end on, the reader asks
  LangGraph for the real snapshot (``get_state``), which also gives the state
  values a turn ends with. These checkpoints number O(turns), not O(steps).

Anything it cannot read exactly raises :class:`FastPathUnavailable`, and the
caller reads the whole thread with the generic reader instead.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from types import ModuleType, SimpleNamespace
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple
from langgraph.pregel.debug import tasks_w_writes  # internal: version-pinned

from lg_eval._effects import Core, Effect
from lg_eval.extract.fast import memory, versions
from lg_eval.extract.fast.naming import PULL, Naming
from lg_eval.extract.fast.rows import (
    INTERRUPT,
    VALUE_CHANNELS,
    CheckpointRow,
    FastPathUnavailable,
    UntestedVersion,
    WriteRow,
    paused_gc,
    require,
)
from lg_eval.extract.generic import _record
from lg_eval.extract.records import ROOT_NS, CheckpointRecord, ThreadRecords
from lg_eval.extract.selection import choose_tip, group_by_namespace

START = "__start__"


def storage_for(saver: BaseCheckpointSaver) -> ModuleType:
    """The storage module that reads ``saver`` (exact classes only: subclasses may store
    differently), or :class:`FastPathUnavailable`."""
    name = f"{type(saver).__module__}.{type(saver).__qualname__}"
    if name == "langgraph.checkpoint.memory.InMemorySaver":
        return memory
    if name in (
        "langgraph.checkpoint.sqlite.SqliteSaver",
        "langgraph.checkpoint.sqlite.aio.AsyncSqliteSaver",
    ):
        from lg_eval.extract.fast import sqlite

        _check_storage_version("langgraph-checkpoint-sqlite")
        return sqlite
    if name in (
        "langgraph.checkpoint.postgres.PostgresSaver",
        "langgraph.checkpoint.postgres.aio.AsyncPostgresSaver",
    ):
        from lg_eval.extract.fast import postgres

        _check_storage_version("langgraph-checkpoint-postgres")
        return postgres
    raise FastPathUnavailable(f"no fast reader for {type(saver).__name__}")


def _check_storage_version(package: str) -> None:
    problem = versions.mismatch((package,))
    if problem is not None:
        raise UntestedVersion(problem)


def read_fast(
    graph: Any, saver: BaseCheckpointSaver, thread_id: str, checkpoint_id: str | None
) -> Core[ThreadRecords]:
    """Read a thread from storage rows into the same records as the generic reader."""
    storage = storage_for(saver)
    try:
        checkpoints, writes = yield from storage.rows(saver, thread_id)
    except FastPathUnavailable:
        raise
    except Exception as exc:  # a table or dict not shaped as the pinned version has it
        raise FastPathUnavailable(
            f"reading {type(saver).__name__} storage failed: {exc!r}"
        ) from exc
    by_ns = group_by_namespace(checkpoints, thread_id)
    tip_id = choose_tip(by_ns, thread_id, checkpoint_id)
    thread = _Thread(graph, saver, thread_id, checkpoints, writes)
    plans = {}
    for rows in by_ns.values():  # the I/O: snapshots where a run stopped, O(turns) of them
        for row in rows:
            plans[(row.ns, row.id)] = yield from thread.plan(row)
    with paused_gc():  # the rest is pure and allocates no cycles
        records = {
            ns: [thread.record(row, *plans[(ns, row.id)]) for row in rows]
            for ns, rows in by_ns.items()
        }
    return ThreadRecords(thread_id=thread_id, by_ns=records, tip_id=tip_id, warnings=[])


_Plan = tuple[list[Any], Any, dict[str, Any]]
"""``(planned tasks, snapshot or None, channel values read for the raw input)``."""


class _Thread:
    """Rows of one thread, indexed for building records."""

    def __init__(
        self,
        graph: Any,
        saver: BaseCheckpointSaver,
        thread_id: str,
        checkpoints: list[CheckpointRow],
        writes: list[WriteRow],
    ) -> None:
        self.graph = graph
        self.saver = saver
        self.thread_id = thread_id
        self.naming = Naming(graph)
        self.writes: dict[tuple[str, str], list[WriteRow]] = defaultdict(list)
        for write in writes:
            self.writes[(write.ns, write.checkpoint_id)].append(write)
        for group in self.writes.values():
            group.sort(key=lambda w: w.sort_key)
        self.children: dict[tuple[str, str], list[CheckpointRow]] = defaultdict(list)
        for row in checkpoints:
            if row.parent_id is not None:
                self.children[(row.ns, row.parent_id)].append(row)

    def config(self, row: CheckpointRow) -> RunnableConfig:
        return {
            "configurable": {
                "thread_id": self.thread_id,
                "checkpoint_ns": row.ns,
                "checkpoint_id": row.id,
            }
        }

    def needs_snapshot(self, row: CheckpointRow, writes: list[WriteRow]) -> bool:
        """Whether the run may have stopped at ``row`` (so tasks may lack writes, or a
        top-level turn may end there and need the state)."""
        children = self.children.get((row.ns, row.id), [])
        loop = [c for c in children if c.metadata.get("source") == "loop"]
        if not loop or self.naming.nodes(row.ns).untracked:
            return True
        if row.ns != ROOT_NS:
            return False
        return (
            len(loop) != len(children)  # an update, fork or new input branches off here
            or any(w.channel in VALUE_CHANNELS for w in writes)
            or any(c.interrupt_seen != row.interrupt_seen for c in loop)
        )

    def plan(self, row: CheckpointRow) -> Core[_Plan]:
        """The tasks planned at ``row`` (from writes, or a snapshot where the run stopped),
        its state values if loaded, and the raw input of an input checkpoint without a
        ``__start__`` task (functional API)."""
        require(
            row.version == versions.CHECKPOINT_FORMAT,
            f"checkpoint format v{row.version} (fast path reads v{versions.CHECKPOINT_FORMAT})",
        )
        writes = self.writes.get((row.ns, row.id), [])
        config = self.config(row)
        snapshot = None
        if self.needs_snapshot(row, writes):
            snapshot = yield _effect(
                lambda: self.graph.get_state(config), lambda: self.graph.aget_state(config)
            )
            tasks = list(snapshot.tasks)
        else:
            tasks = self.naming.planned(row, writes)
        channel_values: dict[str, Any] = {}
        if row.metadata.get("source") == "input" and not any(t.name == START for t in tasks):
            stored = yield _effect(
                lambda: self.saver.get_tuple(config), lambda: self.saver.aget_tuple(config)
            )
            channel_values = dict(stored.checkpoint.get("channel_values", {})) if stored else {}
        return tasks, snapshot, channel_values

    def record(
        self, row: CheckpointRow, tasks: list[Any], snapshot: Any, channel_values: dict[str, Any]
    ) -> CheckpointRecord:
        """The record the generic reader would build (through its own builder)."""
        writes = self.writes.get((row.ns, row.id), [])
        pending = [(w.task_id, w.channel, self.decode(w)) for w in writes]
        if snapshot is None:
            tasks = [self.start_result(row, t, pending) if t.name == START else t for t in tasks]
        config = self.config(row)
        stored = CheckpointTuple(
            config=config,
            checkpoint={  # type: ignore[typeddict-item]
                "ts": row.ts,
                "versions_seen": {}
                if row.interrupt_seen is None
                else {INTERRUPT: row.interrupt_seen},
                "channel_values": channel_values,
            },
            metadata=row.metadata,  # type: ignore[arg-type]
            parent_config=None
            if row.parent_id is None
            else {
                **config,
                "configurable": {**config["configurable"], "checkpoint_id": row.parent_id},
            },
            pending_writes=pending,
        )
        values = None if snapshot is None else snapshot.values
        unnamed: list[str] = []
        record = _record(self.graph, stored, SimpleNamespace(tasks=tasks, values=values), unnamed)
        require(not unnamed, "; ".join(unnamed))
        if snapshot is None:
            record.values = _not_loaded(row)
        return record

    def decode(self, write: WriteRow) -> Any:
        return None if write.raw is None else self.saver.serde.loads_typed(write.raw)

    def start_result(
        self, row: CheckpointRow, task: Any, pending: list[tuple[str, str, Any]]
    ) -> Any:
        """The ``__start__`` task's ``result`` exactly as ``get_state_history`` computes it."""
        own = [w for w in pending if w[0] == task.id]
        output_keys = self.naming.nodes(row.ns).graph.stream_channels_asis
        return tasks_w_writes([task], own, None, output_keys)[0]


def _effect(run: Callable[[], Any], arun: Callable[[], Any]) -> Effect[Any]:
    """An effect whose failure means "read this thread generically"."""

    def sync() -> Any:
        try:
            return run()
        except Exception as exc:
            raise FastPathUnavailable(f"LangGraph could not read a checkpoint: {exc!r}") from exc

    async def asynchronous() -> Any:
        try:
            return await arun()
        except Exception as exc:
            raise FastPathUnavailable(f"LangGraph could not read a checkpoint: {exc!r}") from exc

    return Effect(sync, asynchronous)


def _not_loaded(row: CheckpointRow) -> Callable[[], Any]:
    def load() -> Any:
        raise FastPathUnavailable(
            f"state of checkpoint {row.id} was not loaded (no turn was expected to end there)"
        )

    return load


__all__ = ["PULL", "FastPathUnavailable", "read_fast", "storage_for"]
