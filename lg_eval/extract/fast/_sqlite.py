"""Fast rows from ``SqliteSaver`` and ``AsyncSqliteSaver``: tables ``checkpoints`` and ``writes``.

A checkpoint row stores the whole checkpoint, channel values included, as one
msgpack blob, and the metadata after it. Only the blob's first bytes (``v``,
``ts``, ``id``) and last bytes (``versions_seen``) are read
(:mod:`~lg_eval.extract.fast._msgpack_lite`), and write rows come without their
values except the few a trajectory shows. The checkpoints where a run stopped
(O(turns) of them) are read whole and split into undecoded channel values
(:func:`stored`); those whose blob was small enough to come whole with the rows
(``ThreadRows.unsplit``) are not fetched again, so a short thread is one read.

Reaching a row's tail or its metadata still walks the blob's overflow pages.
For a database file the reader therefore uses a read-only connection of its
own, memory-mapped (``mmap_size``) and kept per file, and reads the head and
tail with incremental blob I/O: no page is copied, and the mapping stays warm
across extractions. An in-memory database (no file) is read through the
saver's connection with ``substr``. The sync and async savers run one core;
only the effects differ (the own connection runs in a worker thread when async).
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from functools import partial
from operator import itemgetter
from typing import Any, cast
from urllib.parse import quote
from weakref import WeakKeyDictionary

from lg_eval._effects import Core, Effect
from lg_eval.extract._records import INTERRUPT
from lg_eval.extract.fast import _msgpack_lite as msgpack_lite
from lg_eval.extract.fast import _sqlite_helper as sqlite_helper
from lg_eval.extract.fast._rows import (
    CheckpointRow,
    FastPathUnavailable,
    ThreadRows,
    json_fields,
    require,
    sql_value_needed,
    write_rows,
)
from lg_eval.extract.fast._stored import StoredCheckpoint, split_msgpack_checkpoint

HEAD_BYTES = 160
TAIL_BYTES = (2048, 65536)
"""Tail sizes tried in turn until ``versions_seen`` parses (then the whole blob)."""
MMAP_BYTES = 1 << 34
OWN_CONNECTIONS = 8
"""Read-only connections kept open (one per database file, least recently used closed)."""

CHECKPOINTS_SQL = (
    "SELECT {thread}checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, metadata, {blob} "
    "FROM checkpoints WHERE thread_id {match}{order}"
)
BY_SUBSTR = CHECKPOINTS_SQL.format(
    thread="",
    match="= ?",
    order=" ORDER BY checkpoint_id DESC",
    blob=f"substr(checkpoint, 1, {HEAD_BYTES}), substr(checkpoint, -{TAIL_BYTES[0]}), "
    "length(checkpoint)",
)
SMALL_BYTES = 16384
"""Blobs up to this size are simply selected whole; longer ones are read with blob I/O."""
MANY_BY_ROWID = CHECKPOINTS_SQL.format(
    thread="thread_id, ",
    match="IN ({marks})",
    order="",
    blob=f"rowid, length(checkpoint), CASE WHEN length(checkpoint) <= {SMALL_BYTES} "
    "THEN checkpoint END",
)
"""The checkpoint rows of the threads named by ``{marks}``, each led by its thread id, in
the primary key's order (sorting them in SQL would copy every row, blob included, through
a sorter; each thread's rows are put newest first afterwards)."""
_WRITES_SQL = (
    "SELECT {thread}checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, "
    f"CASE WHEN {sql_value_needed('substr({col}, 1, {n})')} THEN value END "
    "FROM writes WHERE thread_id {match}"
)
WRITES_SQL = _WRITES_SQL.format(thread="", match="= ?")
MANY_WRITES_SQL = _WRITES_SQL.format(thread="thread_id, ", match="IN ({marks})")


Found = tuple[list[tuple[Any, ...]], list[Any]]
"""``(checkpoint fields + head + tail, write rows)``, as read from the file."""


