"""The fast reader: one pass over checkpoint and write rows, state decoded only on demand.

It fills :class:`~lg_eval.extract._records.CheckpointRecord` through the very
function the generic reader uses (``generic.build_record``), handing it what the
generic reader would get from ``checkpointer.list`` and ``get_state_history``
but built from storage rows without their values:

* the tasks planned at a checkpoint are the writers whose ids hash as a task
  of that checkpoint (:mod:`~lg_eval.extract.fast._naming`), which holds when
  the run went on past it (a ``loop`` child exists: every task then recorded
  an output write);
* where it did not (a pause, a breakpoint, an error, the end of a turn, a
  fork), and at every top-level checkpoint a turn can end on, the reader reads
  the checkpoint whole but still serialized (one storage round trip for all of
  them) and plans its tasks as ``get_state`` would
  (:mod:`~lg_eval.extract.fast._planning`), decoding only the small trigger
  channels; the state there is decoded lazily, if a turn's state or result is
  wanted. These checkpoints number O(turns), not O(steps). Where that cannot be
  done exactly (``update_state`` writes pending there, a delta channel), the
  reader asks LangGraph for the real snapshot (``get_state``) of that checkpoint.

Anything it cannot read exactly raises :class:`FastPathUnavailable`, and the
caller reads the whole thread with the generic reader instead.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass, field
from importlib import import_module
from operator import attrgetter
from types import ModuleType
from typing import Any
from weakref import WeakKeyDictionary

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.pregel.debug import tasks_w_writes  # internal: version-pinned

from lg_eval._effects import Core, Effect
from lg_eval._heap import paused_gc
from lg_eval.extract._generic import StoredFields, build_record
from lg_eval.extract._mismatch import StoredNames
from lg_eval.extract._records import (
    NULL_TASK_ID,
    RESUME,
    ROOT_NS,
    CheckpointRecord,
    PlanSource,
    ThreadRecords,
    planned_by_name,
)
from lg_eval.extract._records import (
    PULL as PULL,
)
from lg_eval.extract._selection import choose_tip, group_by_namespace
from lg_eval.extract._subgraphs import AGENT, snapshot_source
from lg_eval.extract.fast import _versions as versions
from lg_eval.extract.fast._naming import Naming
from lg_eval.extract.fast._planning import planned_tasks, result_loader, state_loader
from lg_eval.extract.fast._rows import (
    VALUE_CHANNELS,
    CheckpointRow,
    ThreadRows,
    UntestedVersion,
    WriteRow,
    kept_per_graph,
)
from lg_eval.extract.fast._rows import (
    FastPathUnavailable as FastPathUnavailable,
)
from lg_eval.extract.fast._stored import StoredCheckpoint, Unreadable, split_msgpack_checkpoint

START = "__start__"


_STORAGES: dict[str, tuple[str, str | None]] = {
    "langgraph.checkpoint.memory.InMemorySaver": ("memory", None),
    "langgraph.checkpoint.sqlite.SqliteSaver": ("sqlite", "langgraph-checkpoint-sqlite"),
    "langgraph.checkpoint.sqlite.aio.AsyncSqliteSaver": ("sqlite", "langgraph-checkpoint-sqlite"),
    "langgraph.checkpoint.postgres.PostgresSaver": ("postgres", "langgraph-checkpoint-postgres"),
    "langgraph.checkpoint.postgres.aio.AsyncPostgresSaver": (
        "postgres",
        "langgraph-checkpoint-postgres",
    ),
}
"""Saver class -> (storage module under ``lg_eval.extract.fast``, package whose tested
versions it needs)."""
_storage_by_class: dict[type, tuple[ModuleType, str | None]] = {}


def storage_for(saver: BaseCheckpointSaver[Any]) -> ModuleType:
    """The storage module that reads ``saver`` (exact classes only: subclasses may store
    differently), or :class:`FastPathUnavailable`. Modules are imported on first use (the
    Postgres one needs psycopg) and kept per saver class: every extraction asks twice."""
    found = _storage_by_class.get(type(saver))
    if found is None:
        name = f"{type(saver).__module__}.{type(saver).__qualname__}"
        if name not in _STORAGES:
            raise FastPathUnavailable(f"no fast reader for {type(saver).__name__}")
        module, package = _STORAGES[name]
        found = (import_module(f"lg_eval.extract.fast._{module}"), package)
        _storage_by_class[type(saver)] = found
    storage, package = found
    if package is not None:
        _check_storage_version(package)
    return storage


def _check_storage_version(package: str) -> None:
    problem = versions.mismatch((package,))
    if problem is not None:
        raise UntestedVersion(problem)


def read_fast(
    graph: Any, saver: BaseCheckpointSaver[Any], thread_id: str, checkpoint_id: str | None
) -> Core[ThreadRecords]:
    """Read a thread from storage rows into the same records as the generic reader."""
    storage = storage_for(saver)
    found = yield from _storage_read(saver, storage.rows(saver, thread_id))
    return (yield from records_of(prepare(graph, saver, storage, thread_id, checkpoint_id, found)))


@dataclass(slots=True)
class Prepared:
    """A thread's rows indexed and its tip chosen; what :func:`records_of` still needs from
    storage is ``missing``. The batch extraction (:mod:`lg_eval.extract._batch`) prepares many
    threads from one read, then fetches what they all miss in one more (:meth:`supply`)."""

    thread: _Thread
    storage: ModuleType
    by_ns: dict[str, list[CheckpointRow]]
    tip_id: str
    stored: dict[tuple[str, str], StoredCheckpoint]
    missing: list[tuple[str, str]]
    """``(ns, id)`` of the checkpoints where the run may have stopped, not yet read whole."""

    def supply(self, found: dict[tuple[str, str], StoredCheckpoint]) -> None:
        """Take the checkpoints of ``missing`` that ``found`` has (the rest stay missing)."""
        self.stored.update((key, found[key]) for key in self.missing if key in found)
        self.missing = [key for key in self.missing if key not in self.stored]


def prepare(
    graph: Any,
    saver: BaseCheckpointSaver[Any],
    storage: ModuleType,
    thread_id: str,
    checkpoint_id: str | None,
    found: ThreadRows,
) -> Prepared:
    """Index a thread's rows (from ``storage``) and choose its tip, as :func:`read_fast` does."""
    by_ns = group_by_namespace(found.checkpoints, thread_id)
    tip_id = choose_tip(by_ns, thread_id, checkpoint_id)
    thread = _Thread(graph, saver, thread_id, found.checkpoints, found.writes)
    stored = dict(found.stored)
    missing = [
        (row.ns, row.id)
        for rows in by_ns.values()
        for row in rows
        if (row.ns, row.id) not in stored
        and (thread.stopped(row) or (row.ns == ROOT_NS and row.id == tip_id))
    ]  # the tip ends the last turn even where the run went on (an older checkpoint_id)
    if found.unsplit and missing:
        for key in missing:
            blob = found.unsplit.get(key)
            if blob is not None:
                with suppress(Unreadable):  # not a msgpack map after all: storage reads it
                    stored[key] = split_msgpack_checkpoint(blob)
        missing = [key for key in missing if key not in stored]
    return Prepared(thread, storage, by_ns, tip_id, stored, missing)


