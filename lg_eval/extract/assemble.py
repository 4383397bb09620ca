"""Assemble turns from checkpoint records: the semantics of lg_eval's extraction.

LangGraph saves one checkpoint per superstep. The tasks planned at checkpoint
``C`` run to produce its child, but a run can *stop* at ``C`` (an interrupt, a
static breakpoint, an error, the end of the graph) and later invocations can
resume there, so one checkpoint's tasks may execute over several invocations.
We call each invocation's presence at a checkpoint a *visit*:

* visit 0 is the *arrival*: the run that created ``C`` goes on with its tasks
  (``update``/``fork`` checkpoints have no arrival; no graph run made them);
* each later visit is a resume (``Command(resume=...)``) or a continuation
  (``invoke(None)`` after a breakpoint or an error) at ``C``.

What each task did on each visit is read from its control writes: every answer
in its ``RESUME`` list follows one pause, an ``ERROR`` next to an output write
means it failed once and then succeeded, and a subgraph task ran once per
invocation of its subgraph (found recursively in the child namespace). A visit
that is not the checkpoint's last ends a turn; the last one ends a turn only if
the run stopped there. Everything here is pure: readers do the I/O.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from itertools import pairwise
from typing import Any, Literal

from lg_eval.extract.records import (
    ROOT_NS,
    CheckpointRecord,
    TaskRecord,
    ThreadRecords,
    call_counter,
    is_state_channel,
    namespace_owner,
    parent_namespace,
    task_namespace,
)
from lg_eval.extract.results import turn_result
from lg_eval.trajectory import (
    InterruptRecord,
    StateEdit,
    Superstep,
    TaskRun,
    ThreadTrajectory,
    Turn,
    TurnKind,
    TurnStatus,
    walk_tasks,
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
class _Plan:
    """What one task did at one checkpoint: an outcome per execution, first at visit ``start``."""

    task: TaskRecord
    outcomes: list[Outcome]
    start: int
    children: list[Segment] | None = None
    calls: list[_Plan] = field(default_factory=list)
    own_pauses: list[int] = field(default_factory=list)
    """Executions in which the task's own ``interrupt()`` raised (not a subgraph's or call's)."""
    answers: list[Any] = field(default_factory=list)
    """The answer to each own pause, in order (``None`` where storage lost it)."""
    carried: tuple[str | None, Any] | None = None
    """``(interrupt id, answer)`` the first execution got for a pause made at an earlier
    checkpoint (``update_state`` while the node waited, then ``Command(resume=...)``)."""


class _Index:
    """Checkpoints grouped for lineage walks and subgraph look-ups."""

    def __init__(self, records: ThreadRecords) -> None:
        self.by_id: dict[str, dict[str, CheckpointRecord]] = {
            ns: {r.id: r for r in recs} for ns, recs in records.by_ns.items()
        }
        # (parent namespace, owner node, owner task id or None) -> subgraph namespaces
        self.owned: dict[tuple[str, str, str | None], list[str]] = defaultdict(list)
        # (namespace, checkpoint id) of checkpoints a run went on from (a loop child exists)
        self.ran_from: set[tuple[str, str]] = {
            (ns, r.parent_id)
            for ns, recs in records.by_ns.items()
            for r in recs
            if r.source == "loop" and r.parent_id is not None
        }
        # (subgraph namespace, id of the parent checkpoint that ran it) -> its checkpoints
        self.under: dict[tuple[str, str], list[CheckpointRecord]] = defaultdict(list)
        for ns, recs in records.by_ns.items():
            if ns == ROOT_NS:
                continue
            parent_ns = parent_namespace(ns)
            self.owned[(parent_ns, *namespace_owner(ns))].append(ns)
            for record in recs:
                if parent_ns in record.parents:
                    self.under[(ns, record.parents[parent_ns])].append(record)

    def lineage(
        self, ns: str, tip_id: str, keep: Callable[[CheckpointRecord], bool]
    ) -> list[CheckpointRecord]:
        """Checkpoints from the oldest ancestor to ``tip_id`` (following parent links)."""
        known = self.by_id.get(ns, {})
        chain: list[CheckpointRecord] = []
        current = known.get(tip_id)
        while current is not None and keep(current):
            chain.append(current)
            current = known.get(current.parent_id) if current.parent_id else None
        chain.reverse()
        return chain

    def child_lineages(
        self, parent: CheckpointRecord, task: TaskRecord
    ) -> list[list[CheckpointRecord]]:
        """The subgraph checkpoints a task at ``parent`` wrote, oldest first: one lineage per
        invocation of the subgraph by the task (``|N`` call counters), in call order."""
        for key in ((parent.ns, task.name, task.id), (parent.ns, task.name, None)):
            # the second key: checkpointer=True subgraphs (namespaces without task ids)
            found = []
            for ns in self.owned.get(key, ()):
                mine = self.under.get((ns, parent.id))
                if mine:
                    tip = max(mine, key=lambda r: r.id)
                    lineage = self.lineage(
                        ns, tip.id, lambda r: r.parents.get(parent.ns) == parent.id
                    )
                    found.append((call_counter(ns), lineage))
            if found:
                if len(found) > 1:
                    found.sort(key=lambda pair: pair[0])
                return [lineage for _, lineage in found]
        return []


