"""The task runs of one visit to a checkpoint (its superstep's tasks), with interrupts and
answers placed, and how the visit ends its segment."""

from __future__ import annotations

from lg_eval._trajectory import InterruptRecord, Superstep, TaskRun, walk_tasks
from lg_eval.extract._plans import Plan, Segment, interrupt_id, own_namespace
from lg_eval.extract._records import CheckpointRecord, TaskRecord


def runs_at(plans: list[Plan], visit: int, prefix: str, ckpt: CheckpointRecord) -> list[TaskRun]:
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


def _run(plan: Plan, visit: int, prefix: str, ckpt: CheckpointRecord) -> TaskRun | None:
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
            # A subgraph task re-planned by an update_state made while a node inside it
            # waited: its fresh run carried that node's answer, so it resumed the wait.
            run.resumed = resumed or any(t.resumed for t in walk_tasks(run.subgraph))
        return run
    if plan.carried is not None and execution == 0:
        # Answered without pausing here: the answer to a pause it made before an edit (it
        # resumed that wait), or, where it never paused, a Command(resume=...) its first
        # interrupt() took (a resume sent at a static breakpoint): its own first question.
        pending, run.resume_value = plan.carried
        run.resumed = pending is not None
        run.answered = pending or interrupt_id(own_namespace(task, ckpt), 0)
    if not plan.own_pauses:
        return run
    ns = own_namespace(task, ckpt)
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


def has_answer(run: TaskRun) -> bool:
    return run.answered is not None or any(has_answer(t) for s in run.subgraph for t in s.tasks)


def close_segment(
    segment: Segment, ckpt: CheckpointRecord, runs: list[TaskRun], plans: list[Plan]
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


def halted(runs: list[TaskRun]) -> bool:
    """Whether something in ``runs`` stopped the invocation (a pause or an error)."""
    return any(_errored(r) or r.paused_within for r in runs)


def _errored(run: TaskRun) -> bool:
    return run.error is not None or any(_errored(t) for s in run.subgraph for t in s.tasks)
