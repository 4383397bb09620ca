"""Fast rows from ``PostgresSaver`` and ``AsyncPostgresSaver``.

``checkpoints.checkpoint`` is JSONB holding everything but non-primitive
channel values (those live in ``checkpoint_blobs``), so the few fields needed
are selected as JSON paths. ``checkpoint_blobs`` is read only for the
checkpoints where a run stopped (:func:`stored`), and its values are handed on
still serialized.
``checkpoint_writes`` rows come without their ``blob`` except the few values a
trajectory shows. The sync and async savers share one core; only the effects
differ. :func:`batch_rows` and :func:`batch_stored` read many threads in one round trip
each (the batch extraction of :mod:`lg_eval.extract._batch`).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from operator import attrgetter
from typing import Any

from psycopg.rows import tuple_row

from lg_eval._effects import Core, Effect
from lg_eval.extract._subgraphs import AGENT
from lg_eval.extract.fast._rows import (
    CheckpointRow,
    ThreadRows,
    json_fields,
    require,
    sql_value_needed,
    write_rows,
)
from lg_eval.extract.fast._stored import Serialized, StoredCheckpoint

_THREAD_SQL = f"""
SELECT thread_id, 0 AS kind, checkpoint_ns, checkpoint_id,
       parent_checkpoint_id AS a, checkpoint->>'v' AS b, checkpoint->>'ts' AS c,
       (checkpoint->'versions_seen'->'__interrupt__')::text AS seen,
       (metadata->'parents')::text AS metadata,
       (metadata->>'step')::integer AS idx, metadata->>'source' AS type, NULL::bytea AS blob,
       NULL::bytea[] AS blobs,
       checkpoint->'updated_channels' NOT IN ('null'::jsonb, '[]'::jsonb) AS named,
       CASE WHEN checkpoint_ns <> '' THEN metadata->>'{AGENT}' END AS agent
FROM checkpoints WHERE {{where}}
UNION ALL
SELECT thread_id, 1, checkpoint_ns, checkpoint_id, task_id, task_path, channel, NULL, NULL,
       idx, type, CASE WHEN {sql_value_needed("left({col}, {n})")} THEN blob END, NULL, NULL,
       NULL
FROM checkpoint_writes WHERE {{where}}
UNION ALL
SELECT checkpoints.thread_id, 2, checkpoints.checkpoint_ns, checkpoint_id, NULL, NULL, NULL,
       NULL, checkpoint::text, NULL, NULL, NULL, {{blobs}}, NULL, NULL