def assemble(records: ThreadRecords) -> ThreadTrajectory:
    """Build the :class:`ThreadTrajectory` for the lineage ending at ``records.tip_id``."""
    index = _Index(records)
    lineage = index.lineage(ROOT_NS, records.tip_id, lambda r: True)
    warnings = list(records.warnings) + _gap_warnings(lineage)
    segments = _segments(lineage, index, path_prefix="")
    turns = [_turn(i, seg) for i, seg in enumerate(segments)]
    warnings.extend(_ambiguous_resumes(turns))
    warnings.extend(_unread_shapes(records, lineage))
    return ThreadTrajectory(
        thread_id=records.thread_id,
        lineage=[r.id for r in lineage],
        turns=turns,
        warnings=warnings,
    )


def _gap_warnings(lineage: list[CheckpointRecord]) -> list[str]:
    """Say so when history is missing (``durability="exit"`` or pruned checkpoints)."""
    if not lineage:
        return []
    gaps = [(a, b) for a, b in pairwise(lineage) if b.source == "loop" and b.step != a.step + 1]
    first = lineage[0]
    if first.source == "input" and not gaps:
        return []
    return [
        "Checkpoint history is incomplete: the thread has no checkpoint for some supersteps "
        "(it was probably run with durability='exit', or old checkpoints were pruned). Steps "
        "that ran between saved checkpoints are missing from this trajectory; run the graph "
        "with durability='async' or 'sync' to record every superstep."
    ]


