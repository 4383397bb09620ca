"""The two checkpointers of a replay: opened from URLs, told apart, and the threads listed.

The production checkpointer is listed as a sweep lists it (SQLite and Postgres, with the
time and metadata filters), or through its ``list`` for any other saver. The target must
not store where the production one does: the same object, the same SQLite file, or the
same Postgres database.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack
from datetime import datetime
from typing import Any

from lg_eval.errors import InvalidOptionError, SweepError
from lg_eval.play import open_checkpointer
from lg_eval.sweeps.listing import list_threads, saver_kind


def open_saver(stack: ExitStack, saver: Any, what: str) -> Any:
    """``saver`` itself, or the saver its URL names (closed with ``stack``)."""
    if isinstance(saver, str):
        return stack.enter_context(open_checkpointer(saver))
    if saver is None or not hasattr(saver, "put"):
        raise InvalidOptionError(f"{what}: a checkpointer (saver) or its URL, not {saver!r}.")
    if type(saver).__module__.endswith(".aio"):
        raise InvalidOptionError(
            f"{what}: a {type(saver).__name__} is async only; replay reads and writes "
            "checkpoints with the sync API: pass a sync saver or the URL."
        )
    return saver


def same_storage(a: Any, b: Any) -> bool:
    """Whether two savers write to one place: the same object, the same SQLite file, or the
    same Postgres database (host, port, name)."""
    if a is b:
        return True
    where_a, where_b = _storage_of(a), _storage_of(b)
    return where_a is not None and where_a == where_b


def _storage_of(saver: Any) -> tuple[str, ...] | None:
    conn = getattr(saver, "conn", None)
    if isinstance(conn, sqlite3.Connection):
        files = [row[2] for row in conn.execute("PRAGMA database_list") if row[1] == "main"]
        return ("sqlite", os.path.realpath(files[0])) if files and files[0] else None
    info = getattr(conn, "info", None)  # a psycopg Connection (a pool has none)
    if info is not None and hasattr(info, "dbname"):
        return ("postgres", str(info.host), str(info.port), str(info.dbname))
    return None


def all_threads(
    saver: Any,
    since: datetime | None,
    until: datetime | None,
    metadata: Mapping[str, Any] | None,
) -> list[str]:
    """The ids of the threads to replay: a sweep's listing on SQLite and Postgres; every
    thread of any other saver (whose threads cannot be filtered by time or metadata)."""
    try:
        saver_kind(saver)
    except SweepError:
        if since or until or metadata:
            raise
        return sorted({t.config["configurable"]["thread_id"] for t in _roots(saver)})
    pages = list_threads(saver, since=since, until=until, metadata=metadata)
    return [head.thread_id for page in pages for head in page]


def named_threads(saver: Any, thread_ids: Sequence[str], where: str) -> list[str]:
    """``thread_ids``, once each, in order, when the production saver holds every one.

    Raises:
        InvalidOptionError: a named thread has no checkpoint there (``where``: how the
            saver is shown).
    """
    named = list(dict.fromkeys(thread_ids))
    missing = [t for t in named if saver.get_tuple({"configurable": {"thread_id": t}}) is None]
    if missing:
        listed = ", ".join(repr(t) for t in missing[:5]) + (", ..." if len(missing) > 5 else "")
        raise InvalidOptionError(
            f"thread_ids (--thread): no thread {listed} in the checkpointer {where}; name "
            "threads it holds."
        )
    return named


def _roots(saver: Any) -> Iterator[Any]:
    for tup in saver.list(None):
        if tup.config["configurable"].get("checkpoint_ns", "") == "":
            yield tup


__all__ = ["all_threads", "named_threads", "open_saver", "same_storage"]
