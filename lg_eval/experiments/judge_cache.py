"""Judge answers cached on disk, so re-running an unchanged experiment calls no model.

The key is a sha256 of the judge model's name, the exact messages sent and the
output spec (the judgment tool's name, description and schema). A hit returns
the stored reply with its usage zeroed (no tokens were spent this time) and
counts what it saved; a miss performs the real call and stores the reply.
Errors are never cached. The cache plugs into the judges through
:data:`lg_eval.judges._model.REQUEST_HOOK` (see :meth:`JudgeCache.active`), so
sync and async judges share it; :func:`cached_request` is the one core, reading and
writing through a :class:`CacheAccess` (this process's SQLite file, or the Ray cache
actor of :mod:`lg_eval.experiments.judge_services`).
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from langchain_core.messages import AIMessage, BaseMessage, message_to_dict, messages_from_dict

from lg_eval._effects import Core, Effect, driven
from lg_eval.experiments.store import sqlite_connection
from lg_eval.judges import OutputSpec, RequestHook, use_hook

T = TypeVar("T")

DEFAULT_CACHE = Path(".lg_eval") / "judge_cache.sqlite"
CACHE_MARK = "lg_eval_judge_cache"
"""``response_metadata`` key set on replies served from the cache."""


@dataclass
class CacheStats:
    """Hits, misses and what the hits saved."""

    hits: int = 0
    misses: int = 0
    saved_tokens: int = 0
    saved_cost: float = 0.0

    def add_hit(self, reply: AIMessage) -> None:
        self.hits += 1
        usage: dict[str, Any] = dict(reply.usage_metadata or {})
        self.saved_tokens += int(usage.get("total_tokens") or 0)
        cost = (reply.response_metadata or {}).get("cost")
        if isinstance(cost, int | float) and not isinstance(cost, bool):
            self.saved_cost += float(cost)

    def as_dict(self) -> dict[str, Any]:
        return {
            "hits": self.hits,
            "misses": self.misses,
            "saved_calls": self.hits,
            "saved_tokens": self.saved_tokens,
            "saved_cost": round(self.saved_cost, 10),
        }


CASE_STATS: ContextVar[CacheStats | None] = ContextVar("lg_eval_case_cache_stats", default=None)
"""Per-case counters the runner sets in each case's context (hits are subtracted from its
model-call count)."""


class JudgeCache:
    """A SQLite file of judge replies keyed by :func:`cache_key`."""

    def __init__(self, path: str | Path = DEFAULT_CACHE) -> None:
        self.path = Path(path)
        self._conn = sqlite_connection(self.path)
        self._conn.execute(
            "CREATE TABLE IF NOT EXISTS judge_cache (key TEXT PRIMARY KEY, model TEXT NOT NULL,"
            " reply TEXT NOT NULL)"
        )
        self._conn.commit()
        self._lock = threading.Lock()
        self.stats = CacheStats()

    def get(self, key: str) -> AIMessage | None:
        with self._lock:
            row = self._conn.execute(
                "SELECT reply FROM judge_cache WHERE key = ?", (key,)
            ).fetchone()
        if row is None:
            return None
        (message,) = messages_from_dict([json.loads(row[0])])
        return message if isinstance(message, AIMessage) else None

    def put(self, key: str, model: str, reply: AIMessage) -> None:
        data = json.dumps(message_to_dict(reply), default=str)
        with self._lock:
            self._conn.execute(
                "INSERT INTO judge_cache (key, model, reply) VALUES (?, ?, ?)"
                " ON CONFLICT DO NOTHING",
                (key, model, data),
            )
            self._conn.commit()

    def lookup(self, key: str) -> AIMessage | None:
        """The stored reply for ``key`` (counted as a hit in :attr:`stats`), or None."""
        cached = self.get(key)
        if cached is not None:
            with self._lock:
                self.stats.add_hit(cached)
        return cached

    def keep(self, key: str, model: str, reply: AIMessage) -> None:
        """Store the reply of a miss (counted as a miss in :attr:`stats`)."""
        self.put(key, model, reply)
        with self._lock:
            self.stats.misses += 1

    def hook(
        self,
        model: str,
        messages: Sequence[BaseMessage],
        spec: OutputSpec,
        make_request: Callable[[], Effect[AIMessage]],
    ) -> Effect[AIMessage]:
        """The :data:`~lg_eval.judges._model.RequestHook`: serve from the cache or call and keep."""
        access = CacheAccess(
            lookup=lambda key: _now(lambda: self.lookup(key)),
            keep=lambda key, name, reply: _now(lambda: self.keep(key, name, reply)),
        )
        return caching_hook(access)(model, messages, spec, make_request)

    @contextmanager
    def active(self) -> Iterator[JudgeCache]:
        """Route the judge calls made in this context (and tasks/threads copying it) here,
        around whatever hook is already active (a rate limiter entered before sees misses
        only)."""
        with use_hook(self.hook):
            yield self

    def close(self) -> None:
        with self._lock:
            self._conn.close()


@dataclass(frozen=True)
class CacheAccess:
    """Where a caching hook reads and writes: ``lookup(key)`` (a hit counted where the
    replies live) and ``keep(key, model, reply)``, each an :class:`Effect`, so the same
    :func:`cached_request` serves a local file and a Ray actor."""

    lookup: Callable[[str], Effect[AIMessage | None]]
    keep: Callable[[str, str, AIMessage], Effect[None]]


def cached_request(
    access: CacheAccess,
    model: str,
    messages: Sequence[BaseMessage],
    spec: OutputSpec,
    make_request: Callable[[], Effect[AIMessage]],
) -> Core[AIMessage]:
    """The cache's one core: a hit is served (counted in the case's :data:`CASE_STATS`), a
    miss asks ``make_request()`` and keeps the reply. Errors are never kept."""
    key = cache_key(model, messages, spec)
    cached = yield access.lookup(key)
    if cached is not None:
        case = CASE_STATS.get()
        if case is not None:
            case.add_hit(cached)
        return _served(cached)
    reply: AIMessage = yield make_request()
    yield access.keep(key, model, reply)
    return reply


def caching_hook(access: CacheAccess) -> RequestHook:
    """A :data:`~lg_eval.judges._model.RequestHook` serving requests through ``access``."""

    def hook(
        model: str,
        messages: Sequence[BaseMessage],
        spec: OutputSpec,
        make_request: Callable[[], Effect[AIMessage]],
    ) -> Effect[AIMessage]:
        return driven(lambda: cached_request(access, model, messages, spec, make_request))

    return hook


def _now(call: Callable[[], T]) -> Effect[T]:
    """An effect doing quick local work (a SQLite read) in place, sync or async."""

    async def acall() -> T:
        return call()

    return Effect(call, acall)


def cache_key(model: str, messages: Sequence[BaseMessage], spec: OutputSpec) -> str:
    """sha256 of the model name, the messages (type, content, tool calls) and the spec."""
    sent = []
    for message in messages:
        data = dict(message_to_dict(message)["data"])
        data.pop("id", None)
        sent.append({"type": message.type, **data})
    document = {
        "model": model,
        "messages": sent,
        "tool": {"name": spec.name, "description": spec.description, "schema": spec.schema},
    }
    canonical = json.dumps(document, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _served(reply: AIMessage) -> AIMessage:
    """A cached reply as returned: its usage zeroed (nothing was spent), marked as cached."""
    zero = {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0}
    metadata = {CACHE_MARK: "hit"}
    return reply.model_copy(update={"usage_metadata": zero, "response_metadata": metadata})


__all__ = [
    "CACHE_MARK",
    "CASE_STATS",
    "DEFAULT_CACHE",
    "CacheAccess",
    "CacheStats",
    "JudgeCache",
    "cache_key",
    "cached_request",
    "caching_hook",
]