def _segments(
    lineage: list[CheckpointRecord], index: _Index, path_prefix: str, handoff: bool = False
) -> list[Segment]:
    """The segments of one namespace's lineage. With ``handoff`` (a subgraph whose owning
    task finished although the subgraph's run stopped at its last checkpoint without pausing
    or failing), the tasks planned there that left no writes ran and raised
    ``Command(graph=Command.PARENT, ...)``: a handoff, which ends the subgraph's run."""
    segments: list[Segment] = []
    current: Segment | None = None
    edits: list[StateEdit] = []
    taken: tuple[str | None, Any] | None = None
    for position, ckpt in enumerate(lineage):
        parent = lineage[position - 1] if position else None
        child = lineage[position + 1] if position + 1 < len(lineage) else None
        if ckpt.source == "update" and parent is not None:
            as_node, values = taken if taken is not None else (None, parent.update_writes)
            edits.append(
                StateEdit(
                    checkpoint_id=ckpt.id,
                    checkpoint_ns=ckpt.ns,
                    as_node=as_node,
                    values=values,
                    created_at=ckpt.created_at,
                )
            )
        writers = _update_writers(ckpt, child, index)
        taken = _taken(ckpt, writers) if writers else None
        plans = _plan_tasks(ckpt, index, path_prefix, {t.id for t in writers})
        handed_off = handoff and child is None and _hand_off(plans)
        arrival = ckpt.source in ARRIVING_SOURCES
        breakpoint_stop = arrival and _stopped_before_running(ckpt, child, plans)
        unexplained = breakpoint_stop and not _breakpoint_explains(ckpt, parent, plans)
        offset = (0 if arrival else 1) + (1 if breakpoint_stop else 0)
        visits = max(1 if arrival else 0, offset)
        sent = []
        for plan in plans:
            if plan.task.goto:
                sent.append(plan)
                continue
            if offset:
                _shift(plan, offset)
            visits = max(visits, plan.start + len(plan.outcomes))
        for plan in sent:  # a Command(resume=..., goto=...)'s targets: the resuming visit
            plan.start = max(visits - 1, 0 if arrival else 1)
            visits = max(visits, plan.start + len(plan.outcomes))
        last_stops = child is None or child.source != "loop"
        for visit in range(0 if arrival else 1, visits):
            runs = _runs_at(plans, visit, path_prefix, ckpt)
            inner = _child_segments(plans, visit)
            opens = visit > 0 or ckpt.source == "input" or current is None
            if opens:
                kind: TurnKind = (
                    "input"
                    if visit == 0 and ckpt.source == "input"
                    else ("resume" if any(_answers(r) for r in runs) else "continue")
                )
                current = Segment(kind=kind, start=ckpt, edits=edits)
                if kind == "input":
                    current.input_value = ckpt.input_value
                elif visit == visits - 1 and ckpt.command_update is not None:
                    current.update = ckpt.command_update
                edits = []
                for segment in inner:  # update_state calls made on a subgraph's own state
                    if segment.edits and segment.start.parents.get(ckpt.ns) == ckpt.id:
                        current.edits.extend(segment.edits)
            assert current is not None
            branched = (
                visit == visits - 1
                and child is not None
                and last_stops
                and bool(runs)
                and not _halted(runs)
            )
            if branched:  # these tasks' run went on in a branch this lineage does not follow
                runs = []
                if opens and visit > 0:
                    # A whole invocation on an abandoned branch (an answer given before time
                    # travel went back here): none of it is on this lineage, so no turn.
                    edits = current.edits + edits
                    current = None
                    continue
            if runs:
                current.supersteps.append(
                    Superstep(step=ckpt.step + 1, checkpoint_id=ckpt.id, tasks=runs)
                )
            if visit < visits - 1 or last_stops:
                _close(current, ckpt, runs, plans)
                if any(segment.breakpoint for segment in inner) and not branched:
                    current.status, current.breakpoint = "interrupted", True
                if visit == 0 and unexplained and current.status == "interrupted":
                    # No breakpoint stopped the run here. Continued later: the recursion
                    # limit did (an error). At the tip: that, or a run still in flight.
                    current.breakpoint = False
                    if child is not None:
                        current.status, current.error = "error", _limit_error(plans)
                if (
                    handed_off
                    and visit == visits - 1
                    and current.status == "interrupted"
                    and not any(r.paused_within for r in runs)
                ):
                    current.status, current.breakpoint, current.next_nodes = "completed", False, []
                current.branched = branched
                segments.append(current)
                current = None
    return segments


def _hand_off(plans: list[_Plan]) -> bool:
    """Mark the tasks of the last checkpoint of a handed-off subgraph run that left no
    writes as run once (they raised ``Command.PARENT``, which stores nothing here); whether
    there were any."""
    found = False
    for plan in plans:
        if not plan.outcomes and not plan.task.has_outcome and plan.children is None:
            plan.outcomes = ["done"]
            found = True
    return found


def _child_segments(plans: list[_Plan], visit: int) -> list[Segment]:
    """The subgraph segments that run in this visit (one per subgraph task that runs)."""
    found = []
    for plan in plans:
        if plan.children:
            execution = visit - plan.start
            if 0 <= execution < len(plan.children):
                found.append(plan.children[execution])
    return found