def rows(saver: Any, thread_id: str) -> Core[ThreadRows]:
    """Every checkpoint and write row of a thread."""
    require(getattr(saver, "_has_task_path", False), "the writes table has no task_path column")
    file = yield from _file_of(saver)
    if file:
        try:
            found = yield _on_own(file, partial(_read_thread, file, thread_id))
            if found[0]:
                return _thread_rows(found)
        except (sqlite3.Error, OSError):
            pass  # e.g. no read access to the file: read through the saver
    # nothing committed to the file yet, or no file: ask the saver's own connection
    by_substr = yield _query(saver, BY_SUBSTR, (thread_id,))
    checkpoints = []
    for ns, cid, parent_id, kind, metadata, head, tail, length in by_substr:
        if _tail(tail) is None and length > len(tail):
            (tail,) = (yield _query(saver, _TAIL_SQL, (ns, cid, thread_id)))[0]
        checkpoints.append(_checkpoint(ns, cid, parent_id, kind, metadata, head, tail))
    return ThreadRows(checkpoints, write_rows((yield _query(saver, WRITES_SQL, (thread_id,)))))


def batch_rows(saver: Any, thread_ids: Sequence[str]) -> Core[dict[str, ThreadRows]]:
    """:func:`rows` of many threads of a database file, in two statements for all of them
    instead of two per thread, keyed by thread id. Only threads whose rows the file holds
    and the fast reader can read are returned; the caller reads the others alone (none
    committed to the file yet, an in-memory database, a file past what this SQLite maps,
    a row the fast path cannot read), as :func:`rows` would."""
    require(getattr(saver, "_has_task_path", False), "the writes table has no task_path column")
    file = yield from _file_of(saver)
    if not file:
        return {}
    ids = list(dict.fromkeys(thread_ids))
    found: dict[str, Found] = yield _on_own(
        file,
        lambda conn, size: (
            {} if _past_mapping(file, size) else read_many(conn, ids, _blob_opener(conn))
        ),
    )
    threads = {}
    for thread_id, rows_read in found.items():
        try:
            threads[thread_id] = _thread_rows(rows_read)
        except FastPathUnavailable:
            continue  # read alone, which raises it where this thread's read is decided
    return threads


def _thread_rows(found: Found) -> ThreadRows:
    """A thread's rows as read from the file, its checkpoints' heads and tails parsed."""
    checkpoint_rows, write_found = found
    checkpoints = [_checkpoint(*f) for f in checkpoint_rows]
    return ThreadRows(checkpoints, write_rows(write_found), unsplit=_unsplit(checkpoint_rows))


def _file_of(saver: Any) -> Core[str]:
    """The database file behind the saver's connection ("" when in memory), asked once."""
    file = _files.get(saver)
    if file is None:
        databases = yield _query(saver, "PRAGMA database_list", ())
        file = _files[saver] = next((row[2] for row in databases if row[1] == "main"), "")
    return file


def _unsplit(found: list[tuple[Any, ...]]) -> dict[tuple[str, str], bytes]:
    """The blobs that were small enough to come whole with the rows (their "tail" starts
    with their head), keyed ``(ns, id)``: the checkpoints where a run stopped are split from
    these instead of being fetched again, which on short threads saves a query per thread."""
    return {
        (ns, cid): bytes(tail)
        for ns, cid, _parent, kind, _metadata, head, tail in found
        if kind == "msgpack" and tail.startswith(head)
    }


def stored(
    saver: Any, thread_id: str, keys: Sequence[tuple[str, str]]
) -> Core[dict[tuple[str, str], StoredCheckpoint]]:
    """The checkpoints ``keys`` (``(ns, id)``) read whole, their channel values still
    serialized (sliced out of the blob, not decoded)."""
    ids = sorted({checkpoint_id for _, checkpoint_id in keys})
    found: list[Any] = []
    for start in range(0, len(ids), _CHUNK):
        chunk = ids[start : start + _CHUNK]
        sql = _WHOLE_SQL.format(marks=", ".join("?" * len(chunk)))
        params = (thread_id, *chunk)
        rows_found = None
        if file := _files.get(saver):
            try:
                rows_found = yield _on_own(file, partial(_fetch, sql=sql, params=params))
            except (sqlite3.Error, OSError):
                rows_found = None
        if not rows_found or len(rows_found) < len(chunk):  # not committed to the file yet?
            rows_found = yield _query(saver, sql, params)
        found.extend(rows_found)
    wanted = set(keys)
    whole = {}
    for ns, checkpoint_id, kind, blob in found:
        if (ns, checkpoint_id) in wanted:
            require(kind == "msgpack", f"checkpoint serialized as {kind!r}, not plain msgpack")
            whole[(ns, checkpoint_id)] = split_msgpack_checkpoint(bytes(blob))
    require(len(whole) == len(wanted), "a checkpoint disappeared while the thread was read")
    return whole