def records_of(prepared: Prepared) -> Core[ThreadRecords]:
    """The records of a prepared thread (reading what it still misses first)."""
    thread, by_ns, stored = prepared.thread, prepared.by_ns, prepared.stored
    saver, thread_id = thread.saver, thread.thread_id
    if prepared.missing:  # O(turns) checkpoints, read whole (not decoded) in one round trip
        read = prepared.storage.stored(saver, thread_id, prepared.missing)
        prepared.supply((yield from _storage_read(saver, read)))
    check_graph(prepared)
    plans = {}
    for rows in by_ns.values():
        for row in rows:
            plans[(row.ns, row.id)] = yield from thread.plan(row, stored.get((row.ns, row.id)))
    with paused_gc():  # the rest is pure and allocates no cycles
        records = {
            ns: [thread.record(row, plans[(ns, row.id)]) for row in rows]
            for ns, rows in by_ns.items()
        }
    return ThreadRecords(thread_id=thread_id, by_ns=records, tip_id=prepared.tip_id, warnings=[])


def check_graph(prepared: Prepared) -> None:
    """Raise :class:`~lg_eval.errors.GraphMismatchError` when the graph lacks a node name
    the thread's rows store (:mod:`lg_eval.extract._mismatch`): the task paths and branch
    channels of every write, and what the checkpoints read whole record (each branch's
    newest is among them, and ``versions_seen`` is carried forward to it)."""
    names = StoredNames()
    for (ns, _), group in prepared.thread.writes.items():
        names.writes(ns, ((w.task_path, w.channel) for w in group))
    for (ns, _), found in prepared.stored.items():
        names.checkpoint(ns, found.checkpoint)
    names.check(prepared.thread.graph, prepared.thread.thread_id)


