"""Extract a checkpointed LangGraph thread into a :class:`ThreadTrajectory`.

``extract_thread`` and ``aextract_thread`` are two thin entry points over one
core (:func:`extraction`): the core validates the request, asks a reader for
the thread's checkpoint records, and assembles the turns.

Readers: ``"fast"`` reads the storage rows of the savers lg_eval knows
(InMemorySaver, SqliteSaver, PostgresSaver and their async twins) without
decoding states it does not need; ``"generic"`` goes through LangGraph's public
API and works with any ``BaseCheckpointSaver``; ``"auto"`` (the default) uses
the fast reader when it can read the thread exactly and the generic one
otherwise (another saver, an untested LangGraph version, a task it cannot name).
"""

from __future__ import annotations

import asyncio
import sys
import warnings
from collections.abc import Callable, Mapping
from typing import Any, Literal, get_args

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver

from lg_eval._effects import Core, adrive, drive
from lg_eval._heap import paused_gc
from lg_eval._trajectory import ThreadTrajectory
from lg_eval.errors import (
    ExtractionError,
    InvalidConfigError,
    InvalidOptionError,
    MissingCheckpointerError,
)
from lg_eval.extract._assemble import assemble
from lg_eval.extract._generic import read_generic
from lg_eval.extract._records import ThreadRecords
from lg_eval.extract.fast import FastPathUnavailable, UntestedVersion, read_fast, storage_for
from lg_eval.extract.fast import _versions as fast_versions

Reader = Literal["auto", "fast", "generic"]
READERS: tuple[Reader, ...] = get_args(Reader)
_warned_versions: set[str] = set()
FAST_READER_FALLBACK = "lg_eval's fast checkpoint reader is off for this LangGraph version"
"""How the fallback warning begins (the CI job that tries the newest LangGraph greps it)."""


class ExtractionWarning(UserWarning):
    """The trajectory could be extracted, but something about the thread limits it."""


def checkpointer_of(graph: Any) -> BaseCheckpointSaver[Any]:
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
    if config is not None and not isinstance(config, Mapping):
        raise InvalidConfigError(
            f"The config must be a dict, not {type(config).__name__} {config!r}. Pass the "
            'config the thread was run with, e.g. {"configurable": {"thread_id": "my-thread"}}.'
        )
    configurable = (config or {}).get("configurable") or {}
    if not isinstance(configurable, Mapping):
        raise InvalidConfigError(
            f'config["configurable"] must be a dict, not {type(configurable).__name__}; e.g. '
            '{"configurable": {"thread_id": "my-thread"}}.'
        )
    thread_id = configurable.get("thread_id")
    if thread_id is None or thread_id == "":
        raise InvalidConfigError(
            "The config has no thread_id. Pass the config the thread was run with, e.g. "
            '{"configurable": {"thread_id": "my-thread"}}.'
        )
    return str(thread_id), configurable.get("checkpoint_id")


def check_reader(reader: Any) -> None:
    """``reader=`` is one of :data:`READERS`, else an InvalidOptionError naming them."""
    if reader not in READERS:
        raise InvalidOptionError(
            f"reader={reader!r} is not allowed; use one of {', '.join(READERS)}."
        )


def extraction(
    graph: Any,
    config: RunnableConfig,
    reader: Reader = "auto",
    fast: Callable[[], Core[ThreadRecords]] | None = None,
    *,
    warn: bool = True,
) -> Core[ThreadTrajectory]:
    """The one extraction core behind the sync and async entry points (and, per thread, the
    batch extraction's, whose ``fast`` reads the thread from rows read for the whole batch).
    ``warn=False`` leaves the trajectory's ``warnings`` to the caller (an experiment, which
    knows what it played) instead of raising them as :class:`ExtractionWarning`."""
    check_reader(reader)
    saver = checkpointer_of(graph)
    thread_id, checkpoint_id = thread_of(config)
    trajectory = None
    if reader != "generic" and _fast_supported(saver, reader):
        try:
            read = read_fast(graph, saver, thread_id, checkpoint_id) if fast is None else fast()
            trajectory = _assemble((yield from read))
        except FastPathUnavailable as exc:
            if reader == "fast":
                raise _fast_refused(str(exc)) from exc
            if isinstance(exc, UntestedVersion):  # e.g. a checkpoint format it does not read
                _warn_untested(exc, stacklevel=5)
    if trajectory is None:
        trajectory = _assemble((yield from read_generic(graph, saver, thread_id, checkpoint_id)))
    for message in trajectory.warnings if warn else ():
        warnings.warn(message, ExtractionWarning, stacklevel=4)
    return trajectory


