"""A namespace's lineage cut into segments (one invocation's stretch each; turns at the
top level), recursing into the subgraph lineages its tasks wrote."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from lg_eval._trajectory import StateEdit, Superstep, TurnKind
from lg_eval.extract._breakpoints import breakpoint_explains, limit_error, stopped_before_running
from lg_eval.extract._index import CheckpointIndex
from lg_eval.extract._plans import (
    ARRIVING_SOURCES,
    Plan,
    Segment,
    entrypoint_plan,
    leaf_plan,
    merge_executions,
    pending_before,
    shift_plan,
)
from lg_eval.extract._records import CheckpointRecord, TaskRecord
from lg_eval.extract._runs import close_segment, halted, has_answer, runs_at
from lg_eval.extract._updates import update_of, update_writers


def lineage_segments(
    lineage: list[CheckpointRecord], index: CheckpointIndex, path_prefix: str, handoff: bool = False
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
        writers = update_writers(ckpt, child, index)
        taken = update_of(ckpt, writers) if writers else None
        plans = _plan_tasks(ckpt, index, path_prefix, {t.id for t in writers})
        handed_off = handoff and child is None and _hand_off(plans)
        arrival = ckpt.source in ARRIVING_SOURCES
        breakpoint_stop = arrival and stopped_before_running(ckpt, plans, index)
        unexplained = breakpoint_stop and not breakpoint_explains(ckpt, parent, plans)
        offset = (0 if arrival else 1) + (1 if breakpoint_stop else 0)
        visits = max(1 if arrival else 0, offset)
        sent = []
        for plan in plans:
            if plan.task.goto:
                sent.append(plan)
                continue
            if offset:
                shift_plan(plan, offset)
            visits = max(visits, plan.start + len(plan.outcomes))
        for plan in sent:  # a Command(resume=..., goto=...)'s targets: the resuming visit
            plan.start = max(visits - 1, 0 if arrival else 1)
            visits = max(visits, plan.start + len(plan.outcomes))
        last_stops = child is None or child.source != "loop"
        for visit in range(0 if arrival else 1, visits):
            runs = runs_at(plans, visit, path_prefix, ckpt)
            inner = _child_segments(plans, visit)
            opens = visit > 0 or ckpt.source == "input" or current is None
            if opens:
                kind: TurnKind = (
                    "input"
                    if visit == 0 and ckpt.source == "input"
                    else ("resume" if any(has_answer(r) for r in runs) else "continue")
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
                and not halted(runs)
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
                close_segment(current, ckpt, runs, plans)
                if any(segment.breakpoint for segment in inner) and not branched:
                    current.status, current.breakpoint = "interrupted", True
                if visit == 0 and unexplained and current.status == "interrupted":
                    # No breakpoint stopped the run here. Continued later: the recursion
                    # limit did (an error). At the tip: that, or a run still in flight.
                    current.breakpoint = False
                    if child is not None:
                        current.status, current.error = "error", limit_error(plans)
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


def _hand_off(plans: list[Plan]) -> bool:
    """Mark the tasks of the last checkpoint of a handed-off subgraph run that left no
    writes as run once (they raised ``Command.PARENT``, which stores nothing here); whether
    there were any."""
    found = False
    for plan in plans:
        if not plan.outcomes and not plan.task.has_outcome and plan.children is None:
            plan.outcomes = ["done"]
            found = True
    return found


def _child_segments(plans: list[Plan], visit: int) -> list[Segment]:
    """The subgraph segments that run in this visit (one per subgraph task that runs)."""
    found = []
    for plan in plans:
        if plan.children:
            execution = visit - plan.start
            if 0 <= execution < len(plan.children):
                found.append(plan.children[execution])
    return found


def _plan_tasks(
    ckpt: CheckpointRecord, index: CheckpointIndex, path_prefix: str, unran: set[str]
) -> list[Plan]:
    """An execution plan per task (functional-API calls hang under their entrypoint);
    tasks in ``unran`` did not run (their writes were an ``update_state``'s)."""
    calls_by_caller: dict[str, list[TaskRecord]] = {}
    plans: list[Plan] = []
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
            calls = [lineage_segments(lineage, index, prefix) for lineage in lineages]
            if (
                task.finished
            ):  # a call that stopped without pausing handed off (see lineage_segments)
                calls = [
                    lineage_segments(lineage, index, prefix, handoff=True)
                    if segments and segments[-1].outcome != "done"
                    else segments
                    for lineage, segments in zip(lineages, calls, strict=True)
                ]
            children = calls[0] if len(calls) == 1 else merge_executions(calls)
            outcomes = [seg.outcome for seg in children]
            if task.finished and outcomes and outcomes[-1] != "done":
                outcomes.append("done")
            plans.append(Plan(task, outcomes, 0, children=children))
        elif calls_by_caller and task.id in calls_by_caller:
            plans.append(entrypoint_plan(task, calls_by_caller[task.id], ckpt))
        else:
            plan = leaf_plan(task, ckpt)
            if plan.carried is not None:
                plan.carried = (pending_before(ckpt, task.name, index), plan.carried[1])
            plans.append(plan)
    return plans
