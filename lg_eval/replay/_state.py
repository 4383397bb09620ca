"""What a named replay has done already, kept in its own target checkpointer.

A replay named ``run`` forks production thread ``T`` onto target thread
``replay:<run>:<T>``. When that fork has finished, a *marker* is written: one empty
checkpoint on target thread ``replay-done:<run>:<T>`` (``put`` of LangGraph's
``empty_checkpoint()``, so every saver can hold it) whose metadata records the production
thread's newest checkpoint (``head``) at the time, the fork option, the graph and how the
replay ended.

The next replay of the same name reuses a fork whose marker matches (same head, fork and
graph; not an error): it is extracted and scored again, the new graph is not run. Any
other fork of that name (outdated, or left unfinished by a crash: no marker) is deleted
first (``delete_thread`` on the target) and made again. The marker is written after the
fork is complete, so a kill at any moment loses nothing and duplicates nothing.
"""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import empty_checkpoint

from lg_eval.errors import InvalidOptionError
from lg_eval.play import QuestionChange
from lg_eval.replay._result import ReplayedThread

_SOURCE = "lg_eval_replay"


def fork_thread(run: str, thread_id: str) -> str:
    """The target thread a replay named ``run`` forks ``thread_id`` onto."""
    return f"replay:{run}:{thread_id}"


def marker_thread(run: str, thread_id: str) -> str:
    """The target thread holding the marker of a finished fork."""
    return f"replay-done:{run}:{thread_id}"


_KEPT = (
    "status",
    "reason",
    "graph_calls",
    "reviewer_answers",
    "unused_answers",
    "questions_changed",
)
"""The fields of a :class:`~lg_eval.replay.ReplayedThread` a marker keeps."""


def finished(sink: Any, run: str, thread_id: str, key: dict[str, str]) -> dict[str, Any] | None:
    """How the fork of ``thread_id`` ended (the row fields in ``_KEPT``), when it finished
    with this ``key`` (head, fork, graph) and did not error; otherwise None (it is to be
    made again)."""
    tup = sink.get_tuple(_config(marker_thread(run, thread_id)))
    meta = dict(tup.metadata or {}) if tup is not None else {}
    if meta.get("source") != _SOURCE or any(meta.get(k) != v for k, v in key.items()):
        return None
    if meta.get("status") not in ("replayed", "stopped"):
        return None
    kept = {name: meta.get(name) for name in _KEPT}
    kept["questions_changed"] = [
        QuestionChange.model_validate(change) for change in kept["questions_changed"] or []
    ]
    return kept


def forget(sink: Any, run: str, thread_id: str) -> None:
    """Delete the fork of ``thread_id`` and its marker, if the target has them."""
    for name in (marker_thread(run, thread_id), fork_thread(run, thread_id)):
        if sink.get_tuple(_config(name)) is None:
            continue
        try:
            sink.delete_thread(name)
        except NotImplementedError:
            raise InvalidOptionError(
                f"target thread {name!r} exists already and a {type(sink).__name__} cannot "
                "delete threads: give another run name or an empty target."
            ) from None


def mark(sink: Any, run: str, thread_id: str, key: dict[str, str], row: ReplayedThread) -> None:
    """Record that the fork of ``thread_id`` is complete (last: after every fork write)."""
    kept = {name: getattr(row, name) for name in _KEPT}
    kept["questions_changed"] = [change.model_dump(mode="json") for change in row.questions_changed]
    metadata: dict[str, Any] = {"source": _SOURCE, "step": -1, **key, **kept}
    at: RunnableConfig = {
        "configurable": {"thread_id": marker_thread(run, thread_id), "checkpoint_ns": ""}
    }
    sink.put(at, empty_checkpoint(), metadata, {})


def _config(thread_id: str) -> RunnableConfig:
    return {"configurable": {"thread_id": thread_id}}