def _assemble(records: ThreadRecords) -> ThreadTrajectory:
    """:func:`assemble` (pure, synchronous) with the garbage collector paused: it allocates a
    model per task run and no cycles."""
    with paused_gc():
        return assemble(records)


def _fast_supported(saver: BaseCheckpointSaver[Any], reader: Reader) -> bool:
    """Whether to try the fast reader (``reader="fast"`` raises where ``auto`` would not)."""
    try:
        problem = fast_versions.mismatch()
        if problem is not None:
            raise UntestedVersion(problem)
        storage_for(saver)
    except FastPathUnavailable as exc:
        if reader == "fast":
            raise _fast_refused(str(exc)) from exc
        if isinstance(exc, UntestedVersion):
            _warn_untested(exc, stacklevel=6)
        return False
    return True


def _warn_untested(exc: UntestedVersion, stacklevel: int) -> None:
    """Say (once per process and reason, not once per thread) that ``reader="auto"`` left
    the fast reader because LangGraph is not a version it was tested with. Trajectories stay
    exact (the generic reader reads them), only slower; CI's latest-LangGraph job looks for
    this message (``.ci/latest-langgraph.sh``)."""
    reason = str(exc)
    if reason in _warned_versions:
        return
    _warned_versions.add(reason)
    warnings.warn(
        f"{FAST_READER_FALLBACK}: {reason}. Threads are read with the generic reader instead "
        "(the same trajectories, slower). Install a tested version for the fast path, or "
        "pass reader='generic' to silence this.",
        ExtractionWarning,
        stacklevel=stacklevel,
    )


def _fast_refused(reason: str) -> ExtractionError:
    return ExtractionError(
        f"reader='fast' cannot read this thread: {reason}. Use reader='auto' (falls back to the "
        "generic reader) or reader='generic'."
    )


def extract_thread(
    graph: Any, config: RunnableConfig, *, reader: Reader = "auto"
) -> ThreadTrajectory:
    """Extract the thread named by ``config`` from ``graph``'s checkpointer.

    Follows the lineage of the newest checkpoint (or of ``checkpoint_id`` when
    the config names one), so abandoned fork branches never appear.

    The cyclic garbage collector is paused while it runs: extraction allocates
    many short-lived objects and no cycles of its own, and in a process with a
    large heap (a service, an evaluation run keeping its results) each
    collection they trigger would rescan that heap. The async twin pauses it
    only around its pure parts, never across an ``await``.
    """
    with paused_gc():
        return drive(extraction(graph, config, reader))


async def aextract_thread(
    graph: Any, config: RunnableConfig, *, reader: Reader = "auto"
) -> ThreadTrajectory:
    """Async twin of :func:`extract_thread`.

    With an async checkpointer the reads are awaited; with a synchronous one
    (``SqliteSaver``, ``PostgresSaver``: their async methods raise) the whole
    extraction runs in a worker thread, off the event loop, and gives the same
    trajectory as :func:`extract_thread`.
    """
    saver = getattr(graph, "checkpointer", None)
    if isinstance(saver, BaseCheckpointSaver) and sync_only(saver):
        return await asyncio.to_thread(extract_thread, graph, config, reader=reader)
    return await adrive(extraction(graph, config, reader))


_SYNC_ONLY = (
    ("langgraph.checkpoint.sqlite", "SqliteSaver"),
    ("langgraph.checkpoint.postgres", "PostgresSaver"),
)


def sync_only(saver: BaseCheckpointSaver[Any]) -> bool:
    """Whether ``saver`` has no async API (its ``a*`` methods raise ``NotImplementedError``)."""
    if type(saver).aget_tuple is BaseCheckpointSaver.aget_tuple:
        return True
    for module, name in _SYNC_ONLY:
        found = sys.modules.get(module)
        cls = getattr(found, name, None) if found is not None else None
        if isinstance(cls, type) and isinstance(saver, cls):
            return True
    return False
