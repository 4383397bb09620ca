"""The generic checkpoint reader: LangGraph's public API, any ``BaseCheckpointSaver``.

It lists every checkpoint of the thread with ``checkpointer.list`` (control
writes, lineage, ``versions_seen``) and asks ``graph.get_state_history`` for
each namespace (the tasks LangGraph planned, their names and order). Both
decode every stored state, so this reader is slow on long threads, but it
relies on nothing private and serves as the reference the fast readers are
tested against.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from weakref import WeakKeyDictionary

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple

from lg_eval._effects import Core, Effect
from lg_eval.extract._functional import resolve_calls, task_candidates
from lg_eval.extract._mismatch import BRANCH_TO, StoredNames
from lg_eval.extract._records import (
    CONTROL,
    ERROR,
    INTERRUPT,
    NULL_TASK_ID,
    PULL,
    PUSH,
    RESUME,
    RETURN,
    ROOT_NS,
    Breakpoints,
    CheckpointRecord,
    TaskRecord,
    ThreadRecords,
    is_state_channel,
    plan_source,
    planned_by_name,
    planning_order,
    task_namespace,
)
from lg_eval.extract._selection import choose_tip, group_by_namespace
from lg_eval.extract._subgraphs import AGENT, namespace_graph, snapshot_source


async def _collect(iterator: AsyncIterator[Any]) -> list[Any]:
    return [item async for item in iterator]


def list_checkpoints(
    saver: BaseCheckpointSaver[Any], thread_id: str
) -> Effect[list[CheckpointTuple]]:
    """Every checkpoint tuple of a thread, in all namespaces."""
    config: RunnableConfig = {"configurable": {"thread_id": thread_id}}
    return Effect(lambda: list(saver.list(config)), lambda: _collect(saver.alist(config)))


def state_history(
    graph: Any, saver: BaseCheckpointSaver[Any], thread_id: str, ns: str, agent: str | None
) -> Effect[list[Any]]:
    """``get_state_history`` of one namespace of the thread, asked of the graph that wrote
    it (:func:`~lg_eval.extract._subgraphs.snapshot_source`; ``agent``: the
    ``lc_agent_name`` its checkpoints record)."""
    source, lent = snapshot_source(graph, saver, ns, agent)
    config: RunnableConfig = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ns, **lent}}
    return Effect(
        lambda: list(source.get_state_history(config)),
        lambda: _collect(source.aget_state_history(config)),
    )


def read_generic(
    graph: Any, saver: BaseCheckpointSaver[Any], thread_id: str, checkpoint_id: str | None
) -> Core[ThreadRecords]:
    """Read a thread through the public API into :class:`ThreadRecords`."""
    tuples = yield list_checkpoints(saver, thread_id)
    by_ns = group_by_namespace(tuples, thread_id)
    check_graph(graph, thread_id, tuples)
    tip_id = choose_tip(by_ns, thread_id, checkpoint_id)
    by_name = planned_by_name(
        plan_source(t, bool(t.checkpoint.get("updated_channels"))) for t in tuples
    )
    warnings: list[str] = []
    records: dict[str, list[CheckpointRecord]] = {}
    for ns, ns_tuples in by_ns.items():
        try:
            agent = (ns_tuples[0].metadata or {}).get(AGENT) if ns else None
            snapshots = yield state_history(graph, saver, thread_id, ns, agent)
        except ValueError as exc:  # LangGraph cannot find that subgraph on this graph
            warnings.append(
                f"Could not read subgraph namespace {ns!r} through the graph ({exc}); "
                "its steps are missing. Pass the graph that owns the subgraph."
            )
            continue
        by_id = {s.config["configurable"]["checkpoint_id"]: s for s in snapshots}
        records[ns] = [
            _record(graph, t, by_id[t.config["configurable"]["checkpoint_id"]], by_name, warnings)
            for t in ns_tuples
            if t.config["configurable"]["checkpoint_id"] in by_id
        ]
    return ThreadRecords(thread_id=thread_id, by_ns=records, tip_id=tip_id, warnings=warnings)


def check_graph(graph: Any, thread_id: str, tuples: Iterable[CheckpointTuple]) -> None:
    """Raise :class:`GraphMismatchError` when ``graph`` lacks a node name that one of the
    thread's checkpoints stores, in any namespace (:mod:`lg_eval.extract._mismatch`)."""
    names = StoredNames()
    for stored in tuples:
        ns = stored.config["configurable"].get("checkpoint_ns", ROOT_NS)
        names.checkpoint(ns, stored.checkpoint)
        names.writes(ns, (("", channel) for _, channel, _ in stored.pending_writes or ()))
    names.check(graph, thread_id)


