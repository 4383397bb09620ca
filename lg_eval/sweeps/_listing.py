"""List the threads of a SQLite or Postgres checkpointer, streamed page by page.

A thread is listed by its newest root checkpoint (``checkpoint_ns = ''``): its id
(LangGraph's time-ordered uuid6, so ``since`` / ``until`` compare ids against
boundary ids made from the times) and whether any of its root checkpoints carries
the ``metadata`` asked for. Pages come from keyset pagination on ``thread_id``
(``thread_id > last ORDER BY thread_id LIMIT page``): ids are never all in memory,
and a page's query is short enough not to hold the saver's lock for long.
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any

from lg_eval._arguments import instance_of, validated
from lg_eval.errors import CheckpointerError, InvalidOptionError
from lg_eval.errors import SweepError as SweepError

_UUID_EPOCH = 0x01B21DD213814000  # 100 ns ticks from 1582-10-15 to 1970-01-01
_HEX = re.compile(r"[0-9a-fA-F]+")
_KEY = re.compile(r"^[A-Za-z0-9_.-]+$")
_DURATION = re.compile(r"^(\d+(?:\.\d+)?)([smhdw])$")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


@dataclass(frozen=True)
class ThreadHead:
    """A listed thread: its id and its newest root checkpoint id."""

    thread_id: str
    checkpoint_id: str


@validated
def checkpoint_bound(when: Annotated[datetime, instance_of(datetime, what="a datetime")]) -> str:
    """The smallest uuid6 checkpoint id made at ``when`` (ids compare as their times)."""
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    ticks = int(when.timestamp() * 10_000_000) + _UUID_EPOCH
    high, mid, low = ticks >> 28, (ticks >> 12) & 0xFFFF, ticks & 0x0FFF
    return f"{high:08x}-{mid:04x}-6{low:03x}-0000-000000000000"


def checkpoint_time(checkpoint_id: str) -> datetime:
    """When a uuid6 checkpoint id was made.

    Raises:
        InvalidOptionError: ``checkpoint_id`` is no uuid6 (as LangGraph's savers make).
    """
    digits = checkpoint_id.replace("-", "") if isinstance(checkpoint_id, str) else ""
    if len(digits) != 32 or digits[12] != "6" or not _HEX.fullmatch(digits):
        raise InvalidOptionError(
            f"checkpoint_id={checkpoint_id!r:.80}: expected a uuid6 checkpoint id."
        )
    ticks = (int(digits[:8], 16) << 28) | (int(digits[8:12], 16) << 12) | int(digits[13:16], 16)
    return datetime.fromtimestamp((ticks - _UUID_EPOCH) / 10_000_000, UTC)


def parse_time(
    value: str | datetime | timedelta | None, *, now: datetime | None = None
) -> datetime | None:
    """A datetime, a timedelta before now, ``"24h"`` / ``"30m"`` / ``"7d"``, or ISO 8601."""
    if value is None or isinstance(value, datetime):
        return value
    now = now or datetime.now(UTC)
    if isinstance(value, timedelta):
        return now - value
    seconds = duration_seconds(value)
    if seconds is not None:
        return now - timedelta(seconds=seconds)
    try:
        parsed = datetime.fromisoformat(value.strip())
    except ValueError:
        raise InvalidOptionError(
            f"time {value!r}: use a duration before now (90s, 30m, 24h, 7d, 2w) or ISO 8601."
        ) from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def duration_seconds(value: str) -> float | None:
    """``"90s"``, ``"30m"``, ``"24h"``, ``"7d"``, ``"2w"`` in seconds (None: no duration)."""
    match = _DURATION.match(value.strip())
    return None if match is None else float(match.group(1)) * _UNITS[match.group(2)]


def in_sample(thread_id: str, sample: float | None) -> bool:
    """Whether ``thread_id`` is in a ``sample`` fraction: a hash of the id, stable across runs."""
    if sample is None or sample >= 1:
        return True
    digest = hashlib.sha256(thread_id.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < sample


def saver_kind(saver: Any) -> str:
    """``"sqlite"`` or ``"postgres"``; a saver whose threads cannot be listed is a SweepError."""
    module = type(saver).__module__
    if module.startswith("langgraph.checkpoint.sqlite") and isinstance(
        getattr(saver, "conn", None), sqlite3.Connection
    ):
        return "sqlite"
    if module.startswith("langgraph.checkpoint.postgres") and not module.endswith(".aio"):
        return "postgres"
    raise SweepError(
        f"A {type(saver).__name__} cannot list its threads for a sweep: sweeps read the "
        "checkpoints table of a SqliteSaver or PostgresSaver (sqlite:///file or postgresql://"
        " checkpointer URLs)."
    )


def _metadata_sql(kind: str, metadata: Mapping[str, Any]) -> tuple[str, list[Any]]:
    if not metadata:
        return "", []
    for key in metadata:
        if not _KEY.match(key):
            raise InvalidOptionError(f"metadata key {key!r}: letters, digits, _ . - only.")
    if kind == "postgres":
        return "MAX(CASE WHEN metadata @> %s::jsonb THEN 1 ELSE 0 END) = 1", [
            json.dumps(dict(metadata))
        ]
    parts, values = [], []
    for key, value in metadata.items():
        if isinstance(value, bool):
            value = int(value)
        elif isinstance(value, dict | list):
            value = json.dumps(value, separators=(",", ":"))
        parts.append(f"json_extract(CAST(metadata AS TEXT), '$.{key}') = ?")
        values.append(value)
    return f"MAX(CASE WHEN {' AND '.join(parts)} THEN 1 ELSE 0 END) = 1", values


def list_threads(
    saver: Any,
    *,
    since: datetime | None = None,
    until: datetime | None = None,
    metadata: Mapping[str, Any] | None = None,
    page_size: int = 500,
    thread_ids: Sequence[str] | None = None,
) -> Iterator[list[ThreadHead]]:
    """Pages of threads (ordered by id) whose newest root checkpoint is in ``[since, until)``
    and one of whose root checkpoints has every ``metadata`` key equal to its value;
    ``thread_ids``: only those threads (a watch's changed ones), read ``page_size`` ids at
    a time, so only their rows are read."""
    if thread_ids is not None:
        ids = sorted(set(thread_ids))
        for start in range(0, len(ids), page_size):
            yield from _list(
                saver, since, until, metadata, page_size, ids[start : start + page_size]
            )
        return
    yield from _list(saver, since, until, metadata, page_size, None)


def _list(
    saver: Any,
    since: datetime | None,
    until: datetime | None,
    metadata: Mapping[str, Any] | None,
    page_size: int,
    only: list[str] | None,
) -> Iterator[list[ThreadHead]]:
    kind = saver_kind(saver)
    mark = "%s" if kind == "postgres" else "?"
    having, params = ["1 = 1"], []
    if since is not None:
        having.append(f"MAX(checkpoint_id) >= {mark}")
        params.append(checkpoint_bound(since))
    if until is not None:
        having.append(f"MAX(checkpoint_id) < {mark}")
        params.append(checkpoint_bound(until))
    meta_sql, meta_params = _metadata_sql(kind, metadata or {})
    if meta_sql:
        having.append(meta_sql)
        params.extend(meta_params)
    within = "" if only is None else f" AND thread_id IN ({', '.join(mark for _ in only)})"
    sql = (
        "SELECT thread_id, MAX(checkpoint_id) AS newest FROM checkpoints"
        f" WHERE checkpoint_ns = '' AND thread_id > {mark}{within} GROUP BY thread_id"
        f" HAVING {' AND '.join(having)} ORDER BY thread_id LIMIT {int(page_size)}"
    )
    last = ""
    while True:
        with _cursor(saver, kind) as run:
            rows = run(sql, [last, *(only or ()), *params])
        if not rows:
            return
        yield [ThreadHead(str(t), str(c)) for t, c in rows]
        if len(rows) < page_size:
            return
        last = str(rows[-1][0])


def saver_rows(saver: Any, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
    """The rows of one query on the checkpoint tables of ``saver`` (a SqliteSaver or a
    PostgresSaver, its placeholders: ``?`` or ``%s``), as tuples, under the saver's lock
    (its connection is shared with the graph's own writes)."""
    with _cursor(saver, saver_kind(saver)) as run:
        return list(run(sql, list(params)))


@contextmanager
def _cursor(saver: Any, kind: str) -> Iterator[Any]:
    if kind == "sqlite":
        conn: sqlite3.Connection = saver.conn

        def run_sqlite(sql: str, params: list[Any]) -> list[tuple[Any, ...]]:
            with saver.lock, _unreadable(kind, (sqlite3.Error,)):
                return list(conn.execute(sql, params).fetchall())

        yield run_sqlite
        return
    conn_or_pool = saver.conn
    import psycopg

    def run_pg(sql: str, params: list[Any]) -> list[tuple[Any, ...]]:
        with (
            saver.lock,
            _unreadable(kind, (psycopg.Error,)),
            _pg_connection(conn_or_pool) as conn,
            conn.cursor() as cur,
        ):
            cur.execute(sql, params)
            return [_values(row) for row in cur.fetchall()]

    yield run_pg


@contextmanager
def _unreadable(kind: str, errors: tuple[type[Exception], ...]) -> Iterator[None]:
    """The driver's errors as a CheckpointerError (the database went away, a table is
    missing): what a sweep or a watch stored stays, and running it again goes on."""
    try:
        yield
    except errors as exc:
        detail = " ".join(str(exc).split())[:300] or type(exc).__name__
        raise CheckpointerError(
            f"The {'SQLite' if kind == 'sqlite' else 'Postgres'} checkpointer could not be "
            f"read ({type(exc).__name__}: {detail}); what was scored is stored: run again "
            "once it answers."
        ) from exc


@contextmanager
def _pg_connection(conn_or_pool: Any) -> Iterator[Any]:
    if hasattr(conn_or_pool, "getconn"):  # a psycopg_pool pool
        with conn_or_pool.connection() as conn:
            yield conn
    else:
        yield conn_or_pool


def _values(row: Any) -> tuple[Any, ...]:
    if isinstance(row, Mapping):  # LangGraph's savers use dict_row (columns in order)
        return tuple(row.values())
    return tuple(row)
