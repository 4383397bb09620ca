"""Extract many threads, reading the storage rows of a whole batch of them at once.

:func:`extract_threads` (and its async twin :func:`aextract_threads`) yields one
:class:`~lg_eval.ThreadTrajectory` per config, in input order, exactly what
:func:`~lg_eval.extract_thread` returns for that config. Configs are taken
``batch_size`` at a time and only one batch is held in memory, so an iterator of
100,000 configs streams.

Where the fast reader has a batch read for the saver, a batch costs one query for
the rows of all its threads (Postgres: one round trip, plus one more only if some
thread stopped mid-thread, an interrupt, an error, a breakpoint, and needs those
checkpoints read whole; a short thread is otherwise a query of its own, whose
round trip to the server costs as much as reading it; a SQLite file: two
statements for the batch instead of two per thread). Each thread is then built
from its own rows through the very core :func:`~lg_eval.extract_thread` runs (same
records, same assembler, same fallback to the generic reader), so the trajectories
are the same; a thread the batch read did not bring is read alone. Other savers
(InMemorySaver, an in-memory SQLite database, any other) are read one thread at a
time.

A thread that cannot be extracted raises, at its place in the stream, the error
``extract_thread`` raises for it (with a note naming the thread), after the threads
before it were yielded. With ``return_exceptions=True`` the error is yielded in its
place instead and the stream goes on (as ``asyncio.gather`` does).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping, Sequence
from itertools import islice
from types import ModuleType
from typing import Any, Literal, overload

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver

from lg_eval._effects import Core, adrive, drive
from lg_eval._heap import paused_gc
from lg_eval._trajectory import ThreadTrajectory
from lg_eval.errors import InvalidConfigError, InvalidOptionError
from lg_eval.extract._records import ThreadRecords
from lg_eval.extract._thread import (
    Reader,
    check_reader,
    checkpointer_of,
    extraction,
    sync_only,
    thread_of,
)
from lg_eval.extract.fast import FastPathUnavailable, storage_for
from lg_eval.extract.fast import _versions as fast_versions
from lg_eval.extract.fast._reader import Prepared, prepare, records_of
from lg_eval.extract.fast._rows import ThreadRows

DEFAULT_BATCH_SIZE = 50
"""Threads per batch: enough that the round trip is a small share of a short thread's
cost, few enough that a batch of long threads stays small in memory."""

Result = ThreadTrajectory | Exception
Read = Callable[[], Core[ThreadRecords]]


@overload
def extract_threads(
    graph: Any,
    configs: Iterable[RunnableConfig],
    *,
    batch_size: int = ...,
    reader: Reader = ...,
    return_exceptions: Literal[False] = ...,
) -> Iterator[ThreadTrajectory]: ...
@overload
def extract_threads(
    graph: Any,
    configs: Iterable[RunnableConfig],
    *,
    batch_size: int = ...,
    reader: Reader = ...,
    return_exceptions: bool,
) -> Iterator[ThreadTrajectory | Exception]: ...
def extract_threads(
    graph: Any,
    configs: Iterable[RunnableConfig],
    *,
    batch_size: int = DEFAULT_BATCH_SIZE,
    reader: Reader = "auto",
    return_exceptions: bool = False,
) -> Iterator[ThreadTrajectory | Exception]:
    """The trajectory of each config's thread, in order, read ``batch_size`` threads at a time.

    Each item equals ``extract_thread(graph, config, reader=reader)`` (a config's
    ``checkpoint_id`` is honoured the same way). The arguments are checked at once; the
    configs are consumed lazily, one batch at a time. A thread that fails raises its
    error there (or, with ``return_exceptions=True``, is yielded as that exception). The
    garbage collector is paused while a batch is read, never while the caller holds a
    yielded trajectory.
    """
    saver = _checked(graph, configs, batch_size, reader)

    def stream() -> Iterator[Result]:
        done = 0
        for batch in _batches(configs, batch_size):
            results = _drive_paused(graph, saver, batch, reader)
            yield from _delivered(done, batch, results, return_exceptions)
            done += len(batch)

    return stream()


@overload
def aextract_threads(
    graph: Any,
    configs: Iterable[RunnableConfig],
    *,
    batch_size: int = ...,
    reader: Reader = ...,
    return_exceptions: Literal[False] = ...,
) -> AsyncIterator[ThreadTrajectory]: ...
@overload
def aextract_threads(
    graph: Any,
    configs: Iterable[RunnableConfig],
    *,
    batch_size: int = ...,
    reader: Reader = ...,
    return_exceptions: bool,
) -> AsyncIterator[ThreadTrajectory | Exception]: ...
def aextract_threads(
    graph: Any,
    configs: Iterable[RunnableConfig],
    *,
    batch_size: int = DEFAULT_BATCH_SIZE,
    reader: Reader = "auto",
    return_exceptions: bool = False,
) -> AsyncIterator[ThreadTrajectory | Exception]:
    """Async twin of :func:`extract_threads` (``async for trajectory in ...``).

    With an async checkpointer the reads are awaited; with a synchronous one each batch
    is read in a worker thread, off the event loop.
    """
    saver = _checked(graph, configs, batch_size, reader)

    async def stream() -> AsyncIterator[Result]:
        done = 0
        for batch in _batches(configs, batch_size):
            if sync_only(saver):
                results = await asyncio.to_thread(_drive_paused, graph, saver, batch, reader)
            else:
                results = await adrive(batch_extraction(graph, saver, batch, reader))
            for item in _delivered(done, batch, results, return_exceptions):
                yield item
            done += len(batch)

    return stream()


def _drive_paused(
    graph: Any, saver: BaseCheckpointSaver[Any], batch: list[RunnableConfig], reader: Reader
) -> list[Result]:
    with paused_gc():
        return drive(batch_extraction(graph, saver, batch, reader))


def _checked(
    graph: Any, configs: Iterable[RunnableConfig], batch_size: int, reader: Reader
) -> BaseCheckpointSaver[Any]:
    """The graph's checkpointer, once the arguments shared by every thread are checked."""
    check_reader(reader)
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise InvalidOptionError(
            f"batch_size must be a whole number of threads, at least 1; got {batch_size!r}."
        )
    if isinstance(configs, Mapping | str | bytes) or not isinstance(configs, Iterable):
        raise InvalidOptionError(
            f"configs must be an iterable of run configs, not {type(configs).__name__}; e.g. "
            '[{"configurable": {"thread_id": "a"}}, {"configurable": {"thread_id": "b"}}] '
            "(for one thread, use extract_thread)."
        )
    return checkpointer_of(graph)