FROM (
    SELECT DISTINCT thread_id, checkpoint_ns FROM checkpoints WHERE {{where}}
) AS namespaces CROSS JOIN LATERAL (
    SELECT thread_id, checkpoint_ns, checkpoint_id, checkpoint FROM checkpoints
    WHERE thread_id = namespaces.thread_id AND checkpoint_ns = namespaces.checkpoint_ns
    ORDER BY checkpoint_id DESC LIMIT 1
) AS checkpoints
"""
"""Checkpoint rows (kind 0; their metadata's ``step``, ``source`` and ``parents`` in the
``idx``, ``type`` and ``metadata`` columns, ``named`` when the checkpoint records its
``updated_channels``, ``agent`` the ``lc_agent_name`` of a subgraph namespace's checkpoint),
write rows (kind 1) and each namespace's newest checkpoint whole (kind 2, always one where a
run stopped), each row led by its thread id, in one round trip, unordered (sorting thousands
of rows cost the server more than Python's sort of the checkpoints). ``{where}`` picks the
threads: one (:data:`THREAD_SQL`) or a batch (:data:`THREADS_SQL`).

Each part walks the primary key: the newest checkpoint per namespace is a backward index
scan, not a sort of every wide checkpoint row, and each of its blobs is one key look-up,
not a scan of every stored version of every channel. JSONB comes as text: psycopg's JSON
loader cost more than the rest of a short thread's rows, and the small per-row fields read
faster with :func:`json_fields`."""

BLOBS_SQL = """(
    SELECT array_agg(array[versions.key::bytea, bl.type::bytea, bl.blob])
    FROM (
        SELECT array_agg(key) AS keys, array_agg(value) AS versions
        FROM jsonb_each_text(checkpoint -> 'channel_versions')
    ) AS pairs
    CROSS JOIN LATERAL unnest(pairs.keys, pairs.versions) AS versions(key, value)
    CROSS JOIN LATERAL (
        SELECT type, blob FROM checkpoint_blobs
        WHERE thread_id = checkpoints.thread_id AND checkpoint_ns = checkpoints.checkpoint_ns
          AND channel = versions.key AND version = versions.value
        LIMIT 1
    ) AS bl)"""
"""A checkpoint's channel blobs, as ``PostgresSaver.get_tuple`` joins them (``LIMIT 1``
keeps the planner from hashing all of the thread's blob rows instead). The channel
versions go through arrays because the planner guesses 100 rows for ``jsonb_each_text``
but 10 for ``unnest``: with the guess of 100, a batch of 50 threads was costed past
``jit_above_cost`` (100,000 by default) and the server spent 70 ms compiling a query that
runs in 7; at 100 threads JIT optimisation took half a second."""
ONE_THREAD = "thread_id = %(thread)s"
MANY_THREADS = "thread_id = ANY(%(threads)s)"
THREAD_SQL = _THREAD_SQL.replace("{blobs}", BLOBS_SQL).replace("{where}", ONE_THREAD)
THREADS_SQL = _THREAD_SQL.replace("{blobs}", BLOBS_SQL).replace("{where}", MANY_THREADS)
STORED_SQL = f"""
SELECT thread_id, checkpoint_ns, checkpoint_id, checkpoint::text, {BLOBS_SQL} AS blobs
FROM checkpoints WHERE {MANY_THREADS} AND checkpoint_id = ANY(%(ids)s)
"""
"""Whole checkpoints with their blobs, of one thread or of a batch (checkpoint ids are
filtered by thread in Python: an id can recur across threads, e.g. in copied threads)."""

Row = tuple[Any, ...]


def rows(saver: Any, thread_id: str) -> Core[ThreadRows]:
    """Every checkpoint and write row of a thread."""
    return _thread_rows((yield _query(saver, THREAD_SQL, {"thread": thread_id})))


def batch_rows(saver: Any, thread_ids: Sequence[str]) -> Core[dict[str, ThreadRows]]:
    """:func:`rows` of many threads in one round trip, keyed by thread id (a thread with no
    rows is absent). Rows are grouped by thread in one pass, then read as :func:`rows` reads
    them."""
    found = yield _query(saver, THREADS_SQL, {"threads": list(dict.fromkeys(thread_ids))})
    grouped: dict[str, list[Row]] = defaultdict(list)
    for row in found:
        grouped[row[0]].append(row)
    return {thread_id: _thread_rows(group) for thread_id, group in grouped.items()}


def _thread_rows(found: Iterable[Row]) -> ThreadRows:
    """One thread's rows of :data:`THREAD_SQL` / :data:`THREADS_SQL`."""
    checkpoints = []
    writes = []
    newest = {}
    for (
        _thread,
        kind,
        ns,
        cid,
        a,
        b,
        c,
        seen,
        metadata,
        idx,
        type_,
        blob,
        blobs,
        named,
        agent,
    ) in found:
        if kind == 0:  # idx holds metadata's step, type its source, metadata its parents
            found_metadata = {"source": type_, "step": idx, "parents": json_fields(metadata)}
            if agent is not None:
                found_metadata[AGENT] = agent
            if None in found_metadata.values():
                found_metadata = {k: v for k, v in found_metadata.items() if v is not None}
            checkpoints.append(
                CheckpointRow(
                    ns=ns,
                    id=cid,
                    parent_id=a,
                    version=int(b or 0),
                    ts=c,
                    interrupt_seen=json_fields(seen),
                    metadata=found_metadata,
                    records_updates=bool(named),
                )
            )
        elif kind == 1:
            writes.append((ns, cid, a, b, idx, c, type_, blob))
        else:
            newest[(ns, cid)] = _stored(metadata, blobs)
    checkpoints.sort(key=attrgetter("id"), reverse=True)  # newest first, as savers list
    return ThreadRows(checkpoints, write_rows(writes), newest)


def stored(
    saver: Any, thread_id: str, keys: Sequence[tuple[str, str]]
) -> Core[dict[tuple[str, str], StoredCheckpoint]]:
    """The checkpoints ``keys`` (``(ns, id)``), channel values still serialized (primitive
    values, which the saver keeps in the JSONB itself, come decoded)."""
    found = (yield from batch_stored(saver, {thread_id: keys})).get(thread_id, {})
    require(len(found) == len(set(keys)), "a checkpoint disappeared while the thread was read")
    return found


def batch_stored(
    saver: Any, keys: Mapping[str, Sequence[tuple[str, str]]]
) -> Core[dict[str, dict[tuple[str, str], StoredCheckpoint]]]:
    """:func:`stored` of many threads (``keys`` per thread id) in one round trip. A
    checkpoint not found is simply absent (the caller decides what that means)."""
    wanted = {(thread_id, ns, cid) for thread_id, pairs in keys.items() for ns, cid in pairs}
    params = {
        "threads": sorted(keys),
        "ids": sorted({cid for _, _, cid in wanted}),
    }
    found: dict[str, dict[tuple[str, str], StoredCheckpoint]] = {}
    for thread_id, ns, cid, checkpoint, blobs in (yield _query(saver, STORED_SQL, params)):
        if (thread_id, ns, cid) in wanted:
            found.setdefault(thread_id, {})[(ns, cid)] = _stored(checkpoint, blobs)
    return found


def _stored(text: str, blobs: list[list[bytes]] | None) -> StoredCheckpoint:
    """A checkpoint's JSONB (as text) and its blobs (``[channel, type, value]``) as stored."""
    checkpoint = json.loads(text)  # holds user values: see json_fields
    require(isinstance(checkpoint, dict), "a stored checkpoint is not a JSON object")
    inline = checkpoint.pop("channel_values", None) or {}
    raw: dict[str, Serialized] = {
        bytes(channel).decode(): (bytes(kind).decode(), bytes(blob))
        for channel, kind, blob in blobs or ()
        if bytes(kind) != b"empty"
    }
    return StoredCheckpoint(checkpoint=checkpoint, raw=raw, inline=inline)


def _query(saver: Any, sql: str, params: Mapping[str, Any]) -> Effect[list[tuple[Any, ...]]]:
    """Rows as tuples (the saver's cursors make dicts, which cost more to build)."""

    def run() -> list[Any]:
        with saver._cursor() as cur:
            cur.row_factory = tuple_row
            cur.execute(sql, params)
            found: list[Any] = cur.fetchall()
            return found

    async def arun() -> list[Any]:
        async with saver._cursor() as cur:
            cur.row_factory = tuple_row
            await cur.execute(sql, params)
            found: list[Any] = await cur.fetchall()
            return found

    return Effect(run, arun)
