"""What each task did at one checkpoint: an outcome per execution (paused, failed,
done), read from its interrupt, resume and error writes; functional-API calls under their
entrypoint; a subgraph task's executions from its subgraph's segments."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Literal

from lg_eval._trajectory import StateEdit, Superstep, TurnKind, TurnStatus
from lg_eval.extract._index import CheckpointIndex
from lg_eval.extract._records import (
    CheckpointRecord,
    TaskRecord,
    namespace_owner,
    parent_namespace,
    task_namespace,
)

Outcome = Literal["paused", "error", "done"]


ARRIVING_SOURCES = ("input", "loop")


def interrupt_id(ns: str, index: int) -> str | None:
    """LangGraph's id for the ``index``-th interrupt raised in task namespace ``ns``."""
    try:
        from langgraph.types import _interrupt_id  # internal: version-checked by tests
    except ImportError:  # pragma: no cover - depends on the installed LangGraph
        return None
    return _interrupt_id(ns, index)


@dataclass(slots=True)
class Segment:
    """One invocation's stretch of a namespace's lineage (a turn, at the top level)."""

    kind: TurnKind
    start: CheckpointRecord
    input_value: Any = None
    edits: list[StateEdit] = field(default_factory=list)
    supersteps: list[Superstep] = field(default_factory=list)
    status: TurnStatus = "completed"
    breakpoint: bool = False
    branched: bool = False
    end: CheckpointRecord | None = None
    next_nodes: list[str] = field(default_factory=list)
    error: str | None = None
    """Why the run stopped when no task's error says it (the recursion limit)."""
    update: dict[str, Any] | None = None
    """The ``update`` of the ``Command(resume=..., update=...)`` that started it."""

    @property
    def outcome(self) -> Outcome:
        return {"completed": "done", "interrupted": "paused", "error": "error"}[self.status]  # type: ignore[return-value]


@dataclass(slots=True)
class Plan:
    """What one task did at one checkpoint: an outcome per execution, first at visit ``start``."""

    task: TaskRecord
    outcomes: list[Outcome]
    start: int
    children: list[Segment] | None = None
    calls: list[Plan] = field(default_factory=list)
    own_pauses: list[int] = field(default_factory=list)
    """Executions in which the task's own ``interrupt()`` raised (not a subgraph's or call's)."""
    answers: list[Any] = field(default_factory=list)
    """The answer to each own pause, in order (``None`` where storage lost it)."""
    carried: tuple[str | None, Any] | None = None
    """``(interrupt id, answer)`` the first execution got without pausing here: the id of
    the pause it made before an ``update_state`` re-planned it (``None`` where it never
    paused: a ``Command(resume=...)`` sent at a static breakpoint before it)."""


def leaf_plan(task: TaskRecord, ckpt: CheckpointRecord, start: int = 0) -> Plan:
    if not (task.interrupts or task.resumes or task.error):  # the common case: it ran once
        return Plan(task, ["done"] if task.finished else [], start)
    if task.resumes and not task.interrupts:
        # It got an answer without pausing here (a pause leaves an INTERRUPT write that
        # nothing deletes): its first interrupt() took a plain Command(resume=...). Mostly
        # it was re-planned after an update_state made while it waited (at the root the
        # update checkpoint plans it; inside a subgraph the re-planned parent task started
        # the subgraph afresh and reached it in the same run); or the resume was sent at a
        # static breakpoint before it.
        outcomes: list[Outcome] = ["error", "done"] if task.error and task.finished else []
        outcomes = outcomes or (["done"] if task.finished else ["error"] if task.error else [])
        return Plan(task, outcomes, start, carried=(None, task.resumes[0]))
    if task.interrupts or task.resumes:
        ns = own_namespace(task, ckpt)
        pauses, answers = _pauses_and_answers(task, ns, ckpt)
    else:
        pauses, answers = 0, []
    outcomes = ["paused"] * pauses
    if task.finished:
        if task.error:
            outcomes.append("error")
        outcomes.append("done")
    elif task.error and pauses == len(answers):
        outcomes.append("error")
    return Plan(task, outcomes, start, own_pauses=_pauses(outcomes), answers=answers)


def _pauses_and_answers(task: TaskRecord, ns: str, ckpt: CheckpointRecord) -> tuple[int, list[Any]]:
    """How often a task paused, and the answers it got, from its control writes.


    The latest ``INTERRUPT`` write names the pause's index (its id is a hash of
    the task namespace and the index), which counts the pauses even where the
    stored ``RESUME`` list is stale: SQLite and Postgres keep the first
    ``RESUME`` row when a task's final run writes it next to its outputs, so the
    last answer of a node that asked twice is missing there. That answer is the
    thread's latest plain resume value, which LangGraph stores separately.
    """
    answers = list(task.resumes)
    if not task.interrupts:
        return len(answers), answers
    latest = task.interrupts[0][0]
    pauses = next(
        (k + 1 for k in range(len(answers) + 2) if latest and interrupt_id(ns, k) == latest),
        len(answers) + (0 if task.finished else 1),
    )
    answered = pauses if task.finished or task.error else pauses - 1
    if len(answers) < answered:
        fill = ckpt.null_resume if ckpt.has_null_resume and len(answers) == answered - 1 else None
        answers += [fill] * (answered - len(answers))
    return pauses, answers[:answered]


