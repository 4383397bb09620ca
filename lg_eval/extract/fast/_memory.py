"""Fast rows from ``InMemorySaver``: its ``storage`` and ``writes`` dicts.

``storage[thread][ns][checkpoint id]`` holds ``(checkpoint without channel
values, metadata, parent id)``, both serialized; channel values live apart in
``blobs``, keyed by ``(thread, ns, channel, version)``, and are only handed on,
still serialized, for the checkpoints where a run stopped (:func:`stored`).
``writes[(thread, ns, checkpoint id)]`` maps ``(task id, idx)`` to
``(task id, channel, serialized value, task path)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lg_eval._effects import Core, Effect
from lg_eval.extract._records import INTERRUPT
from lg_eval.extract.fast import _msgpack_lite as msgpack_lite
from lg_eval.extract.fast._rows import (
    CheckpointRow,
    FastPathUnavailable,
    ThreadRows,
    WriteRow,
    require,
    value_needed,
)
from lg_eval.extract.fast._stored import StoredCheckpoint


def rows(saver: Any, thread_id: str) -> Core[ThreadRows]:
    """Every checkpoint and write row of a thread (the dicts are in memory: no real I/O)."""

    async def arun() -> ThreadRows:
        return read(saver, thread_id)

    found: ThreadRows = yield Effect(lambda: read(saver, thread_id), arun)
    return found


def read(saver: Any, thread_id: str) -> ThreadRows:
    checkpoints: list[CheckpointRow] = []
    writes: list[WriteRow] = []
    for ns, stored in saver.storage.get(thread_id, {}).items():
        for checkpoint_id, entry in sorted(stored.items(), reverse=True):
            require(isinstance(entry, tuple) and len(entry) == 3, "unexpected storage entry")
            checkpoint_b, metadata_b, parent_id = entry
            checkpoint = _small(saver, checkpoint_b)
            checkpoints.append(
                CheckpointRow(
                    ns=ns,
                    id=checkpoint_id,
                    parent_id=parent_id,
                    version=checkpoint.get("v", 0),
                    ts=checkpoint.get("ts"),
                    interrupt_seen=checkpoint.get("versions_seen", {}).get(INTERRUPT),
                    metadata=_small(saver, metadata_b),
                    records_updates=bool(checkpoint.get("updated_channels")),
                )
            )
            for (task_id, idx), entry_w in saver.writes.get(
                (thread_id, ns, checkpoint_id), {}
            ).items():
                _, channel, raw, task_path = entry_w
                needed = value_needed(task_id, channel, task_path)
                writes.append(
                    WriteRow(
                        ns, checkpoint_id, task_id, task_path, idx, channel, raw if needed else None
                    )
                )
    return ThreadRows(checkpoints, writes)


def stored(
    saver: Any, thread_id: str, keys: Sequence[tuple[str, str]]
) -> Core[dict[tuple[str, str], StoredCheckpoint]]:
    """The checkpoints ``keys`` (``(ns, id)``) with their channel values still serialized."""

    def read() -> dict[tuple[str, str], StoredCheckpoint]:
        found = {}
        for ns, checkpoint_id in keys:
            checkpoint = _small(saver, saver.storage[thread_id][ns][checkpoint_id][0])
            raw = {}
            for channel, version in checkpoint.get("channel_versions", {}).items():
                blob = saver.blobs.get((thread_id, ns, channel, version))
                if blob is not None and blob[0] != "empty":
                    raw[channel] = blob
            found[(ns, checkpoint_id)] = StoredCheckpoint(checkpoint=checkpoint, raw=raw)
        return found

    async def aread() -> dict[tuple[str, str], StoredCheckpoint]:
        return read()

    found: dict[tuple[str, str], StoredCheckpoint] = yield Effect(read, aread)
    return found


def _small(saver: Any, typed: tuple[str, bytes]) -> dict[str, Any]:
    """A stored checkpoint (without channel values) or metadata dict."""
    kind, data = typed
    if kind == "msgpack":
        try:
            value = msgpack_lite.loads(data)
        except msgpack_lite.Unsupported:
            value = saver.serde.loads_typed(typed)  # e.g. a datetime in run metadata
    else:
        value = saver.serde.loads_typed(typed)
    if not isinstance(value, dict):
        raise FastPathUnavailable("stored checkpoint is not a dict")
    return value