def _batches(configs: Iterable[RunnableConfig], size: int) -> Iterator[list[RunnableConfig]]:
    iterator = iter(configs)
    while batch := list(islice(iterator, size)):
        yield batch


def _delivered(
    done: int, batch: Sequence[RunnableConfig], results: Sequence[Result], return_exceptions: bool
) -> Iterator[Result]:
    """The results of a batch (after ``done`` configs) in order; an error is raised in its
    place unless ``return_exceptions``."""
    for position, (config, result) in enumerate(zip(batch, results, strict=True)):
        if isinstance(result, Exception) and not return_exceptions:
            configurable = (config.get("configurable") or {}) if isinstance(config, dict) else {}
            result.add_note(
                f"while extracting thread {configurable.get('thread_id')!r}, "
                f"config {done + position + 1} in the order given"
            )
            raise result
        yield result


def batch_extraction(
    graph: Any, saver: BaseCheckpointSaver[Any], configs: Sequence[RunnableConfig], reader: Reader
) -> Core[list[Result]]:
    """The one core behind both entry points: each config's trajectory or error, in order."""
    storage = _batch_storage(saver, reader)
    reads: list[Read | None] = [None] * len(configs)
    if storage is not None:
        reads = yield from _batch_reads(graph, saver, storage, configs)
    results: list[Result] = []
    for config, read in zip(configs, reads, strict=True):
        try:  # a thread read alone (read is None) is read exactly as extract_thread reads it
            results.append((yield from extraction(graph, config, reader, fast=read)))
        except Exception as exc:  # this thread's error, not the batch's
            results.append(exc)
    return results


def _batch_storage(saver: BaseCheckpointSaver[Any], reader: Reader) -> ModuleType | None:
    """The fast storage module, if it reads batches and the fast reader would be tried."""
    if reader == "generic" or fast_versions.mismatch() is not None:
        return None  # the extraction core warns about an untested version, once
    try:
        storage = storage_for(saver)
    except FastPathUnavailable:
        return None
    return storage if hasattr(storage, "batch_rows") else None


def _batch_reads(
    graph: Any,
    saver: BaseCheckpointSaver[Any],
    storage: ModuleType,
    configs: Sequence[RunnableConfig],
) -> Core[list[Read | None]]:
    """For each config, the fast read of its thread from rows read for the whole batch, or
    ``None`` where the thread is read alone (a config that is not valid, which the core
    reports; a thread listed twice; any failure of the batch reads)."""
    wanted: list[tuple[str, str | None] | None] = []
    seen: set[str] = set()
    for config in configs:
        try:
            thread_id, checkpoint_id = thread_of(config)
        except InvalidConfigError:
            wanted.append(None)
            continue
        wanted.append(None if thread_id in seen else (thread_id, checkpoint_id))
        seen.add(thread_id)
    if not seen:
        return [None] * len(configs)
    try:
        found: dict[str, ThreadRows] = yield from storage.batch_rows(saver, list(seen))
    except Exception:  # e.g. a table shaped otherwise: each thread then reads (or fails) alone
        return [None] * len(configs)
    prepared: list[Prepared | Exception | None] = []
    for item in wanted:
        if item is None:
            prepared.append(None)
            continue
        rows = found.get(item[0])
        if rows is None:  # no rows read for it: read alone (which says if it is not found)
            prepared.append(None)
            continue
        try:
            prepared.append(prepare(graph, saver, storage, *item, rows))
        except Exception as exc:  # raised by this thread's read, as read_fast would raise it
            prepared.append(exc)
    yield from _supply_missing([p for p in prepared if isinstance(p, Prepared)], saver, storage)
    return [None if p is None else _read(p) for p in prepared]


def _supply_missing(
    prepared: list[Prepared], saver: BaseCheckpointSaver[Any], storage: ModuleType
) -> Core[None]:
    """Read, in one round trip, the checkpoints every prepared thread still needs whole,
    where the storage has such a read (Postgres; a SQLite read has no round trip to share).
    Whatever that does not bring stays missing, and the thread reads it alone."""
    missing = {p.thread.thread_id: p.missing for p in prepared if p.missing}
    batch_stored = getattr(storage, "batch_stored", None)
    if not missing or batch_stored is None:
        return
    try:
        found = yield from batch_stored(saver, missing)
    except Exception:
        return
    for p in prepared:
        p.supply(found.get(p.thread.thread_id, {}))


def _read(prepared: Prepared | Exception) -> Read:
    def read() -> Core[ThreadRecords]:
        if isinstance(prepared, Exception):
            raise prepared
        return (yield from records_of(prepared))

    return read