_CHUNK = 500
_WHOLE_SQL = (
    "SELECT checkpoint_ns, checkpoint_id, type, checkpoint FROM checkpoints "
    "WHERE thread_id = ? AND checkpoint_id IN ({marks})"
)


def _fetch(conn: sqlite3.Connection, _size: int, sql: str, params: Sequence[Any]) -> list[Any]:
    return conn.execute(sql, params).fetchall()


_TAIL_SQL = (
    "SELECT checkpoint FROM checkpoints WHERE checkpoint_ns = ? AND checkpoint_id = ? "
    "AND thread_id = ?"
)


def _checkpoint(
    ns: str, cid: str, parent_id: str | None, kind: str, metadata: Any, head: bytes, tail: bytes
) -> CheckpointRow:
    if kind != "msgpack":  # (conditions, not require(): its message would be built per row)
        raise FastPathUnavailable(f"checkpoint serialized as {kind!r}, not plain msgpack")
    found = _tail(tail)
    if found is None:
        raise FastPathUnavailable(f"checkpoint {cid} has no readable versions_seen")
    try:
        fields = msgpack_lite.checkpoint_head(bytes(head))
    except msgpack_lite.Unsupported as exc:
        raise FastPathUnavailable(f"checkpoint {cid}: {exc}") from exc
    if fields["id"] != cid:
        raise FastPathUnavailable(f"checkpoint {cid} stores id {fields['id']!r}")
    return CheckpointRow(
        ns=ns,
        id=cid,
        parent_id=parent_id,
        version=fields["v"],
        ts=fields["ts"],
        interrupt_seen=found["versions_seen"].get(INTERRUPT),
        metadata=json_fields(metadata) if metadata is not None else {},
        records_updates=bool(found.get("updated_channels")),
    )


def _tail(tail: bytes) -> dict[str, Any] | None:
    """``versions_seen`` and, when stored, ``updated_channels`` from a checkpoint's end."""
    try:
        return msgpack_lite.checkpoint_tail(bytes(tail))
    except msgpack_lite.Unsupported:
        return None


def _query(saver: Any, sql: str, params: Sequence[Any]) -> Effect[list[Any]]:
    def run() -> list[Any]:
        with saver.cursor(transaction=False) as cur:
            cur.execute(sql, params)
            found: list[Any] = cur.fetchall()
            return found

    async def arun() -> list[Any]:
        await saver.setup()
        async with saver.lock, saver.conn.execute(sql, params) as cur:
            return list(await cur.fetchall())

    return Effect(run, arun)


# --- the reader's own connection to a database file -------------------------------------

_files: WeakKeyDictionary[Any, str] = WeakKeyDictionary()
"""The database file behind each saver's connection ("" when in memory)."""
_connections: OrderedDict[str, tuple[sqlite3.Connection, threading.Lock, tuple[int, int]]] = (
    OrderedDict()
)
_connections_lock = threading.Lock()
_mapped: dict[str, int] = {}
"""Bytes of each file the cached connection memory-maps."""


def _read_thread(file: str, thread_id: str, conn: sqlite3.Connection, size: int) -> Found:
    """One thread's rows from ``file`` (``size`` bytes) on the reader's connection ``conn``,
    or from the helper process when the file is past what this SQLite maps."""
    if _past_mapping(file, size) and sqlite_helper.available():
        try:  # read by a helper that maps it all
            return cast(Found, sqlite_helper.read_file(file, thread_id))
        except Exception:  # the helper could not: read here, page by page
            pass
    return read_rows(conn, thread_id, _blob_opener(conn))


def _past_mapping(file: str, size: int) -> bool:
    """Whether ``file``, ``size`` bytes now, is larger than the cached connection maps."""
    return size > _mapped[file]


def _on_own(file: str, read: Callable[[sqlite3.Connection, int], Any]) -> Effect[Any]:
    """``read(connection, bytes in the file)`` run on the reader's own connection to
    ``file`` (in a worker thread when async)."""

    def run() -> Any:
        conn, lock, size = _connection(file)
        with lock:
            return read(conn, size)

    return Effect(run, lambda: asyncio.to_thread(run))


