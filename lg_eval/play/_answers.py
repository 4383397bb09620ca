"""Where the human's side of a played thread comes from, and how an answer is sent.

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
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from langchain_core.runnables import RunnableConfig

from lg_eval._effects import Core
from lg_eval.datasets import TurnKind
from lg_eval.play._models import PendingInterrupt, PlayedCase, Speaker, SpeakerUsage
from lg_eval.play._thread import ThreadState
from lg_eval.play._types import Graph

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
