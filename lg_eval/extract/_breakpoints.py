"""Static breakpoints: whether one stopped a run on arrival, and whether the compiled
ones can explain a stop (else it was the recursion limit)."""

from __future__ import annotations

from lg_eval.extract._index import CheckpointIndex
from lg_eval.extract._plans import Plan
from lg_eval.extract._records import CheckpointRecord


def stopped_before_running(
    ckpt: CheckpointRecord, plans: list[Plan], index: CheckpointIndex
) -> bool:
    """A static ``interrupt_before``/``interrupt_after`` stopped the run on arrival.

    The run that went on from ``ckpt`` wrote its ``loop`` child: a continuation when that
    child's ``versions_seen['__interrupt__']`` moved (a resumed run marks every channel
    seen), the arriving run itself otherwise. That child may be on a branch time travel
    abandoned (``invoke(None, <this checkpoint>)`` forks a new one), so every branch counts:
    the turn stopped at the breakpoint whichever lineage is read."""
    if not ckpt.tasks:
        return False
    went_on = index.ran_from.get((ckpt.ns, ckpt.id), ())
    if not went_on:
        return not any(p.outcomes for p in plans)
    resumed = any(c.interrupt_seen != ckpt.interrupt_seen for c in went_on)
    return resumed and all(p.outcomes == ["done"] and not p.calls for p in plans)


def breakpoint_explains(
    ckpt: CheckpointRecord, parent: CheckpointRecord | None, plans: list[Plan]
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


def limit_error(plans: list[Plan]) -> str:
    names = ", ".join(p.task.name for p in plans if p.task.caller_id is None)
    return (
        "GraphRecursionError('Recursion limit reached without hitting a stop condition: the "
        f"run stopped before running {names}, where no static breakpoint is compiled.')"
    )
