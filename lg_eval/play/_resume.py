"""Where a case left its thread: the turns a killed run finished, read from its checkpoints.

The player tags every checkpoint a turn writes with that turn's index and carries, in the
same checkpoint metadata, what the turn sent, its kind and who wrote it (the script, a
simulated user or reviewer, with what the writing cost) and the records of the turns before it that
no earlier checkpoint is sure to hold (:func:`turn_config`, :func:`unsaved`; LangGraph
copies a run config's plain ``metadata`` values into every checkpoint it writes,
``update_state`` included). A resumed run reads the thread's latest
checkpoint, tagged with turn ``j``, and its pending writes (:func:`progress`):

- the graph finished (no task planned), stopped for a human (``__interrupt__`` writes), or
  the checkpoint is an ``update_state`` edit: turn ``j`` is finished; the script goes on at
  turn ``j + 1``. ``invoke`` returns only once every checkpoint and write of its run is
  saved, so a turn the player saw end is always found finished;
- tasks are planned (finished or not) and no interrupt is pending: the kill cut turn
  ``j`` short. The player sends turn ``j`` again, what it sent the first time, addressed
  at the last checkpoint before the turn (``Progress.fork``: the thread as turn ``j``
  found it); a turn a simulated speaker wrote is sent as it was written, its model not
  asked again. LangGraph runs it on a new branch from there; the cut run's checkpoints stay
  on the abandoned branch, which no trajectory follows, so the trajectory equals an
  undisturbed run's. (``invoke(None)`` from the cut checkpoint would re-run less, but
  LangGraph marks that continuation in ``versions_seen["__interrupt__"]``, and the turn
  would then read as a run that stopped before a task and was continued.);
- anything this cannot tell apart from another turn's work is played again from the start
  on a cleared thread: a ``__resume__`` write (a resume turn answered on this checkpoint
  without writing one of its own: cut before its first superstep was saved, or finished by
  its node asking again), an ``__error__`` write (a ``continue`` that fails again writes no
  checkpoint either), a cut first turn (there is no state before it to go back to), a graph
  with static breakpoints (a stop at one looks like a cut run), or a thread no tag names.

So a resumed case re-executes at most the model and tool calls of the one turn the kill
cut; in the cases of the last item, the calls of all its turns played before the kill.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple
from langgraph.types import StateSnapshot
from pydantic_core import to_jsonable_python

from lg_eval._effects import Core, Effect
from lg_eval.errors import InvalidOptionError
from lg_eval.play._models import Graph, PlayedTurn

TURN_KEY = "lg_eval_turn"
"""Checkpoint metadata: the index of the turn that wrote the checkpoint."""
RECORDS_KEY = "lg_eval_turns"
"""Checkpoint metadata: JSON of :class:`PlayedTurn` records of turns before it (:func:`unsaved`)."""
SENT_KEY = "lg_eval_sent"
"""Checkpoint metadata: JSON of what the turn sent."""
MOVE_KEY = "lg_eval_move"
"""Checkpoint metadata: JSON of the turn's kind, who wrote it and what writing it cost."""

_RESUME, _ERROR, _INTERRUPT = "__resume__", "__error__", "__interrupt__"
_MOVE_FIELDS = {"kind", "by", "usage"}


def turn_config(
    config: RunnableConfig, turn: PlayedTurn, played: Sequence[PlayedTurn]
) -> RunnableConfig:
    """``config`` for ``turn`` (its record before it runs: index, kind, what it sends, who
    wrote it): its metadata names the turn, what it sends and the records of the turns
    ``played`` before it that no checkpoint is sure to hold yet (:func:`unsaved`), so the
    checkpoints of a thread say where its case stood."""
    records = [to_jsonable_python(done.model_dump(), fallback=repr) for done in unsaved(played)]
    move = turn.model_dump(mode="json", include=_MOVE_FIELDS)
    metadata = {
        **(config.get("metadata") or {}),
        TURN_KEY: turn.index,
        RECORDS_KEY: json.dumps(records, ensure_ascii=False),
        SENT_KEY: json.dumps(to_jsonable_python(turn.sent, fallback=repr), ensure_ascii=False),
        MOVE_KEY: json.dumps(move, ensure_ascii=False),
    }
    return cast(RunnableConfig, {**config, "metadata": metadata})


def unsaved(played: Sequence[PlayedTurn]) -> Sequence[PlayedTurn]:
    """The records, among ``played``, that the next turn's checkpoints must carry: from the
    last turn sure to have written a checkpoint (an input or a state edit that did not
    raise, whose checkpoints carried the records before it) on. A resume or a continue may
    write none (a node that asks again stays on its checkpoint), so their records wait for
    a later turn's. Constant per turn for most scripts, so the metadata grows linearly."""
    for position in range(len(played) - 1, -1, -1):
        turn = played[position]
        if turn.error is None and turn.kind in ("input", "update"):
            return played[position:]
    return played