def _connection(file: str) -> tuple[sqlite3.Connection, threading.Lock, int]:
    """The cached read-only connection to ``file`` (reopened if the file was replaced), its
    lock, and the file's size now (one ``stat`` tells both)."""
    stat = os.stat(file)
    identity = (stat.st_dev, stat.st_ino)
    with _connections_lock:
        cached = _connections.pop(file, None)
        if cached is not None and cached[2] == identity:
            _connections[file] = cached
            return cached[0], cached[1], stat.st_size
        if cached is not None:
            _close(cached)
        conn = sqlite3.connect(f"file:{quote(file)}?mode=ro", uri=True, check_same_thread=False)
        (mapped,) = conn.execute(f"PRAGMA mmap_size = {MMAP_BYTES}").fetchone()
        _mapped[file] = mapped  # what this SQLite build really maps (2 GiB on most)
        lock = threading.Lock()
        _connections[file] = (conn, lock, identity)
        while len(_connections) > OWN_CONNECTIONS:
            _close(_connections.popitem(last=False)[1])
        return conn, lock, stat.st_size


def _close(cached: tuple[sqlite3.Connection, threading.Lock, tuple[int, int]]) -> None:
    with cached[1]:  # not while another thread reads through it
        cached[0].close()


def _blob_opener(conn: sqlite3.Connection) -> Callable[[int], Any]:
    """``open_blob(rowid)`` for :func:`read_many`: a checkpoint blob opened for reading."""
    return lambda rowid: conn.blobopen("checkpoints", "checkpoint", rowid, readonly=True)


def read_rows(conn: Any, thread_id: str, open_blob: Callable[[int], Any]) -> Found:
    """A thread's raw rows through a DB-API connection to the file (``open_blob(rowid)``
    opens a checkpoint blob for incremental reading); none when it has no checkpoint."""
    return read_many(conn, [thread_id], open_blob).get(thread_id, ([], []))


def _head_and_tail(
    fields: list[Any], rowid: int, length: int, small: bytes | None, open_blob: Callable[[int], Any]
) -> tuple[Any, ...]:
    """A checkpoint row's fields with its blob's head and tail: sliced from the blob that
    came whole with the row, else read from the blob."""
    if small is not None:
        return (*fields, small[:HEAD_BYTES], small)
    with open_blob(rowid) as blob:
        head = blob.read(HEAD_BYTES)
        tail = _read_tail(blob, length)
    return (*fields, head, tail)


def read_many(
    conn: Any, thread_ids: Sequence[str], open_blob: Callable[[int], Any]
) -> dict[str, Found]:
    """The raw rows of each of ``thread_ids`` that has a checkpoint, keyed by thread id,
    newest checkpoint first: two statements per :data:`_CHUNK` threads."""
    found: dict[str, Found] = {}
    for start in range(0, len(thread_ids), _CHUNK):
        chunk = thread_ids[start : start + _CHUNK]
        marks = ", ".join("?" * len(chunk))
        # row by row, each blob read right after its row: the second walk of the row's
        # overflow pages (the statement's reached the metadata after them) finds them cached
        for thread_id, *fields, rowid, length, small in conn.execute(
            MANY_BY_ROWID.format(marks=marks), chunk
        ):
            checkpoints = found.setdefault(thread_id, ([], []))[0]
            checkpoints.append(_head_and_tail(fields, rowid, length, small, open_blob))
        for thread_id, *write in conn.execute(MANY_WRITES_SQL.format(marks=marks), chunk):
            if thread_id in found:  # a thread without checkpoints is not read from here
                found[thread_id][1].append(write)
    for checkpoints, _ in found.values():
        checkpoints.sort(key=itemgetter(1), reverse=True)  # by checkpoint id
    return found


def _read_tail(blob: Any, length: int) -> bytes:
    """The shortest tail of the blob in which ``versions_seen`` parses (or the whole blob)."""
    for size in (*TAIL_BYTES, length):
        blob.seek(max(0, length - size))
        tail: bytes = blob.read(min(size, length))
        if size >= length or _tail(tail) is not None:
            return tail
    return b""
