"""Read the host thread's own trajectory from inside a running node.

LangGraph saves a checkpoint when it plans a superstep, then runs the
superstep's tasks. A node therefore runs *at* the checkpoint its superstep
was planned from (``config["configurable"]["checkpoint_map"][""]``, called
``C`` below), and nothing of its own superstep is saved yet. What a node can
read, and what :func:`read_in_flight` returns, is the thread up to ``C``:

* every earlier turn exactly as :func:`lg_eval.extract_thread` reports it;
* the current turn with the supersteps that ran *before* this node's
  superstep. It is reported in flight: ``status="interrupted"`` with no
  interrupts, ``breakpoint=False``, ``result={}``, ``next_nodes`` naming the
  nodes of this superstep (this node and its parallel siblings, whose
  partial writes are left out so the answer does not depend on timing) and
  ``state`` holding the values this node received;
* the current turn's index is the returned ``turn``.

When the current invocation *continues* a turn that stopped at ``C`` with an
error (``invoke(None)`` retrying this superstep), nothing of the new turn is
saved yet: the trajectory is returned as recorded and ``turn`` is the index
the new turn will get. A stop at ``C`` that left no trace (a static
``interrupt_before`` on this node, or a crashed process) cannot be told apart
from an arrival at ``C`` in storage, so it reads as the current turn.

With ``durability="async"`` (LangGraph's default) the checkpoint ``C`` is
written in the background while the superstep runs, so the reader first waits
until ``C`` is saved. LangGraph saves each task's writes (and a resume's) in the
background too, on their own and not ordered with the checkpoints after them, so
the reader then waits until every task that ran in this invocation before ``C``
has its writes saved (a task is finished when it has an output write, the rule of
``langgraph.pregel._task_status``); a thread where that never happens is read
as stored once the timeout passes. The polls start 2 ms apart and back off to
50 ms, and a checkpoint found with all its writes is not read again, so a wait
on a long turn costs one read per settled checkpoint, not one per poll. With
``durability="exit"`` nothing of the running invocation is saved and the reader raises
:class:`~lg_eval.errors.CheckpointNotFoundError`.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver

from lg_eval._effects import Core, Effect, sleep
from lg_eval._trajectory import ThreadTrajectory
from lg_eval.errors import CheckpointNotFoundError, MissingCheckpointerError
from lg_eval.extract._records import CONTROL, INTERRUPT
from lg_eval.extract._thread import checkpointer_of, extraction, thread_of

POLL_SECONDS = 0.002
MAX_POLL_SECONDS = 0.05
DURABILITY_KEY = "__pregel_durability"  # set by LangGraph when a run passes durability=...


def current_checkpoint(config: RunnableConfig) -> str | None:
    """The root checkpoint the running superstep was planned from (None without a checkpointer)."""
    configurable = config.get("configurable") or {}
    return (configurable.get("checkpoint_map") or {}).get("")


def read_in_flight(
    graph: Any, config: RunnableConfig, timeout: float
) -> Core[tuple[ThreadTrajectory, int]]:
    """``(trajectory so far, index of the current turn)`` for the node running with ``config``."""
    saver = checkpointer_of(graph)
    thread_id, _ = thread_of(config)
    checkpoint_id = current_checkpoint(config)
    if checkpoint_id is None:
        raise MissingCheckpointerError(
            "The running graph has no checkpointer, so this node cannot read its thread. "
            "Compile the graph with a checkpointer and run it with a thread_id."
        )
    if (config.get("configurable") or {}).get(DURABILITY_KEY) == "exit":
        raise CheckpointNotFoundError(
            "This run uses durability='exit', so none of its checkpoints are saved before it "
            "ends and the thread cannot be read mid-run; run it with durability='async' "
            "(the default) or 'sync'."
        )
    address = {"thread_id": thread_id, "checkpoint_ns": "", "checkpoint_id": checkpoint_id}
    pinned: RunnableConfig = {"configurable": address}
    head = yield from _saved(saver, pinned, timeout)
    yield from _settled(graph, saver, head, timeout)
    trajectory = yield from extraction(graph, pinned)
    return in_flight(trajectory, checkpoint_id)


def _pauses() -> Iterator[float]:
    """The waits between polls: :data:`POLL_SECONDS`, doubling up to :data:`MAX_POLL_SECONDS`.
    A write that lands at once is seen within 2 ms; one that lags costs a few reads a
    second, not one every 2 ms."""
    pause = POLL_SECONDS
    while True:
        yield pause
        pause = min(pause * 2, MAX_POLL_SECONDS)


def _saved(saver: BaseCheckpointSaver[Any], pinned: RunnableConfig, timeout: float) -> Core[Any]:
    """Wait until the background save of the pinned checkpoint has landed; its tuple."""
    deadline = time.monotonic() + timeout
    pauses = _pauses()
    while True:
        found = yield _tuple(saver, pinned)
        if found is not None:
            return found
        if time.monotonic() >= deadline:
            checkpoint_id = pinned["configurable"]["checkpoint_id"]
            raise CheckpointNotFoundError(
                f"Checkpoint {checkpoint_id} of the running thread was not saved within "
                f"{timeout:g}s. Check the checkpointer, or give the node a longer "
                "checkpoint_timeout."
            )
        yield sleep(_pause(next(pauses), deadline))


def _settled(graph: Any, saver: BaseCheckpointSaver[Any], head: Any, timeout: float) -> Core[None]:
    """Wait until the writes of the supersteps this invocation ran before the pinned
    checkpoint (``head``, its tuple) are saved (or ``timeout`` passes: then the thread is
    read as stored)."""
    deadline = time.monotonic() + timeout
    pauses = _pauses()
    walk = _Walk(head)
    while (yield from walk.writes_missing(graph, saver)) and time.monotonic() < deadline:
        yield sleep(_pause(next(pauses), deadline))


def _pause(pause: float, deadline: float) -> float:
    """``pause``, cut so the last poll comes at the deadline, not up to a pause after it."""
    return max(0.0, min(pause, deadline - time.monotonic()))


@dataclass
class _Walk:
    """The walk back from the pinned checkpoint, remembered across polls.

    Checkpoints never change once saved, and a checkpoint's writes only grow, so a parent
    found with every task's writes stays so: later polls pass it without reading it, and
    only the first parent still missing writes is read again (its tuple; the tasks planned
    at it are read once, being fixed by the checkpoint)."""

    head: Any
    """The pinned checkpoint's tuple, where the walk starts."""
    complete: dict[str, Any] = field(default_factory=dict)
    """Parent checkpoint id -> its tuple, read when every task planned at it had writes."""
    planned: dict[str, frozenset[str]] = field(default_factory=dict)
    """Checkpoint id -> the ids of the tasks planned at it (from ``get_state``)."""

    def writes_missing(self, graph: Any, saver: BaseCheckpointSaver[Any]) -> Core[bool]:
        """Whether a superstep between the start of this invocation and the pinned
        checkpoint lacks a finished task's writes. Walks back while a checkpoint was made
        by running its parent's superstep (source ``loop``): there every task planned at the
        parent finished. It stops at the parent where an earlier invocation paused at an
        interrupt, and at a checkpoint made by input or an edit (the invocation's start):
        earlier invocations saved all their writes before they returned."""
        child = self.head
        while child is not None and child.parent_config and child.metadata.get("source") == "loop":
            parent_id = child.parent_config["configurable"]["checkpoint_id"]
            parent = self.complete.get(parent_id)
            if parent is None:
                parent = yield _tuple(saver, child.parent_config)
                if parent is None:
                    return False
                if parent_id not in self.planned:
                    snapshot = yield _snapshot(graph, parent.config)
                    self.planned[parent_id] = frozenset(task.id for task in snapshot.tasks)
                writes = parent.pending_writes or []
                finished = {task_id for task_id, channel, _ in writes if channel not in CONTROL}
                if not self.planned[parent_id] <= finished:
                    return True
                self.complete[parent_id] = parent
            if any(channel == INTERRUPT for _, channel, _ in parent.pending_writes or []):
                return False  # where the previous invocation paused: it saved all it wrote
            child = parent
        return False


def _snapshot(graph: Any, config: RunnableConfig) -> Effect[Any]:
    return Effect(lambda: graph.get_state(config), lambda: graph.aget_state(config))


def _tuple(saver: BaseCheckpointSaver[Any], config: RunnableConfig) -> Effect[Any]:
    return Effect(lambda: saver.get_tuple(config), lambda: saver.aget_tuple(config))


def in_flight(trajectory: ThreadTrajectory, checkpoint_id: str) -> tuple[ThreadTrajectory, int]:
    """Mark the turn that reached ``checkpoint_id`` as in flight (see the module docstring)."""
    turns = trajectory.turns
    last = turns[-1] if turns else None
    if last is None or last.end_checkpoint_id != checkpoint_id or last.status == "error":
        return trajectory, len(turns)
    current = last.model_copy(
        update={
            "supersteps": [s for s in last.supersteps if s.checkpoint_id != checkpoint_id],
            "status": "interrupted",
            "interrupts": [],
            "breakpoint": False,
            "result": {},
        }
    )
    return trajectory.model_copy(update={"turns": [*turns[:-1], current]}), last.index