def at_checkpoint(config: RunnableConfig, checkpoint: RunnableConfig) -> RunnableConfig:
    """``config`` addressed at the checkpoint ``checkpoint`` names (a turn played again)."""
    configurable = {**(config.get("configurable") or {})}
    configurable.update(checkpoint.get("configurable") or {})
    return cast(RunnableConfig, {**config, "configurable": configurable})


@dataclass(frozen=True)
class Progress:
    """A thread a killed run left: the turns it finished and where the script goes on."""

    done: list[PlayedTurn]
    """Records of the finished turns, in order."""
    next_index: int
    """The turn to play next."""
    fork: RunnableConfig | None = None
    """Turn ``next_index`` was cut short: the checkpoint to send it again at."""
    cut: PlayedTurn | None = None
    """The turn cut short, as it was sent (index, kind, sent, who wrote it)."""


def progress(
    graph: Graph,
    snapshot: StateSnapshot,
    observe: Callable[[StateSnapshot, PlayedTurn], PlayedTurn],
    *,
    turns: int | None,
) -> Core[Progress | None]:
    """Where the case stands on a thread that has checkpoints (``snapshot``, its latest
    state read with ``subgraphs=True``); None when it must be played again from the start.

    ``turns`` is how many turns the case plays (None: its simulated speakers decide);
    ``observe`` turns the snapshot and the turn as it was sent (index, kind, sent, writer)
    into the record of the turn that ended there."""
    metadata: Mapping[str, Any] = snapshot.metadata or {}
    index = metadata.get(TURN_KEY)
    if not isinstance(index, int) or index < 0 or _breakpoints(graph):
        return None
    if turns is not None and index >= turns:
        return None
    saver = _saver(graph)
    latest = yield _get_tuple(saver, snapshot.config)
    if latest is None:
        return None
    channels = {write[1] for write in latest.pending_writes or []}
    if _RESUME in channels or _ERROR in channels:
        return None
    try:
        move = json.loads(metadata[MOVE_KEY])
        played = PlayedTurn.model_validate(
            {**move, "index": index, "sent": json.loads(metadata[SENT_KEY])}
        )
    except (KeyError, TypeError, ValueError):  # pydantic's ValidationError is a ValueError
        return None
    done = yield from _records(saver, latest, index)
    if done is None:
        return None
    # Not ``snapshot.next``: it leaves out tasks whose writes are saved, and a kill after a
    # superstep's writes but before the next checkpoint leaves every planned task so.
    finished = not snapshot.tasks or _INTERRUPT in channels or metadata.get("source") == "update"
    if not finished:
        fork = yield from _turn_start(saver, latest, index)
        return None if fork is None else Progress(done, index, fork=fork, cut=played)
    return Progress([*done, observe(snapshot, played)], index + 1)


def _records(
    saver: BaseCheckpointSaver[Any], latest: CheckpointTuple, index: int
) -> Core[list[PlayedTurn] | None]:
    """The records of turns ``0 .. index - 1``, gathered from the checkpoints on
    ``latest``'s lineage (walking parents until every one is found); None when one is
    missing or unreadable."""
    found: dict[int, PlayedTurn] = {}
    current: CheckpointTuple | None = latest
    while current is not None and len(found) < index:
        metadata: Mapping[str, Any] = current.metadata
        try:
            for record in json.loads(metadata.get(RECORDS_KEY) or "[]"):
                turn = PlayedTurn.model_validate(record)
                found.setdefault(turn.index, turn)
        except (TypeError, ValueError):
            return None
        parent = current.parent_config
        current = None if parent is None else (yield _get_tuple(saver, parent))
    if sorted(found) != list(range(index)):
        return None
    return [found[i] for i in range(index)]


def _turn_start(
    saver: BaseCheckpointSaver[Any], latest: CheckpointTuple, index: int
) -> Core[RunnableConfig | None]:
    """The config of the last checkpoint before turn ``index`` on ``latest``'s lineage
    (walking parents while they are tagged ``index``); None when the turn has none."""
    current: CheckpointTuple | None = latest
    while current is not None and current.metadata.get(TURN_KEY) == index:
        parent = current.parent_config
        current = None if parent is None else (yield _get_tuple(saver, parent))
    return None if current is None else current.config


def clear(graph: Graph, thread_id: str) -> Effect[None]:
    """Delete ``thread_id``'s checkpoints, to play its case again from the start."""
    saver = _saver(graph)
    return Effect(lambda: saver.delete_thread(thread_id), lambda: saver.adelete_thread(thread_id))


def _get_tuple(
    saver: BaseCheckpointSaver[Any], config: RunnableConfig
) -> Effect[CheckpointTuple | None]:
    return Effect(lambda: saver.get_tuple(config), lambda: saver.aget_tuple(config))


def _saver(graph: Graph) -> BaseCheckpointSaver[Any]:
    saver = graph.checkpointer
    if not isinstance(saver, BaseCheckpointSaver):
        raise InvalidOptionError(
            "resume=True needs the graph compiled with a checkpointer (a saver object)."
        )
    return saver


def _breakpoints(graph: Graph) -> bool:
    return bool(graph.interrupt_before_nodes or graph.interrupt_after_nodes)
