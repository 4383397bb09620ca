"""Whether a thread has stopped where a watch should score it, or is still running.

A run writes a checkpoint at every superstep, so a watch that scored every new checkpoint
would score half-finished runs. It scores a thread when its newest root checkpoint is
where a run stopped:

* ``finished``: nothing is planned next (the graph reached its end);
* ``interrupted``: a task of the newest checkpoint called ``interrupt()`` (in the graph or
  in a subgraph) and waits for the human's answer;
* ``error``: a task of the newest checkpoint raised;
* ``breakpoint``: a static ``interrupt_before`` of a planned node, or ``interrupt_after``
  of a node that ran at the checkpoint before;

otherwise the run is still going, and the watch waits for the next checkpoint, or until
the thread has been idle for the watch's ``idle`` seconds (a process that died mid-run
leaves its thread in that state for good). LangGraph's own ``get_state`` decides, at the
listed checkpoint: it plans the next tasks from the checkpoint and reads their pending
writes (interrupts, errors).

A LangGraph Server says it itself: a thread's status is ``busy`` while a run is going,
``idle``, ``interrupted`` or ``error`` after (:func:`server_reason`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from langchain_core.runnables import RunnableConfig

Reason = Literal["finished", "interrupted", "error", "breakpoint", "idle"]
REASONS: tuple[str, ...] = ("finished", "interrupted", "error", "breakpoint", "idle")
_SERVER: dict[str, Reason] = {"idle": "finished", "interrupted": "interrupted", "error": "error"}


def stop_reason(graph: Any, thread_id: str, checkpoint_id: str) -> Reason | None:
    """Why the run of ``thread_id`` stopped at root checkpoint ``checkpoint_id``, or None
    while it is still running (``graph`` is bound to the thread's checkpointer)."""
    config: RunnableConfig = {
        "configurable": {
            "thread_id": thread_id,
            "checkpoint_ns": "",
            "checkpoint_id": checkpoint_id,
        }
    }
    snapshot = graph.get_state(config)
    if not snapshot.next:
        return "finished"
    if any(task.interrupts for task in snapshot.tasks):
        return "interrupted"
    if any(task.error is not None for task in snapshot.tasks):
        return "error"
    if _stops(getattr(graph, "interrupt_before_nodes", ()), snapshot.next):
        return "breakpoint"
    after = getattr(graph, "interrupt_after_nodes", ())
    if after and snapshot.parent_config is not None:
        parent = graph.get_state(snapshot.parent_config)
        if _stops(after, [task.name for task in parent.tasks]):
            return "breakpoint"
    return None


def server_reason(status: str) -> Reason | None:
    """A LangGraph Server thread's status as a stop reason (``busy``: None, still running)."""
    return _SERVER.get(status)


def _stops(breakpoints: Any, nodes: Sequence[str]) -> bool:
    if breakpoints == "*":
        return bool(nodes)
    return bool(set(breakpoints or ()) & set(nodes))
