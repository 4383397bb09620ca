"""What the turn loop and its answer sources share: where the thread stands, the I/O steps
they yield, and how an answer is sent.

Answer sources. Where the human's side of a played thread comes from, and how an answer is sent.

The one turn loop (:mod:`lg_eval.play._player`) asks an :class:`AnswerSource` for each
next turn, given where the thread stands. lg_eval has two sources, both built on the
same steps:

- :class:`~lg_eval.play.Script`: a golden case's scripted turns, each checked against
  what the graph asks (:mod:`lg_eval.play._script`);
- :class:`~lg_eval.play.FromRecording`: answers recorded per asking node and inputs in
  order, as :mod:`lg_eval.replay` reads them from a production thread
  (:mod:`lg_eval.play._recording`).

Both may hand a question to a simulated reviewer (:class:`~lg_eval.play.SimulatedReviewer`
or any callable taking the pending interrupts). Every answer to pending interrupts goes
through :func:`resume_value`, the one place an answer becomes ``Command(resume=...)``'s
value.

The thread. Where a played thread stands between two turns, read from its state snapshot.
Every answer source decides its next turn from a
:class:`ThreadState`: whether the graph has started, what it asks (the pending
interrupts, each at the deepest node that raised it), what it has planned (a breakpoint
or a failed step) and the error the last turn raised.

The steps. The player's I/O, as :mod:`lg_eval._effects` effects (blocking or awaited).
A state read, a state edit and a call of user code (a ``resume_fn``, a reviewer): the one
turn loop (:mod:`lg_eval.play._player`, which also runs the turns) and the answer sources
yield these, so the sync and async players are one core.
"""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, cast

from langchain_core.runnables import RunnableConfig
from langgraph.types import StateSnapshot

from lg_eval._effects import Core, Effect
from lg_eval.datasets import TurnKind
from lg_eval.errors import InvalidOptionError
from lg_eval.play._models import Graph, PendingInterrupt, PlayedCase, Speaker, SpeakerUsage

_INTERRUPT_ID = re.compile(r"[0-9a-f]{32}")
"""LangGraph's interrupt ids (``xxh3_128`` hex digests); ``Command(resume=d)`` takes a dict
``d`` whose keys all look like this as a map of answers by interrupt id."""


@dataclass(frozen=True)
class Move:
    """One turn an answer source asks the player to play."""

    index: int
    """The turn's number, as :class:`~lg_eval.play.PlayedTurn` records it."""
    kind: TurnKind
    """``input`` and ``continue`` run the graph with ``sent``; ``update`` edits the state
    with ``sent`` (``{values, as_node}``); every other kind resumes with ``sent``."""
    sent: Any
    config: RunnableConfig
    """The run config of the turn (the thread's, perhaps with checkpoint metadata)."""
    by: Speaker = "script"
    """Who wrote ``sent``."""
    usage: SpeakerUsage | None = None
    """The simulated user's model calls that wrote ``sent``."""


class AnswerSource(Protocol):
    """The human's side of a thread: what the player sends at each turn."""

    name: str
    """What the played thread is recorded as (:attr:`PlayedCase.case_id`)."""

    def begin(self, graph: Graph, config: RunnableConfig, played: PlayedCase) -> Core[ThreadState]:
        """Before the first turn: the thread as it stands (``played`` may be given the
        records of turns an earlier run finished)."""
        ...

    def next_turn(
        self, thread: ThreadState, played: PlayedCase, config: RunnableConfig
    ) -> Core[Move | None]:
        """The next turn, given where ``thread`` stands; None when there is nothing more to
        send. Raises :class:`~lg_eval.errors.ScriptMismatchError` when the thread is not
        where the source expects."""
        ...

    def retries(self, played: PlayedCase) -> bool:
        """Whether the turn after ``played``'s last (which raised) goes on from the error."""
        ...

    def end(self, thread: ThreadState, played: PlayedCase) -> None:
        """After the last turn: raises when the thread may not end as ``thread`` stands."""
        ...


def answers_by_id(answer: Any, pending: Sequence[PendingInterrupt]) -> dict[str, Any]:
    """An answer to ``pending`` read per interrupt id: a non-empty mapping whose keys are
    all pending ids answers those; anything else answers every pending interrupt."""
    ids = {ask.id for ask in pending}
    if isinstance(answer, Mapping) and answer and set(answer) <= ids:
        return dict(answer)
    return {ask.id: answer for ask in pending}


def resume_value(by_id: Mapping[str, Any], pending: Sequence[PendingInterrupt]) -> Any:
    """The ``Command(resume=...)`` value that gives each pending interrupt its answer in
    ``by_id``: the bare answer when one interrupt is pending and LangGraph reads that
    answer as one value, else the map by interrupt id.

    LangGraph takes a dict whose keys all look like interrupt ids (an empty dict
    included) as a map by id, refuses a bare value when several interrupts are pending,
    cannot send ``None``, and fails on a dict whose first non-id key is not a string; those
    answers go by id, which LangGraph always reads as meant.
    """
    if len(pending) == 1 and set(by_id) == {pending[0].id}:
        only = by_id[pending[0].id]
        if _read_as_one_value(only):
            return only
    return dict(by_id)


def _read_as_one_value(value: Any) -> bool:
    """Whether LangGraph reads ``Command(resume=value)`` as one answer (``Pregel``'s loop
    checks ``all(is_xxh3_128_hexdigest(k) for k in value)`` for a dict, in key order)."""
    if value is None:
        return False
    if not isinstance(value, dict):
        return True
    for key in value:
        if not isinstance(key, str):
            return False  # LangGraph's check raises on it
        if not _INTERRUPT_ID.fullmatch(key):
            return True
    return False  # every key looks like an id: read as a map


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


def read_state(graph: Graph, config: RunnableConfig) -> Effect[StateSnapshot]:
    """The thread's state with its subgraphs (where pending interrupts are read)."""
    return Effect(
        lambda: graph.get_state(config, subgraphs=True),
        lambda: graph.aget_state(config, subgraphs=True),
    )


def update_state(
    graph: Graph, config: RunnableConfig, values: dict[str, Any], as_node: str | None
) -> Effect[Any]:
    """An ``update_state`` edit of the thread (an ``update`` turn)."""
    return Effect(
        lambda: graph.update_state(config, values, as_node=as_node),
        lambda: graph.aupdate_state(config, values, as_node=as_node),
    )


def call_user(fn: Callable[[Any], Any], arg: Any, what: str) -> Effect[Any]:
    """Call a user callable (a ``resume_fn``, a reviewer); an async one is awaited only
    when the core is driven async, and refused with a typed error when driven sync."""

    def run() -> Any:
        result = fn(arg)
        if inspect.isawaitable(result):
            if inspect.iscoroutine(result):
                result.close()
            raise InvalidOptionError(f"{what} is async; play the case with aplay_case.")
        return result

    async def arun() -> Any:
        awaited = getattr(
            fn, "acall", None
        )  # a reviewer with an awaitable twin (SimulatedReviewer)
        result = awaited(arg) if callable(awaited) else fn(arg)
        return (await result) if inspect.isawaitable(result) else result

    return Effect(run, arun)
