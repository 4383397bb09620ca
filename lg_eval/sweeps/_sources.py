"""Where a watch's threads come from: all of them, those changed since the last look, and
why one stopped (:class:`CheckpointSource`: a SQLite or Postgres saver; :class:`ServerSource`:
a LangGraph Server)."""

from __future__ import annotations

import time
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from lg_eval.server import ServerConnection, list_server_threads, updated_threads
from lg_eval.sweeps._changes import CheckpointChanges
from lg_eval.sweeps._listing import ThreadHead, checkpoint_time, list_threads
from lg_eval.sweeps._settle import Reason, server_reason, stop_reason


@dataclass(frozen=True)
class Filters:
    """The sweep's filters, as every look applies them."""

    since: datetime | None = None
    until: datetime | None = None
    metadata: Mapping[str, Any] | None = None
    assistant_id: str | None = None
    status: str | None = None
    page_size: int = 500


class Source:
    """All threads, those changed, and why one stopped; ``idles``: whether a thread that
    writes nothing for the watch's ``idle`` seconds is scored anyway."""

    idles = True

    def start(self) -> None:
        """Mark now: :meth:`changed` returns what is written after this call."""
        raise NotImplementedError

    def everything(self) -> Iterator[list[ThreadHead]]:
        """Pages of every thread that passes the filters."""
        raise NotImplementedError

    def changed(self, waiting: Collection[str]) -> Iterator[list[ThreadHead]] | None:
        """Pages of the threads changed since the last call, and of ``waiting``; None when
        that cannot be known (then :meth:`everything` must be read)."""
        raise NotImplementedError

    def reason(self, head: ThreadHead) -> Reason | None:
        """Why the thread's run stopped at ``head``, or None while it runs."""
        raise NotImplementedError


class CheckpointSource(Source):
    """A SqliteSaver's or PostgresSaver's threads; ``graph`` (bound to it) reads the state
    that says whether a run stopped."""

    def __init__(self, changes: CheckpointChanges, graph: Any, filters: Filters) -> None:
        self.changes, self.graph, self.filters = changes, graph, filters

    def start(self) -> None:
        self.changes.start()

    def everything(self) -> Iterator[list[ThreadHead]]:
        return self._list(None)

    def changed(self, waiting: Collection[str]) -> Iterator[list[ThreadHead]] | None:
        ids = self.changes.poll()
        if ids is None:
            return None
        return self._list(sorted({*ids, *waiting}))

    def _list(self, only: list[str] | None) -> Iterator[list[ThreadHead]]:
        filters = self.filters
        return list_threads(
            self.changes.saver,
            since=filters.since,
            until=filters.until,
            metadata=filters.metadata,
            page_size=filters.page_size,
            thread_ids=only,
        )

    def reason(self, head: ThreadHead) -> Reason | None:
        return stop_reason(self.graph, head.thread_id, head.checkpoint_id)


class ServerSource(Source):
    """A LangGraph Server's threads: its status says whether a run is going (``busy``), so
    a busy thread waits for its run to end, however long it takes. ``margin``: seconds of
    updates read again by each look (a server's clock a little apart)."""

    idles = False

    def __init__(self, server: ServerConnection, filters: Filters, margin: float) -> None:
        self.server, self.filters, self.margin = server, filters, margin
        self._since = 0.0
        self._status: dict[str, str] = {}

    def _search(self) -> dict[str, Any]:
        filters = self.filters
        return {
            "assistant_id": filters.assistant_id,
            "status": filters.status,
            "metadata": filters.metadata,
            "page_size": min(filters.page_size, 1000),
        }

    def start(self) -> None:
        self._since = time.time()

    def everything(self) -> Iterator[list[ThreadHead]]:
        self._status = {}
        pages = list_server_threads(self.server, updated_since=self.filters.since, **self._search())
        for page in pages:
            yield self._heads(page)

    def changed(self, waiting: Collection[str]) -> Iterator[list[ThreadHead]] | None:
        asked = time.time()
        since = datetime.fromtimestamp(self._since - self.margin, UTC)
        threads = updated_threads(self.server, since, **self._search())
        self._since, self._status = asked, {}
        heads = self._heads(threads)
        return iter([heads] if heads else [])

    def _heads(self, threads: Sequence[Any]) -> list[ThreadHead]:
        since, until = self.filters.since, self.filters.until
        heads = []
        for thread in threads:
            when = checkpoint_time(thread.checkpoint_id)
            if (since is None or when >= since) and (until is None or when < until):
                self._status[thread.thread_id] = thread.status
                heads.append(ThreadHead(thread.thread_id, thread.checkpoint_id))
        return heads

    def reason(self, head: ThreadHead) -> Reason | None:
        return server_reason(self._status.get(head.thread_id, "busy"))
