"""List a LangGraph Server's threads for a sweep: paged search, each with its newest checkpoint.

The server's ``threads.search`` filters by status and by the thread's metadata (the
server puts ``graph_id`` and ``assistant_id`` there when a run is made), ordered by
creation time so that offset paging is stable while threads are being updated. It does
not say which checkpoint a thread is at, so each listed thread's newest root checkpoint
is read with ``threads.get_state``, ``concurrency`` of a page's threads at a time (the
listing is bound by round trips, not by the server's work). One page is in memory at a
time.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from typing import Any, Literal, get_args

from lg_eval._effects import Core, drive
from lg_eval.errors import InvalidOptionError, ThreadNotFoundError
from lg_eval.server._connection import ServerConnection, request

ThreadStatus = Literal["idle", "busy", "interrupted", "error"]
STATUSES: tuple[ThreadStatus, ...] = get_args(ThreadStatus)
_UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
_FIELDS = ["thread_id", "updated_at", "status"]
MAX_PAGE = 1000
"""The most threads one ``threads.search`` may ask for (the server's API refuses more)."""


@dataclass(frozen=True)
class ServerThread:
    """A listed server thread: its id, its newest root checkpoint and its status."""

    thread_id: str
    checkpoint_id: str
    status: str


def thread_filter(
    *,
    assistant_id: str | None = None,
    status: str | None = None,
    metadata: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The ``threads.search`` arguments for the filters (checked: a typed error names a bad
    one). ``assistant_id`` is an assistant's UUID or a graph id of ``langgraph.json``."""
    if status is not None and status not in STATUSES:
        raise InvalidOptionError(f"status={status!r}: expected one of {', '.join(STATUSES)}.")
    wanted = dict(metadata or {})
    if assistant_id is not None:
        if not isinstance(assistant_id, str) or not assistant_id:
            raise InvalidOptionError(
                f"assistant_id={assistant_id!r}: expected an assistant UUID or a graph id."
            )
        wanted["assistant_id" if _UUID.match(assistant_id) else "graph_id"] = assistant_id
    found: dict[str, Any] = {}
    if wanted:
        found["metadata"] = wanted
    if status is not None:
        found["status"] = status
    return found


def _search(filters: dict[str, Any], offset: int, limit: int, recent: bool, client: Any) -> Any:
    """One page of threads, oldest first, or most recently updated first (either SDK
    client)."""
    return client.threads.search(
        **filters,
        limit=limit,
        offset=offset,
        sort_by="updated_at" if recent else "created_at",
        sort_order="desc" if recent else "asc",
        select=_FIELDS,
    )


def _get_state(thread_id: str, client: Any) -> Any:
    return client.threads.get_state(thread_id)


def search_page(
    server: ServerConnection,
    filters: dict[str, Any],
    offset: int,
    limit: int,
    *,
    recent: bool = False,
) -> Core[list[dict[str, Any]]]:
    """Threads ``offset .. offset + limit`` of the search, oldest first (``recent``: most
    recently updated first, as a watch reads what changed)."""
    call = partial(_search, filters, offset, limit, recent)
    page: list[dict[str, Any]] = yield from request(
        server, f"threads.search (offset {offset})", call, call, shape="list"
    )
    return page


def newest_checkpoint(server: ServerConnection, thread_id: str) -> Core[str | None]:
    """The id of the thread's newest root checkpoint (None: it has none yet)."""
    call = partial(_get_state, thread_id)
    state = yield from request(
        server,
        f"the state of thread {thread_id!r}",
        call,
        call,
        thread_id=thread_id,
        shape="object",
    )
    checkpoint = (state or {}).get("checkpoint") or {}
    found = checkpoint.get("checkpoint_id")
    return str(found) if found else None


def list_server_threads(
    server: ServerConnection,
    *,
    assistant_id: str | None = None,
    status: str | None = None,
    metadata: Mapping[str, Any] | None = None,
    updated_since: datetime | None = None,
    page_size: int = 100,
    concurrency: int = 8,
) -> Iterator[list[ServerThread]]:
    """Pages of the server's threads matching the filters, oldest first, each with its
    newest root checkpoint. ``updated_since`` skips, without reading their state, threads
    not updated since then. A thread deleted while listed, or with no checkpoint yet, is
    left out. A page holds at most :data:`MAX_PAGE` threads, whatever ``page_size``;
    ``concurrency`` state reads of a page are in flight at once."""
    if not isinstance(page_size, int) or page_size < 1:
        raise InvalidOptionError(f"page_size={page_size!r}: expected an int >= 1.")
    if not isinstance(concurrency, int) or concurrency < 1:
        raise InvalidOptionError(f"concurrency={concurrency!r}: expected an int >= 1.")
    filters = thread_filter(assistant_id=assistant_id, status=status, metadata=metadata)
    limit, offset = min(page_size, MAX_PAGE), 0
    with ThreadPoolExecutor(concurrency, thread_name_prefix="lg-eval-list") as pool:
        while True:
            page = drive(search_page(server, filters, offset, limit))
            wanted = [
                t
                for t in page
                if updated_since is None or _time(t.get("updated_at")) >= updated_since
            ]
            ids = [str(t["thread_id"]) for t in wanted]
            heads = [
                ServerThread(thread_id, checkpoint_id, str(thread.get("status")))
                for thread, thread_id, checkpoint_id in zip(
                    wanted, ids, pool.map(partial(_head, server), ids), strict=True
                )
                if checkpoint_id is not None
            ]
            if heads:
                yield heads
            if len(page) < limit:
                return
            offset += len(page)


def updated_threads(
    server: ServerConnection,
    since: datetime,
    *,
    assistant_id: str | None = None,
    status: str | None = None,
    metadata: Mapping[str, Any] | None = None,
    page_size: int = 100,
    concurrency: int = 8,
) -> list[ServerThread]:
    """The threads matching the filters updated at or after ``since`` (a run started or
    ended, a state update), each with its newest root checkpoint and status: the search is
    read most recently updated first and stops at the first older thread, so a server
    where nothing changed answers one request."""
    filters = thread_filter(assistant_id=assistant_id, status=status, metadata=metadata)
    limit, offset = min(page_size, MAX_PAGE), 0
    recent: list[dict[str, Any]] = []
    while True:
        page = drive(search_page(server, filters, offset, limit, recent=True))
        fresh = [t for t in page if _time(t.get("updated_at")) >= since]
        recent.extend(fresh)
        if len(fresh) < len(page) or len(page) < limit:
            break
        offset += len(page)
    ids = list(dict.fromkeys(str(t["thread_id"]) for t in recent))
    status_of = {str(t["thread_id"]): str(t.get("status")) for t in recent}
    with ThreadPoolExecutor(concurrency, thread_name_prefix="lg-eval-updated") as pool:
        heads = list(pool.map(partial(_head, server), ids))
    return [
        ServerThread(thread_id, checkpoint_id, status_of[thread_id])
        for thread_id, checkpoint_id in zip(ids, heads, strict=True)
        if checkpoint_id is not None
    ]


def _head(server: ServerConnection, thread_id: str) -> str | None:
    """The thread's newest checkpoint id; None when it has none, or is gone."""
    try:
        return drive(newest_checkpoint(server, thread_id))
    except ThreadNotFoundError:
        return None


def _time(value: Any) -> datetime:
    if isinstance(value, datetime):
        return value
    return datetime.fromisoformat(str(value))