def _storage_read(saver: BaseCheckpointSaver[Any], core: Core[Any]) -> Core[Any]:
    """Run a storage read; a table or dict not shaped as the pinned version has it means
    "read this thread generically"."""
    try:
        return (yield from core)
    except FastPathUnavailable:
        raise
    except Exception as exc:
        raise FastPathUnavailable(
            f"reading {type(saver).__name__} storage failed: {exc!r}"
        ) from exc


@dataclass(slots=True)
class _Plan:
    """What the reader learned of one checkpoint beyond its rows."""

    tasks: list[Any]
    snapshot: Any = None
    """LangGraph's ``get_state`` snapshot, where it had to be asked."""
    values: Callable[[], Any] | None = None
    """Decodes the state values (where the run stopped and no snapshot was taken)."""
    result: Callable[[], Any] | None = None
    """Decodes just what a completed turn's result needs (see ``planning.result_loader``)."""
    channel_values: dict[str, Any] = field(default_factory=dict)
    """Channel values read for the raw input of a functional-API input checkpoint."""


class _Thread:
    """Rows of one thread, indexed for building records."""

    def __init__(
        self,
        graph: Any,
        saver: BaseCheckpointSaver[Any],
        thread_id: str,
        checkpoints: list[CheckpointRow],
        writes: list[WriteRow],
    ) -> None:
        self.graph = graph
        self.saver = saver
        self.thread_id = thread_id
        self.naming = naming_of(graph)
        self.writes: dict[tuple[str, str], list[WriteRow]] = defaultdict(list)
        for write in writes:
            self.writes[(write.ns, write.checkpoint_id)].append(write)
        for group in self.writes.values():
            if len(group) > 1:
                group.sort(key=attrgetter("sort_key"))
        self.by_name = planned_by_name(
            PlanSource(
                row.id,
                row.parent_id,
                row.metadata.get("source"),
                row.metadata.get("step"),
                row.records_updates,
            )
            for row in checkpoints
        )
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

    def stopped(self, row: CheckpointRow) -> bool:
        """Whether the run may have stopped at ``row`` (so tasks may lack writes, or a
        top-level turn may end there and need the state)."""
        writes = self.writes.get((row.ns, row.id), [])
        children = self.children.get((row.ns, row.id), [])
        loop = [c for c in children if c.metadata.get("source") == "loop"]
        if not loop or self.naming.nodes(row.ns, row.metadata.get(AGENT)).untracked:
            return True
        if row.ns != ROOT_NS:
            return False
        return (
            len(loop) != len(children)  # an update, fork or new input branches off here
            or any(w.channel in VALUE_CHANNELS for w in writes)
            or any(c.interrupt_seen != row.interrupt_seen for c in loop)
            # A replay saves its fork with versions_seen['__interrupt__'] already moved, so a
            # continuation after a stop there (a subgraph's breakpoint, which writes nothing
            # at the root) leaves it unchanged.
            or row.metadata.get("source") == "fork"
        )

    def plan(self, row: CheckpointRow, stored: StoredCheckpoint | None) -> Core[_Plan]:
        """The tasks planned at ``row`` (from writes, or from the stored checkpoint where
        the run stopped) and how to load its state."""
        if row.version != versions.CHECKPOINT_FORMAT:
            raise UntestedVersion(
                f"checkpoint format v{row.version} (fast path reads v{versions.CHECKPOINT_FORMAT}"
                f"; langgraph-checkpoint {versions.installed('langgraph-checkpoint')} installed)"
            )
        writes = self.writes.get((row.ns, row.id), [])
        plan: _Plan | None
        if stored is None:
            plan = _Plan(tasks=self.naming.planned(row, writes))
        else:
            plan = self.plan_stopped(row, writes, stored)
        if plan is None:
            config = self.config(row)
            source, lent = snapshot_source(self.graph, self.saver, row.ns, row.metadata.get(AGENT))
            config["configurable"].update(lent)
            snapshot = yield _effect(
                lambda: source.get_state(config), lambda: source.aget_state(config)
            )
            plan = _Plan(tasks=list(snapshot.tasks), snapshot=snapshot)
        if row.metadata.get("source") == "input" and not any(t.name == START for t in plan.tasks):
            config = self.config(row)
            found = yield _effect(
                lambda: self.saver.get_tuple(config), lambda: self.saver.aget_tuple(config)
            )
            plan.channel_values = dict(found.checkpoint.get("channel_values", {})) if found else {}
        return plan

    def plan_stopped(
        self, row: CheckpointRow, writes: list[WriteRow], stored: StoredCheckpoint
    ) -> _Plan | None:
        """Plan a checkpoint where the run stopped from its stored form, as ``get_state``
        would; ``None`` when only ``get_state`` can (writes an ``update_state`` or a
        ``Command`` left pending change the state there, or storage is shaped otherwise)."""
        if any(w.task_id == NULL_TASK_ID and w.channel != RESUME for w in writes):
            return None
        graph = self.naming.nodes(row.ns, row.metadata.get(AGENT)).graph
        pending = [(w.task_id, w.channel, None) for w in writes]
        try:
            tasks = planned_tasks(
                graph,
                self.config(row),
                row.metadata.get("step", -1),
                stored,
                pending,
                self.saver.serde,
            )
            values = state_loader(graph, stored, self.saver.serde)
        except Exception:  # e.g. a delta channel or a packet that is not a Send
            return None
        result = result_loader(graph, stored, self.saver.serde, values)
        return _Plan(tasks=tasks, values=values, result=result)

    def record(self, row: CheckpointRow, plan: _Plan) -> CheckpointRecord:
        """The record the generic reader would build (through the same builder)."""
        writes = self.writes.get((row.ns, row.id), [])
        pending = [(w.task_id, w.channel, self.decode(w)) for w in writes]
        tasks, snapshot = plan.tasks, plan.snapshot
        if snapshot is None:
            tasks = [self.start_result(row, t, pending) if t.name == START else t for t in tasks]
            values = plan.values or _not_loaded(row)
        else:
            values = _constant(snapshot.values)
        stored = StoredFields(
            id=row.id,
            ns=row.ns,
            parent_id=row.parent_id,
            metadata=row.metadata,
            created_at=row.ts,
            interrupt_seen=row.interrupt_seen,
            pending_writes=pending,
            channel_values=plan.channel_values,
            by_name=row.id in self.by_name,
        )
        unnamed: list[str] = []
        record = build_record(self.graph, stored, tasks, values, unnamed)
        if unnamed:
            raise FastPathUnavailable("; ".join(unnamed))
        if snapshot is None:
            record.result = plan.result
        return record

    def decode(self, write: WriteRow) -> Any:
        return None if write.raw is None else self.saver.serde.loads_typed(write.raw)

    def start_result(
        self, row: CheckpointRow, task: Any, pending: list[tuple[str, str, Any]]
    ) -> Any:
        """The ``__start__`` task's ``result`` exactly as ``get_state_history`` computes it."""
        own = [w for w in pending if w[0] == task.id]
        output_keys = self.naming.nodes(row.ns, row.metadata.get(AGENT)).graph.stream_channels_asis
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


_namings: WeakKeyDictionary[Any, Naming] = WeakKeyDictionary()


def naming_of(graph: Any) -> Naming:
    """The :class:`Naming` of a compiled graph, kept while the graph lives."""
    return kept_per_graph(_namings, graph, Naming)


def _constant(value: Any) -> Callable[[], Any]:
    return lambda: value


def _not_loaded(row: CheckpointRow) -> Callable[[], Any]:
    def load() -> Any:
        raise FastPathUnavailable(
            f"state of checkpoint {row.id} was not loaded (no turn was expected to end there)"
        )

    return load