def _record(
    graph: Any, stored: CheckpointTuple, snapshot: Any, by_name: set[str], warnings: list[str]
) -> CheckpointRecord:
    configurable = stored.config["configurable"]
    values = snapshot.values
    return build_record(
        graph,
        StoredFields(
            id=configurable["checkpoint_id"],
            ns=configurable.get("checkpoint_ns", ROOT_NS),
            parent_id=(stored.parent_config or {}).get("configurable", {}).get("checkpoint_id"),
            metadata=stored.metadata or {},
            created_at=stored.checkpoint.get("ts"),
            interrupt_seen=stored.checkpoint.get("versions_seen", {}).get(INTERRUPT),
            pending_writes=stored.pending_writes or (),
            channel_values=stored.checkpoint.get("channel_values", {}),
            by_name=configurable["checkpoint_id"] in by_name,
        ),
        snapshot.tasks,
        lambda: values,
        warnings,
    )


@dataclass(slots=True)  # not frozen: a frozen dataclass's __init__ costs twice as much
class StoredFields:
    """What a record takes from a stored checkpoint, however the reader got it."""

    id: str
    ns: str
    parent_id: str | None
    metadata: Mapping[str, Any]
    created_at: str | None
    interrupt_seen: dict[str, Any] | None
    pending_writes: Iterable[tuple[str, str, Any]]
    channel_values: Mapping[str, Any]
    """Only ``__start__`` is read: the raw input of an input checkpoint without a
    ``__start__`` task (functional API)."""
    by_name: bool = False
    """LangGraph plans the nodes of this checkpoint's superstep by name
    (:func:`~lg_eval.extract._records.planned_by_name`), else in the graph's order."""


def build_record(
    graph: Any,
    stored: StoredFields,
    planned: Iterable[Any],
    values: Callable[[], Any],
    warnings: list[str],
) -> CheckpointRecord:
    """The record of one checkpoint, from its stored fields and the tasks LangGraph planned
    there (``StateSnapshot.tasks``-like: ``id``, ``name``, ``result``). Both readers build
    their records here, so they cannot fill them differently."""
    writes: dict[str, list[tuple[str, Any]]] = {}
    for task_id, channel, value in stored.pending_writes:
        if task_id in writes:
            writes[task_id].append((channel, value))
        else:
            writes[task_id] = [(channel, value)]
    planned = list(planned)
    pushed = {t.id for t in planned if tuple(t.path[:1]) == (PUSH,)}
    tasks = [_task(t.id, t.name, writes.get(t.id, ()), t.result) for t in planned]
    breakpoints = breakpoints_of(graph, stored.ns)
    update_writes: dict[str, Any] = {}
    null = dict(writes[NULL_TASK_ID]) if NULL_TASK_ID in writes else {}
    goto = tuple(ch[len(BRANCH_TO) :] for ch in null if ch.startswith(BRANCH_TO)) if null else ()
    planned_ids = {t.id for t in tasks}
    order: Mapping[str, int] = {}
    if goto and RESUME in null:  # Command(resume=..., goto=...): its targets are not planned
        targets, order = goto_tasks(graph, stored, goto)
        for name, task_id in targets:
            if task_id not in planned_ids and task_id in writes:
                tasks.append(_task(task_id, name, writes[task_id]))
                tasks[-1].goto = True
                planned_ids.add(task_id)
    tasks = planning_order(tasks, pushed, order if not stored.by_name else None)
    if not planned_ids.issuperset(writes):  # writers that were not planned tasks
        unknown = {
            tid: ws for tid, ws in writes.items() if tid not in planned_ids and tid != NULL_TASK_ID
        }
        calls = {
            tid
            for tid, ws in unknown.items()
            if any(ch in (RETURN, INTERRUPT, RESUME) for ch, _ in ws)
        }
        update_writes = {
            ch: v
            for tid, ws in unknown.items()
            if tid not in calls
            for ch, v in ws
            if is_state_channel(ch)
        }
        if calls and tasks:
            call_writes = {t: unknown[t] for t in calls}
            tasks.extend(_calls(graph, stored, tasks[0], call_writes, warnings))
    metadata = stored.metadata
    start = None
    for task in tasks:
        if task.name == "__start__":
            start = task
            break
    return CheckpointRecord(
        id=stored.id,
        ns=stored.ns,
        parent_id=stored.parent_id,
        source=metadata.get("source", "loop"),
        step=metadata.get("step", 0),
        parents=dict(metadata.get("parents") or {}),
        created_at=stored.created_at,
        tasks=tasks,
        interrupt_seen=stored.interrupt_seen,
        null_resume=null.get(RESUME),
        has_null_resume=RESUME in null,
        update_writes=update_writes or None,
        values=values,
        input_value=(
            start.input_value if start is not None else stored.channel_values.get("__start__")
        ),
        breakpoints=breakpoints,
        command_goto=goto,
        command_update=(
            {ch: v for ch, v in null.items() if is_state_channel(ch)} or None
            if RESUME in null
            else None
        ),
    )


