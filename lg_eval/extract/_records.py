"""The contract between checkpoint readers and the trajectory assembler.

A *reader* turns whatever a checkpointer stores into :class:`CheckpointRecord`
objects; the *assembler* turns those records into turns. Readers differ in
speed (the generic reader goes through LangGraph's public API and decodes every
state, a fast reader reads storage rows directly), never in meaning: both must
fill these records identically, which the test suite checks by running every
extraction test through each reader.

A record holds only what a trajectory needs: identity and lineage, the tasks
LangGraph planned at the checkpoint (in the order it starts them) and, per task,
the control writes that say what happened to it (interrupts, resume answers,
errors, whether it finished). Full state values are loaded lazily, and only for
checkpoints where a turn ends.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any

ROOT_NS = ""
NS_SEP = "|"
NS_END = ":"

# LangGraph's storage vocabulary, shared by every reader.
NULL_TASK_ID = "00000000-0000-0000-0000-000000000000"
"""Task id of writes that belong to no task (a ``Command``'s resume value and updates)."""
INTERRUPT = "__interrupt__"
RESUME = "__resume__"
ERROR = "__error__"
RETURN = "__return__"
CONTROL = frozenset({INTERRUPT, RESUME, ERROR, "__error_source_node__", "__scheduled__"})
"""Channels that say what happened to a task rather than what it produced."""
PULL = "__pregel_pull"
PUSH = "__pregel_push"


@dataclass(slots=True)
class TaskRecord:
    """A task LangGraph planned at a checkpoint, and what its writes say about it."""

    id: str
    name: str
    interrupts: list[tuple[str | None, Any]] = field(default_factory=list)
    """The latest ``(interrupt id, payload)`` pairs the task raised (LangGraph keeps one slot)."""
    resumes: list[Any] = field(default_factory=list)
    """Every resume answer the task consumed, in order."""
    error: str | None = None
    finished: bool = False
    """True when the task recorded an output write (it ran to completion)."""
    input_value: Any = None
    """For ``__start__`` tasks: the values the input wrote (agentevals' ``task.result``)."""
    call_index: int | None = None
    """For functional-API ``@task`` calls: the call's position inside its entrypoint."""
    caller_id: str | None = None
    """For functional-API ``@task`` calls: the id of the entrypoint task that made the call."""
    namespace: str | None = None
    """The task's own checkpoint namespace when it is not ``<checkpoint ns>|<name>:<id>``."""
    goto: bool = False
    """Sent by a ``Command(resume=..., goto=...)``: LangGraph applies the Command's writes
    after planning the checkpoint's tasks, so the task runs in the resuming visit only."""
    writes: Any = ()
    """The task's ``(channel, value)`` writes (values of ordinary writes may be ``None``
    in the fast reader; those ``update_state`` stored under the task's id are real)."""

    @property
    def has_outcome(self) -> bool:
        """Whether the writes show the task ran at all."""
        return bool(self.finished or self.error or self.interrupts or self.resumes)


@dataclass(slots=True)
class CheckpointRecord:
    """One checkpoint of one namespace of a thread."""

    id: str
    ns: str
    parent_id: str | None
    source: str
    step: int
    parents: dict[str, str]
    """Metadata ``parents``: checkpoint id of each ancestor namespace at this point."""
    created_at: str | None
    tasks: list[TaskRecord]
    interrupt_seen: dict[str, Any] | None
    """``versions_seen['__interrupt__']``: changes from parent to child when a run resumed."""
    null_resume: Any = None
    has_null_resume: bool = False
    update_writes: dict[str, Any] | None = None
    """Writes stored here by an ``update_state`` that created a child checkpoint."""
    values: Callable[[], Any] | None = None
    """Loads the full state values at this checkpoint (called only where a turn ends)."""
    result: Callable[[], Any] | None = None
    """Loads the flat-form result of a turn completing here more cheaply than ``values``
    would (only the last message), where the reader can; else the result is computed
    from ``values``."""
    input_value: Any = None
    """For input checkpoints: the raw input (the ``__start__`` channel value)."""
    breakpoints: Breakpoints | None = None
    """The static breakpoints compiled into the graph that owns this namespace."""
    command_goto: tuple[str, ...] = ()
    """Nodes a ``Command(goto=...)`` given with a resume sent the run to from here."""
    command_update: dict[str, Any] | None = None
    """The state writes of a ``Command(update=...)`` given with a resume here."""


@dataclass(frozen=True, slots=True)
class Breakpoints:
    """``interrupt_before`` / ``interrupt_after`` of a compiled graph (``"*"``: every node)."""

    before: frozenset[str] | str = frozenset()
    after: frozenset[str] | str = frozenset()
    known: bool = True
    """False when the graph owning the namespace could not be found (then any stop may
    have been a breakpoint)."""

    def stops_before(self, names: list[str]) -> bool:
        return self.before == "*" or any(n in self.before for n in names)

    def stops_after(self, names: list[str]) -> bool:
        return self.after == "*" or any(n in self.after for n in names)


@dataclass
class ThreadRecords:
    """Every checkpoint a reader found for one thread, grouped by namespace."""

    thread_id: str
    by_ns: dict[str, list[CheckpointRecord]]
    tip_id: str
    """The checkpoint whose lineage is followed (newest, or the one the config names)."""
    warnings: list[str] = field(default_factory=list)


def _parts(ns: str) -> list[str]:
    """A namespace's parts, each ``node:<task id>`` with its call counter (``|N``, the
    ``N+1``-th invocation of the subgraph by one task) kept attached."""
    parts: list[str] = []
    for part in ns.split(NS_SEP):
        if part.isdigit() and parts:
            parts[-1] = f"{parts[-1]}{NS_SEP}{part}"
        else:
            parts.append(part)
    return parts


def parent_namespace(ns: str) -> str:
    """The namespace a subgraph namespace is nested in (``""`` for top-level subgraphs)."""
    parts = _parts(ns)
    return NS_SEP.join(parts[:-1]) if len(parts) > 1 else ROOT_NS


def namespace_owner(ns: str) -> tuple[str, str | None]:
    """``(node name, task id or None)`` of the task that owns a subgraph namespace."""
    last = _parts(ns)[-1].split(NS_SEP)[0]
    name, _, task_id = last.partition(NS_END)
    return name, task_id or None


def call_counter(ns: str) -> int:
    """Which invocation (0, 1, ...) of its subgraph by the owning task a namespace is."""
    last = _parts(ns)[-1]
    _, _, counter = last.partition(NS_SEP)
    return int(counter) if counter else 0


def recast(ns: str) -> str:
    """A namespace without task ids and call counters (``a:<id>|b:<id>|1`` -> ``a|b``), as
    ``get_subgraphs`` wants it."""
    return (
        NS_SEP.join(p.split(NS_END)[0] for p in ns.split(NS_SEP) if not p.isdigit()) if ns else ""
    )


def task_namespace(parent_ns: str, name: str, task_id: str) -> str:
    """The checkpoint namespace LangGraph gives a task (used for interrupt ids)."""
    own = f"{name}{NS_END}{task_id}"
    return f"{parent_ns}{NS_SEP}{own}" if parent_ns else own


def is_state_channel(channel: str) -> bool:
    """Whether a write targets user state (not LangGraph's routing or control channels)."""
    return not channel.startswith(("__", "branch:", "join:", "start:"))


def planning_order(
    tasks: list[TaskRecord], pushed: set[str], graph_order: Mapping[str, int] | None
) -> list[TaskRecord]:
    """A superstep's tasks in the order LangGraph plans them when it runs them, which is
    the order ``stream(..., subgraphs=True)`` reports them in (``prepare_next_tasks``):
    ``Send`` tasks first, as sent, then the triggered nodes by name, or in the graph's
    order (``graph_order``) where the checkpoint records no ``updated_channels`` (LangGraph
    then scans every node). ``get_state`` always lists them in the graph's order, so every
    reader sorts here. ``pushed`` holds the ids of the ``Send`` tasks."""
    if len(tasks) < 2:
        return tasks
    sends = [t for t in tasks if t.id in pushed]
    nodes = [t for t in tasks if t.id not in pushed]
    if graph_order is None:
        nodes.sort(key=attrgetter("name"))
    elif graph_order:
        nodes.sort(key=lambda t: graph_order.get(t.name, len(graph_order)))
    return sends + nodes


RUN_SOURCES = frozenset({"input", "loop"})
"""Metadata sources of the checkpoints a run writes with their ``updated_channels``: what
a reader that cannot see that field (snapshots, the server API) goes by."""


@dataclass(frozen=True, slots=True)
class PlanSource:
    """What decides how LangGraph orders the nodes it plans from one checkpoint."""

    id: str
    parent_id: str | None
    source: str | None
    """Metadata ``source``: ``"input"``, ``"loop"``, ``"update"``, ``"fork"``."""
    step: int | None
    records_updates: bool
    """The checkpoint stores a non-empty ``updated_channels``."""


def plan_source(stored: Any, records_updates: bool | None = None) -> PlanSource:
    """The :class:`PlanSource` of a ``CheckpointTuple`` or ``StateSnapshot`` (both have
    ``config``, ``parent_config`` and ``metadata``). ``records_updates=None``: the object
    does not show ``updated_channels``, so the metadata's source stands in for it."""
    metadata = stored.metadata or {}
    source = metadata.get("source")
    return PlanSource(
        stored.config["configurable"]["checkpoint_id"],
        (stored.parent_config or {}).get("configurable", {}).get("checkpoint_id"),
        source,
        metadata.get("step"),
        source in RUN_SOURCES if records_updates is None else records_updates,
    )


def planned_by_name(checkpoints: Iterable[PlanSource]) -> set[str]:
    """Ids of the checkpoints whose next superstep LangGraph plans by node name.

    A run plans by name from the ``updated_channels`` of the checkpoint it loads (every
    ``"input"`` and ``"loop"`` checkpoint stores them); ``update_state`` and ``__copy__``
    checkpoints store none, and LangGraph then plans in the graph's order. A time-travel
    run first saves a ``"fork"`` checkpoint one step after the one it was given, without
    ``updated_channels``, but plans that fork's tasks from the given checkpoint's (a
    ``__copy__`` fork sits two steps after its parent)."""
    found = {c.id: c for c in checkpoints}
    by_name = set()
    for checkpoint in found.values():
        parent = found.get(checkpoint.parent_id) if checkpoint.parent_id else None
        if checkpoint.records_updates or (
            checkpoint.source == "fork"
            and parent is not None
            and parent.records_updates
            and checkpoint.step is not None
            and parent.step == checkpoint.step - 1
        ):
            by_name.add(checkpoint.id)
    return by_name
