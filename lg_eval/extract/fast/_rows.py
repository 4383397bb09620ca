"""What the fast readers take from storage: checkpoint and write rows, no channel values.

Every storage module turns its own layout into these two row types, and the
shared reader (:mod:`lg_eval.extract.fast._reader`) does the rest. A write row
carries its serialized value only when the trajectory needs it (see
:func:`value_needed`): control writes, the ``__start__`` task's input writes and
``update_state`` writes. Everything else (messages, ``Send`` packets carrying
the whole state, node outputs) stays undecoded, and is usually not even read.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar
from weakref import WeakKeyDictionary

import orjson
from langgraph.checkpoint.base import writes_sort_key

from lg_eval.extract._records import ERROR, INTERRUPT, NULL_TASK_ID, RESUME
from lg_eval.extract.fast._stored import StoredCheckpoint

T = TypeVar("T")

VALUE_CHANNELS = (INTERRUPT, RESUME, ERROR)
"""Control writes whose values a trajectory shows (payloads, answers, error text)."""
PULL_PREFIX = "~__pregel_pull, "
PUSH_PREFIX = "~__pregel_push, "
START_PATH = f"{PULL_PREFIX}__start__"
UPDATE_PREFIX = "~__interrupt__"
"""``task_path`` of writes that ``update_state`` stores (``task.path == (INTERRUPT, i)``)."""


class FastPathUnavailable(Exception):
    """The fast reader cannot read this thread exactly; the generic reader must."""


class UntestedVersion(FastPathUnavailable):
    """An installed LangGraph package is outside the versions the fast path was tested with."""


@dataclass(slots=True)  # not frozen: a frozen dataclass's __init__ costs twice as much
class CheckpointRow:
    """One stored checkpoint, without its channel values."""

    ns: str
    id: str
    parent_id: str | None
    version: int
    """The checkpoint format version (``checkpoint["v"]``)."""
    ts: str | None
    interrupt_seen: dict[str, Any] | None
    metadata: dict[str, Any]
    """Only ``source``, ``step`` and ``parents`` are needed."""
    records_updates: bool = False
    """The checkpoint stores the channels its superstep updated (``updated_channels``; see
    :func:`lg_eval.extract._records.planned_by_name`)."""


@dataclass(slots=True)
class WriteRow:
    """One stored write; ``raw`` is the serialized value, present only if needed."""

    ns: str
    checkpoint_id: str
    task_id: str
    task_path: str
    idx: int
    channel: str
    raw: tuple[str, bytes] | None = None

    @property
    def sort_key(self) -> tuple[str, str, int]:
        """The order every saver returns pending writes in."""
        return writes_sort_key(self.task_path, self.task_id, self.idx)


@dataclass(frozen=True, slots=True)
class ThreadRows:
    """What a storage module read of one thread."""

    checkpoints: list[CheckpointRow]
    writes: list[WriteRow]
    stored: dict[tuple[str, str], StoredCheckpoint] = field(default_factory=dict)
    """Checkpoints read whole on the way, keyed ``(ns, id)`` (each namespace's newest, which
    is always one where a run stopped): the reader need not fetch them again."""
    unsplit: dict[tuple[str, str], bytes] = field(default_factory=dict)
    """Checkpoints whose whole msgpack blob came with the rows, keyed ``(ns, id)``, not yet
    split: the reader splits those it needs whole (O(turns)) instead of fetching them."""


def value_needed(task_id: str, channel: str, task_path: str) -> bool:
    """Whether a write's value can appear in a trajectory (mirrors the SQL of each storage)."""
    if channel in VALUE_CHANNELS or task_path == START_PATH:
        return True
    # update_state writes, and a Command's own writes (its update, under the null task id)
    return task_id == NULL_TASK_ID or task_path == "" or task_path.startswith(UPDATE_PREFIX)


def sql_value_needed(left: str) -> str:
    """:func:`value_needed` as a SQL condition (``left`` is the dialect's prefix function)."""
    channels = ", ".join(f"'{c}'" for c in VALUE_CHANNELS)
    n = len(UPDATE_PREFIX)
    return (
        f"channel IN ({channels}) OR task_path = '{START_PATH}' OR task_id = '{NULL_TASK_ID}' "
        f"OR task_path = '' OR {left.format(col='task_path', n=n)} = '{UPDATE_PREFIX}'"
    )


def require(condition: bool, reason: str) -> None:
    """Give up on the fast path (the caller falls back to the generic reader)."""
    if not condition:
        raise FastPathUnavailable(reason)


def kept_per_graph(cache: WeakKeyDictionary[Any, T], graph: Any, build: Callable[[Any], T]) -> T:
    """``build(graph)``, kept in ``cache`` while the compiled graph lives: a nightly run
    extracts thousands of threads of one graph, whose nodes and channels do not change. A
    graph that cannot be weakly referenced gets it built afresh each time."""
    try:
        found = cache.get(graph)
    except TypeError:  # not weakly referenceable or not hashable
        return build(graph)
    if found is None:
        found = cache[graph] = build(graph)
    return found


def json_fields(text: str | bytes | None) -> Any:
    """JSON stored as text whose numbers are small (a checkpoint's metadata, its
    ``versions_seen``), read with orjson: several times faster than ``json`` on the many
    tiny documents of a thread. Never use it for user values: orjson reads integers past
    64 bits as floats (``json.loads`` is used for those, e.g. Postgres' inline channel
    values); what orjson refuses outright is read by ``json``."""
    if text is None:
        return None
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)


def write_rows(found: Iterable[Sequence[Any]]) -> list[WriteRow]:
    """Write rows from SQL results ``(ns, checkpoint id, task id, task path, idx, channel,
    type, value or NULL)``."""
    return [
        WriteRow(
            ns, cid, task_id, path, idx, channel, None if value is None else (kind, bytes(value))
        )
        for ns, cid, task_id, path, idx, channel, kind, value in found
    ]
