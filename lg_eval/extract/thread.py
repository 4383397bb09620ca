"""Extract a checkpointed LangGraph thread into a :class:`ThreadTrajectory`.

``extract_thread`` and ``aextract_thread`` are two thin entry points over one
core (:func:`extraction`): the core validates the request, asks a reader for
the thread's checkpoint records, and assembles the turns.
"""

from __future__ import annotations

import warnings
from typing import Any, Literal

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver

from lg_eval._effects import Core, adrive, drive
from lg_eval.errors import InvalidConfigError, InvalidOptionError, MissingCheckpointerError
from lg_eval.extract.assemble import assemble
from lg_eval.extract.generic import read_generic
from lg_eval.trajectory import ThreadTrajectory

Reader = Literal["auto", "generic"]
READERS: tuple[str, ...] = ("auto", "generic")


class ExtractionWarning(UserWarning):
    """The trajectory could be extracted, but something about the thread limits it."""


def checkpointer_of(graph: Any) -> BaseCheckpointSaver:
    """The graph's checkpointer, or a clear error when it has none."""
    saver = getattr(graph, "checkpointer", None)
    if not isinstance(saver, BaseCheckpointSaver):
        raise MissingCheckpointerError(
            "The graph has no checkpointer, so it keeps no thread history to extract. Compile "
            "it with one, e.g. builder.compile(checkpointer=InMemorySaver()) or a SqliteSaver "
            "/ PostgresSaver, run it with a thread_id, then extract."
        )
    return saver


def thread_of(config: RunnableConfig | None) -> tuple[str, str | None]:
    """``(thread_id, checkpoint_id or None)`` from a run config."""
    configurable = (config or {}).get("configurable") or {}
    thread_id = configurable.get("thread_id")
    if thread_id is None or thread_id == "":
        raise InvalidConfigError(
            "The config has no thread_id. Pass the config the thread was run with, e.g. "
            '{"configurable": {"thread_id": "my-thread"}}.'
        )
    return str(thread_id), configurable.get("checkpoint_id")


def extraction(
    graph: Any, config: RunnableConfig, reader: Reader = "auto"
) -> Core[ThreadTrajectory]:
    """The one extraction core behind the sync and async entry points."""
    if reader not in READERS:
        raise InvalidOptionError(
            f"reader={reader!r} is not allowed; use one of {', '.join(READERS)}."
        )
    saver = checkpointer_of(graph)
    thread_id, checkpoint_id = thread_of(config)
    records = yield from read_generic(graph, saver, thread_id, checkpoint_id)
    trajectory = assemble(records)
    for message in trajectory.warnings:
        warnings.warn(message, ExtractionWarning, stacklevel=4)
    return trajectory


def extract_thread(
    graph: Any, config: RunnableConfig, *, reader: Reader = "auto"
) -> ThreadTrajectory:
    """Extract the thread named by ``config`` from ``graph``'s checkpointer.

    Follows the lineage of the newest checkpoint (or of ``checkpoint_id`` when
    the config names one), so abandoned fork branches never appear.
    """
    return drive(extraction(graph, config, reader))


async def aextract_thread(
    graph: Any, config: RunnableConfig, *, reader: Reader = "auto"
) -> ThreadTrajectory:
    """Async twin of :func:`extract_thread` (use it with async checkpointers)."""
    return await adrive(extraction(graph, config, reader))