def goto_tasks(
    graph: Any, stored: StoredFields, goto: tuple[str, ...]
) -> tuple[list[tuple[str, str]], dict[str, int]]:
    """``(node, task id)`` of the tasks a ``Command(goto=...)`` given with a resume at this
    checkpoint starts: LangGraph plans them after applying the Command's writes, so
    ``get_state`` does not list them, but their ids are the PULL ids of those nodes here.
    Also the position of each node in the graph that owns the namespace."""
    from lg_eval.extract.fast._naming import id_bytes, task_hash  # imports this module

    owner = namespace_graph(graph, stored.ns, stored.metadata.get(AGENT))
    nodes = getattr(owner, "nodes", None)
    if not isinstance(nodes, Mapping):
        return [], {}
    step = str(stored.metadata.get("step", -1) + 1)
    checkpoint = id_bytes(stored.id)
    found = []
    for name in goto:
        node = nodes.get(name)
        if node is None:
            continue
        ns = f"{stored.ns}|{name}" if stored.ns else name
        found.append((name, task_hash(checkpoint, ns, step, name, PULL, *sorted(node.triggers))))
    return found, {name: position for position, name in enumerate(nodes)}


_NO_BREAKPOINTS = Breakpoints()
_UNKNOWN = Breakpoints(known=False)
_breakpoints: WeakKeyDictionary[Any, dict[str, Breakpoints]] = WeakKeyDictionary()


def breakpoints_of(graph: Any, ns: str) -> Breakpoints:
    """The static breakpoints compiled into the graph that owns namespace ``ns`` (kept per
    graph and namespace: every record asks)."""
    try:
        known = _breakpoints.get(graph)
        if known is None:
            known = _breakpoints[graph] = {}
    except TypeError:  # not weak-referenceable
        known = {}
    found = known.get(ns)
    if found is None:
        owner = namespace_graph(graph, ns)
        found = _UNKNOWN if owner is None else _compiled(owner)
        if len(known) > 4096:  # subgraph namespaces carry task ids: one per subgraph run
            known.clear()
        known[ns] = found
    return found


def _compiled(graph: Any) -> Breakpoints:
    def names(value: Any) -> frozenset[str] | str:
        if value == "*":
            return "*"
        return frozenset(value or ())

    before = names(getattr(graph, "interrupt_before_nodes", ()))
    after = names(getattr(graph, "interrupt_after_nodes", ()))
    return Breakpoints(before, after) if before or after else _NO_BREAKPOINTS


def _task(task_id: str, name: str, writes: Any, result: Any = None) -> TaskRecord:
    record = TaskRecord(id=task_id, name=name, writes=writes)
    for channel, value in writes:
        if channel == INTERRUPT:
            record.interrupts = [(getattr(i, "id", None), getattr(i, "value", i)) for i in value]
        elif channel == RESUME:
            record.resumes = list(value) if isinstance(value, list) else [value]
        elif channel == ERROR:
            record.error = str(value)
        elif channel not in CONTROL:
            record.finished = True
    if name == "__start__":
        record.input_value = result
    return record


def _calls(
    graph: Any,
    stored: StoredFields,
    entry: TaskRecord,
    call_writes: dict[str, list[tuple[str, Any]]],
    warnings: list[str],
) -> list[TaskRecord]:
    """Functional API: the ``@task`` calls the entrypoint made in this superstep."""
    ns = stored.ns
    names = resolve_calls(
        stored.id,
        ns,
        stored.metadata.get("step", 0),
        entry.name,
        entry.id,
        call_writes,
        task_candidates(graph, entry.name) if ns == ROOT_NS else [],
    )
    entry_ns = task_namespace(ns, entry.name, entry.id)
    calls = []
    for task_id, ws in call_writes.items():
        name, index = names[task_id]
        if index is None:
            warnings.append(
                f"A @task call ({task_id}) of entrypoint {entry.name!r} could not be named: "
                "its function is not referenced by the entrypoint's code."
            )
        call = _task(task_id, name, ws)
        call.caller_id = entry.id
        call.call_index = index
        call.namespace = f"{entry_ns}|{name}:{task_id}"
        calls.append(call)
    return calls