def _update_writers(
    ckpt: CheckpointRecord, child: CheckpointRecord | None, index: _Index
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


def _taken(ckpt: CheckpointRecord, writers: list[TaskRecord]) -> tuple[str | None, Any]:
    """``(as_node, values)`` of the update whose writes ``writers`` hold."""
    names = {t.name for t in writers}
    values = {ch: v for t in writers for ch, v in t.writes if is_state_channel(ch)}
    values.update(ckpt.update_writes or {})
    return (names.pop() if len(names) == 1 else None), values or None


def _breakpoint_explains(
    ckpt: CheckpointRecord, parent: CheckpointRecord | None, plans: list[_Plan]
) -> bool:
    """Whether a static breakpoint compiled into the graph can have stopped the run here:
    ``interrupt_before`` one of the planned nodes, or ``interrupt_after`` one that ran at
    the previous checkpoint. If none can, the run stopped for another reason (LangGraph's
    recursion limit: ``GraphRecursionError``). Unknown breakpoints explain every stop."""
    breakpoints = ckpt.breakpoints
    if breakpoints is None or not breakpoints.known:
        return True
    if breakpoints.stops_before([p.task.name for p in plans]):
        return True
    return parent is not None and breakpoints.stops_after([t.name for t in parent.tasks])


def _limit_error(plans: list[_Plan]) -> str:
    names = ", ".join(p.task.name for p in plans if p.task.caller_id is None)
    return (
        "GraphRecursionError('Recursion limit reached without hitting a stop condition: the "
        f"run stopped before running {names}, where no static breakpoint is compiled.')"
    )


def _plan_tasks(
    ckpt: CheckpointRecord, index: _Index, path_prefix: str, unran: set[str]
) -> list[_Plan]:
    """An execution plan per task (functional-API calls hang under their entrypoint);
    tasks in ``unran`` did not run (their writes were an ``update_state``'s)."""
    calls_by_caller: dict[str, list[TaskRecord]] = {}
    plans: list[_Plan] = []
    tasks = ckpt.tasks
    if unran:
        tasks = [replace(t, finished=False, writes=()) if t.id in unran else t for t in tasks]
    for task in tasks:
        if task.caller_id is not None:
            calls_by_caller.setdefault(task.caller_id, []).append(task)
    for task in tasks:
        if task.caller_id is not None:
            continue
        lineages = index.child_lineages(ckpt, task) if index.owned else None
        if lineages:
            prefix = f"{path_prefix}{task.name}:"
            calls = [_segments(lineage, index, prefix) for lineage in lineages]
            if task.finished:  # a call that stopped without pausing handed off (see _segments)
                calls = [
                    _segments(lineage, index, prefix, handoff=True)
                    if segments and segments[-1].outcome != "done"
                    else segments
                    for lineage, segments in zip(lineages, calls, strict=True)
                ]
            children = calls[0] if len(calls) == 1 else _executions(calls)
            outcomes = [seg.outcome for seg in children]
            if task.finished and outcomes and outcomes[-1] != "done":
                outcomes.append("done")
            plans.append(_Plan(task, outcomes, 0, children=children))
        elif calls_by_caller and task.id in calls_by_caller:
            plans.append(_entrypoint_plan(task, calls_by_caller[task.id], ckpt))
        else:
            plan = _leaf_plan(task, ckpt)
            if plan.carried is not None:
                plan.carried = (_pending_before(ckpt, task.name, index), plan.carried[1])
            plans.append(plan)
    return plans


def _executions(calls: list[list[Segment]]) -> list[Segment]:
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


def _pending_before(ckpt: CheckpointRecord, name: str, index: _Index) -> str | None:
    """The id of the interrupt a node named ``name`` was waiting at before the
    ``update_state`` checkpoints leading to ``ckpt``."""
    known = index.by_id.get(ckpt.ns, {})
    current = known.get(ckpt.parent_id) if ckpt.parent_id else None
    while current is not None:
        for task in current.tasks:
            if task.name == name and task.interrupts:
                return task.interrupts[0][0]
        if current.source in ARRIVING_SOURCES:
            return None
        current = known.get(current.parent_id) if current.parent_id else None
    return None


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


def _own_namespace(task: TaskRecord, ckpt: CheckpointRecord) -> str:
    """The task's own checkpoint namespace (interrupt ids hash it)."""
    return task.namespace or task_namespace(ckpt.ns, task.name, task.id)


def _leaf_plan(task: TaskRecord, ckpt: CheckpointRecord, start: int = 0) -> _Plan:
    if not (task.interrupts or task.resumes or task.error):  # the common case: it ran once
        return _Plan(task, ["done"] if task.finished else [], start)
    if task.resumes and not task.interrupts and ckpt.source not in ARRIVING_SOURCES:
        # Planned by update_state while the node waited: it never paused here, its first
        # run got the answer to the pause before the edit.
        outcomes: list[Outcome] = ["error", "done"] if task.error and task.finished else []
        outcomes = outcomes or (["done"] if task.finished else ["error"] if task.error else [])
        return _Plan(task, outcomes, start, carried=(None, task.resumes[0]))
    if task.interrupts or task.resumes:
        ns = _own_namespace(task, ckpt)
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
    return _Plan(task, outcomes, start, own_pauses=_pauses(outcomes), answers=answers)


def _entrypoint_plan(entry: TaskRecord, calls: list[TaskRecord], ckpt: CheckpointRecord) -> _Plan:
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
    call_plans: list[_Plan] = []
    for _ in range(answered - min(answered, len(ordered))):
        own_pauses.append(execution)
        execution += 1
    for position, call in enumerate(ordered):
        if position in preceded:
            own_pauses.append(execution)
            execution += 1
        call_plan = _leaf_plan(call, ckpt, execution)
        call_plans.append(call_plan)
        execution += call_plan.outcomes.count("paused")
    if pending:
        own_pauses.append(execution)
    final: Outcome = "done" if entry.finished else ("error" if entry.error else "paused")
    outcomes: list[Outcome] = ["paused"] * execution
    outcomes.append(final)
    return _Plan(
        entry, outcomes, 0, calls=call_plans, own_pauses=own_pauses, answers=list(entry.resumes)
    )


def _pauses(outcomes: list[Outcome]) -> list[int]:
    return [i for i, outcome in enumerate(outcomes) if outcome == "paused"]


def _shift(plan: _Plan, offset: int) -> None:
    plan.start += offset
    for call in plan.calls:
        call.start += offset


def _stopped_before_running(
    ckpt: CheckpointRecord, child: CheckpointRecord | None, plans: list[_Plan]
) -> bool:
    """A static ``interrupt_before``/``interrupt_after`` stopped the run on arrival."""
    if not ckpt.tasks:
        return False
    if child is None or child.source != "loop":
        return not any(p.outcomes for p in plans)
    resumed = child.interrupt_seen != ckpt.interrupt_seen
    return resumed and all(p.outcomes == ["done"] and not p.calls for p in plans)


def _runs_at(plans: list[_Plan], visit: int, prefix: str, ckpt: CheckpointRecord) -> list[TaskRun]:
    runs: list[TaskRun] = []
    for plan in plans:
        run = _run(plan, visit, prefix, ckpt)
        if run is None:
            continue
        if plan.calls:  # functional API: the calls ran inside the entrypoint's execution
            calls = [c for c in (_run(call, visit, prefix, ckpt) for call in plan.calls) if c]
            if calls:
                run.subgraph = [Superstep(step=ckpt.step + 1, checkpoint_id=ckpt.id, tasks=calls)]
        runs.append(run)
    return runs


def _run(plan: _Plan, visit: int, prefix: str, ckpt: CheckpointRecord) -> TaskRun | None:
    execution = visit - plan.start
    if not 0 <= execution < len(plan.outcomes):
        return None
    task = plan.task
    outcome = plan.outcomes[execution]
    resumed = execution > 0 and plan.outcomes[execution - 1] == "paused"
    run = TaskRun(name=task.name, path=f"{prefix}{task.name}", task_id=task.id, resumed=resumed)
    if outcome == "error":
        run.error = task.error
    if plan.children is not None:
        if execution < len(plan.children):
            run.subgraph = plan.children[execution].supersteps
        return run
    if plan.carried is not None and execution == 0:
        run.resumed = True
        run.answered, run.resume_value = plan.carried
        run.answered = run.answered or interrupt_id(_own_namespace(task, ckpt), 0)
    if not plan.own_pauses:
        return run
    ns = _own_namespace(task, ckpt)
    if execution in plan.own_pauses:
        run.interrupts = [_interrupt(task, ns, plan.own_pauses.index(execution), run.path)]
    if execution - 1 in plan.own_pauses:
        answered = plan.own_pauses.index(execution - 1)
        if answered < len(plan.answers):
            run.answered = interrupt_id(ns, answered)
            run.resume_value = plan.answers[answered]
    return run


def _interrupt(task: TaskRecord, ns: str, index: int, path: str) -> InterruptRecord:
    """The ``index``-th interrupt of a task; LangGraph keeps only the latest payload."""
    expected = interrupt_id(ns, index)
    for stored_id, value in task.interrupts:
        if stored_id == expected or (expected is None and index == len(task.resumes)):
            return InterruptRecord(id=stored_id, value=value, path=path)
    return InterruptRecord(id=expected, value=None, path=path)


def _answers(run: TaskRun) -> bool:
    return run.answered is not None or any(_answers(t) for s in run.subgraph for t in s.tasks)


def _close(
    segment: Segment, ckpt: CheckpointRecord, runs: list[TaskRun], plans: list[_Plan]
) -> None:
    segment.end = ckpt
    segment.next_nodes = [p.task.name for p in plans if p.task.caller_id is None]
    if any(_errored(r) for r in runs):
        segment.status = "error"
    elif any(r.paused_within for r in runs):
        segment.status = "interrupted"
    elif plans:
        segment.status = "interrupted"
        segment.breakpoint = not runs
    else:
        segment.status = "completed"


def _halted(runs: list[TaskRun]) -> bool:
    """Whether something in ``runs`` stopped the invocation (a pause or an error)."""
    return any(_errored(r) or r.paused_within for r in runs)


def _errored(run: TaskRun) -> bool:
    return run.error is not None or any(_errored(t) for s in run.subgraph for t in s.tasks)


def _turn(index: int, segment: Segment) -> Turn:
    end = segment.end or segment.start
    load = _once(end.values if end.values is not None else _no_state)
    runs = list(walk_tasks(segment.supersteps))
    answered = [r for r in runs if r.answered is not None or r.resume_value is not None]
    interrupts = [i for r in runs for i in r.interrupts]
    error = next((r.error for r in runs if r.error), None)
    turn = Turn(
        index=index,
        kind=segment.kind,
        input=segment.input_value,
        resume={r.answered or r.path: r.resume_value for r in answered} or None,
        resume_by_node=_by_node(answered) or None,
        edits=segment.edits,
        update=segment.update,
        supersteps=segment.supersteps,
        status=segment.status,
        interrupts=interrupts if segment.status == "interrupted" else [],
        error=(error or segment.error) if segment.status == "error" else None,
        breakpoint=segment.breakpoint and not segment.branched,
        branched=segment.branched,
        next_nodes=segment.next_nodes if segment.status != "completed" else [],
        result=_result(end, load) if segment.status == "completed" else {},
        start_checkpoint_id=segment.start.id,
        end_checkpoint_id=end.id,
        started_at=segment.start.created_at,
        ended_at=end.created_at,
    )
    turn.defer_state(load)  # decoded only if someone reads turn.state
    return turn


def _by_node(answered: list[TaskRun]) -> dict[str, Any]:
    """Answers keyed by the path of the node that received them; where several runs of one
    path were answered in the turn (``Send`` tasks of one node), by ``path[i]``, ``i``
    counting those runs in listing order, so that no answer is lost."""
    counts: dict[str, int] = {}
    for run in answered:
        counts[run.path] = counts.get(run.path, 0) + 1
    keyed: dict[str, Any] = {}
    seen: dict[str, int] = {}
    for run in answered:
        if counts[run.path] == 1:
            keyed[run.path] = run.resume_value
        else:
            index = seen[run.path] = seen.get(run.path, -1) + 1
            keyed[f"{run.path}[{index}]"] = run.resume_value
    return keyed


def _unread_shapes(records: ThreadRecords, lineage: list[CheckpointRecord]) -> list[str]:
    """Warnings naming shapes lg_eval does not read exactly yet (never a silent gap)."""
    return []


def _ambiguous_resumes(turns: list[Turn]) -> list[str]:
    """One warning per turn that resumed several interrupts: storage cannot tell one resume
    answering them all from answers given one at a time (a re-raised interrupt overwrites
    its slot), so the turn count is the fewest consistent with storage."""
    found = []
    for turn in turns:
        answered = len(turn.resume or {})
        if answered > 1:
            found.append(
                f"Turn {turn.index} resumes {answered} interrupts at once; the number of resumes "
                "is ambiguous: checkpoints store answers given one at a time "
                "(Command(resume={id: value}) per interrupt) exactly like one resume answering "
                f"all of them, so this may have been up to {answered} invocations. lg_eval "
                "reports the fewest turns consistent with storage."
            )
    return found


def _result(end: CheckpointRecord, load: Callable[[], Any]) -> Any:
    """A completed turn's flat-form result, without decoding the whole state if possible."""
    return end.result() if end.result is not None else turn_result(load())


def _no_state() -> None:
    return None


def _once(load: Callable[[], Any]) -> Callable[[], Any]:
    """``load`` memoized: a completed turn's result and its state share one decode."""
    cache: list[Any] = []

    def once() -> Any:
        if not cache:
            cache.append(load())
        return cache[0]

    return once
