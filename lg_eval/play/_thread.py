"""Where a played thread stands between two turns, read from its state snapshot.

Every answer source (:mod:`lg_eval.play._answers`) decides its next turn from a
:class:`ThreadState`: whether the graph has started, what it asks (the pending
interrupts, each at the deepest node that raised it), what it has planned (a breakpoint
or a failed step) and the error the last turn raised.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from langchain_core.runnables import RunnableConfig
from langgraph.types import StateSnapshot

from lg_eval.play._models import PendingInterrupt

_ASK_WIDTH = 80


@dataclass
class ThreadState:
    """Where the thread stands between two turns."""

    started: bool = False
    asked: list[PendingInterrupt] = field(default_factory=list)
    next_nodes: list[str] = field(default_factory=list)
    error: str | None = None

    def describe(self) -> str:
        """What the graph is doing, for messages: ``it finished``, ``it asks ...``."""
        if not self.started:
            return "it has not started: no input was sent yet"
        if self.asked:
            return f"it asks {describe_asks(self.asked)}"
        if self.error is not None:
            return f"it failed: {self.error}"
        if self.next_nodes:
            return f"it is paused before {names(self.next_nodes)}"
        return "it finished"

    def waiting(self) -> str:
        """What the graph waits for, for a thread that asks or is paused."""
        if self.asked:
            return f"asks {describe_asks(self.asked)}"
        return f"is paused before {names(self.next_nodes)}"


def observe(snapshot: StateSnapshot, error: str | None, started: bool) -> ThreadState:
    """The thread as ``snapshot`` (read with ``subgraphs=True``) shows it."""
    return ThreadState(
        started=started,
        asked=pending_interrupts(snapshot),
        next_nodes=list(snapshot.next),
        error=error,
    )


def thread_config(thread_id: str, config: RunnableConfig | None = None) -> RunnableConfig:
    """``config`` with ``configurable.thread_id`` set to ``thread_id``."""
    merged: dict[str, Any] = dict(config or {})
    merged["configurable"] = {**(merged.get("configurable") or {}), "thread_id": thread_id}
    return cast(RunnableConfig, merged)


def pending_interrupts(snapshot: StateSnapshot) -> list[PendingInterrupt]:
    """Interrupts waiting for an answer, each at the deepest node that raised it.

    Needs a snapshot read with ``subgraphs=True``: a subgraph node's interrupt
    is also listed on its parent task, and only the nested snapshot tells
    ``researcher:deep_dive:verify`` from ``researcher``.
    """
    found: dict[str, PendingInterrupt] = {}
    _collect(snapshot, "", found)
    return list(found.values())


def _collect(snapshot: StateSnapshot, prefix: str, found: dict[str, PendingInterrupt]) -> None:
    for task in snapshot.tasks:
        path = f"{prefix}{task.name}"
        if isinstance(task.state, StateSnapshot):
            _collect(task.state, f"{path}:", found)
        for item in task.interrupts:
            if item.id not in found:
                found[item.id] = PendingInterrupt(id=item.id, path=path, value=item.value)


def describe_asks(asked: Sequence[PendingInterrupt]) -> str:
    """``'Approve?' at node 'tools'`` for each pending interrupt, joined by ``; ``."""
    return "; ".join(f"{_summary(ask.value)} at node {ask.path!r}" for ask in asked)


def _summary(value: Any) -> str:
    if isinstance(value, Mapping) and isinstance(value.get("question"), str):
        value = value["question"]
    if isinstance(value, str):
        text = repr(value)
    else:
        try:
            text = json.dumps(value, default=str, ensure_ascii=False)
        except (TypeError, ValueError):
            text = repr(value)
    return text if len(text) <= _ASK_WIDTH else text[: _ASK_WIDTH - 3] + "..."


def names(items: Sequence[str]) -> str:
    """``'a', 'b'``: node names or paths, quoted, for messages."""
    return ", ".join(repr(n) for n in items)