def own_namespace(task: TaskRecord, ckpt: CheckpointRecord) -> str:
    """The task's own checkpoint namespace (interrupt ids hash it)."""
    return task.namespace or task_namespace(ckpt.ns, task.name, task.id)


def _pauses(outcomes: list[Outcome]) -> list[int]:
    return [i for i, outcome in enumerate(outcomes) if outcome == "paused"]


def entrypoint_plan(entry: TaskRecord, calls: list[TaskRecord], ckpt: CheckpointRecord) -> Plan:
    """Functional API: calls run in order inside the entrypoint; each pause re-runs it.


    Checkpoints do not record where the entrypoint's *own* ``interrupt()`` stood
    among its calls; each answered pause is placed just before one of the last
    calls (the ask-then-act shape of LangGraph's examples), and a pending one
    after all calls, where it must be.
    """
    ordered = sorted(calls, key=lambda c: c.call_index or 0)
    answered = len(entry.resumes)
    pending = (
        not entry.finished
        and bool(entry.interrupts)
        and not any(c.interrupts and not c.finished for c in ordered)
    )
    preceded = range(max(0, len(ordered) - answered), len(ordered))
    execution = 0
    own_pauses: list[int] = []
    call_plans: list[Plan] = []
    for _ in range(answered - min(answered, len(ordered))):
        own_pauses.append(execution)
        execution += 1
    for position, call in enumerate(ordered):
        if position in preceded:
            own_pauses.append(execution)
            execution += 1
        call_plan = leaf_plan(call, ckpt, execution)
        call_plans.append(call_plan)
        execution += call_plan.outcomes.count("paused")
    if pending:
        own_pauses.append(execution)
    final: Outcome = "done" if entry.finished else ("error" if entry.error else "paused")
    outcomes: list[Outcome] = ["paused"] * execution
    outcomes.append(final)
    return Plan(
        entry, outcomes, 0, calls=call_plans, own_pauses=own_pauses, answers=list(entry.resumes)
    )


def pending_before(ckpt: CheckpointRecord, name: str, index: CheckpointIndex) -> str | None:
    """The id of the interrupt a node named ``name``, planned at ``ckpt``, was waiting at
    before the ``update_state`` checkpoints that re-planned it (``None`` if not found).

    A node of a subgraph that its re-planned parent task entered afresh waited in the
    parent's former run: the search goes up to the namespace that owns ``ckpt``'s, then
    down again through the former run of the owner to the node that paused there."""
    names = [name]
    while True:
        found = _waiting(ckpt, names, index)
        if found is not None or not ckpt.ns:
            return found
        owner_ns = parent_namespace(ckpt.ns)
        owner = index.by_id.get(owner_ns, {}).get(ckpt.parents.get(owner_ns, ""))
        if owner is None:
            return None
        names.insert(0, namespace_owner(ckpt.ns)[0])
        ckpt = owner


def _waiting(ckpt: CheckpointRecord, names: list[str], index: CheckpointIndex) -> str | None:
    """Back from ``ckpt`` over update checkpoints to the last run's stop: the interrupt of
    the task ``names[0]`` there, or of the paused ``names[1:]`` inside its subgraph."""
    known = index.by_id.get(ckpt.ns, {})
    current = known.get(ckpt.parent_id) if ckpt.parent_id else None
    while current is not None:
        for task in current.tasks:
            if task.name == names[0] and task.interrupts:
                return _paused_inside(current, task, names[1:], index)
        if current.source in ARRIVING_SOURCES:
            return None
        current = known.get(current.parent_id) if current.parent_id else None
    return None


def _paused_inside(
    ckpt: CheckpointRecord, task: TaskRecord, names: list[str], index: CheckpointIndex
) -> str | None:
    """The interrupt of the node ``names`` leads to under ``task`` (itself when empty):
    where each subgraph on the way stopped, its task of the next name that paused."""
    for name in names:
        lineages = index.child_lineages(ckpt, task)
        stop = lineages[-1][-1] if lineages and lineages[-1] else None
        paused = [t for t in stop.tasks if t.name == name and t.interrupts] if stop else []
        if stop is None or not paused:
            return None
        ckpt, task = stop, paused[0]
    return task.interrupts[0][0]


def merge_executions(calls: list[list[Segment]]) -> list[Segment]:
    """The subgraph segments of a task that invoked its subgraph several times (``calls``:
    each invocation's segments, in call order), merged per execution of the task: the calls
    run one after another, and a call that pauses (or fails) ends the task's execution; its
    next segment, and the calls after it, run in the task's next execution."""
    executions: list[list[Segment]] = [[]]
    for segments in calls:
        for segment in segments:
            executions[-1].append(segment)
            if segment.outcome != "done":
                executions.append([])
    if not executions[-1]:
        executions.pop()
    return [
        replace(
            parts[-1],
            start=parts[0].start,
            edits=[e for part in parts for e in part.edits],
            supersteps=[s for part in parts for s in part.supersteps],
            breakpoint=any(part.breakpoint for part in parts),
        )
        for parts in executions
    ]


def shift_plan(plan: Plan, offset: int) -> None:
    plan.start += offset
    for call in plan.calls:
        call.start += offset
