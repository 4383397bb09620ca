"""The judge calls of a run: answers cached on disk, and the provider's limits, shared by every
worker.

**The judge cache.** Re-running an unchanged experiment calls no model. The key is a sha256
of the judge model's name, the exact messages sent and the output spec (the judgment tool's
name, description and schema). A hit returns the stored reply with its usage zeroed (no
tokens were spent this time) and counts what it saved; a miss performs the real call and
stores the reply. Errors are never cached. The cache plugs into the judges as a request
hook (:func:`lg_eval.judges.use_hook`), so sync and async judges share it;
:func:`cached_request` is the one core, reading and writing through a :class:`CacheAccess`
(this process's SQLite file, or the Ray cache actor).

**A run's judge services** (:func:`judge_services`): the run's
:class:`~lg_eval.judges.RateLimiter` and judge cache, entered around its cases, cache
outside the limiter (cache → limiter → model) so that hits spend no rate budget. In this
process they are :class:`LocalJudgeServices`. On Ray, where 20 workers must not send the
provider 20 times what one process may, :class:`JudgeServices` starts two actors on the
driver's node that every worker talks to through the handles it holds: the **limiter
actor** holds one :class:`~lg_eval.judges._rate_limits.Budget` (the bookkeeping of the local
limiter: a worker asks it for a grant before each request and settles the grant with the
reply's usage after) and the **cache actor** serves the driver's cache file. Sync judges
block on ``ray.get``; async judges await the object refs. Ray is imported only when called
(``pip install 'lg-eval[ray]'``).

**One cap on judge calls in flight.** A judge call holds one slot of one cap: the run's
``judge_limits.max_concurrent`` when it sets one (the limiter's, across the cluster on Ray),
else the judges' own process-wide :class:`~lg_eval.judges.JudgeConcurrency`, which steps
aside inside a limiter that caps the calls in flight (:func:`lg_eval.judges._rate_limits.holding`).
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager, suppress
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from langchain_core.messages import AIMessage, BaseMessage, message_to_dict, messages_from_dict

from lg_eval._effects import Core, Effect, driven
from lg_eval.errors import InvalidOptionError
from lg_eval.executors._ray import import_ray
from lg_eval.experiments._database import sqlite_connection
from lg_eval.judges import OutputSpec, RequestHook, use_hook
from lg_eval.judges._rate_limits import Budget, Gate, RateLimiter, RateLimits, holding

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


def judge_cache_of(option: bool | str | os.PathLike[str] | JudgeCache) -> Path | JudgeCache | None:
    """The judge cache a run's ``judge_cache`` option names: True the default file, a path,
    a :class:`JudgeCache` object as it is; None for False (no cache)."""
    if isinstance(option, JudgeCache):
        return option
    if option is False:
        return None
    return DEFAULT_CACHE if option is True else Path(option)


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


# --------------------------------------------------------------------------- on Ray


REMOTE_POLL = (0.005, 0.05)
"""Seconds between asking the limiter actor again while every slot is in flight
(doubling from the first to the second), fewer calls to it than a local poll."""


class LimiterActor:
    """The Ray actor holding the cluster's rate budget (one call at a time, so the
    budget needs no lock)."""

    def __init__(self, limits: dict[str, Any]) -> None:
        self.budget = Budget(RateLimits(**limits))

    def try_acquire(self, estimate: int, waited: float) -> tuple[int | None, float | None]:
        return self.budget.try_acquire(estimate, waited)

    def settle(self, grant: int, tokens: int | None) -> None:
        self.budget.settle(grant, tokens)

    def stats(self) -> dict[str, Any]:
        return self.budget.stats.as_dict()


class CacheActor:
    """The Ray actor serving the judge cache from a SQLite file on the driver's node."""

    def __init__(self, path: str) -> None:
        self.cache = JudgeCache(path)

    def lookup(self, key: str) -> AIMessage | None:
        return self.cache.lookup(key)

    def keep(self, key: str, model: str, reply: AIMessage) -> None:
        self.cache.keep(key, model, reply)

    def stats(self) -> dict[str, Any]:
        return self.cache.stats.as_dict()

    def close(self) -> None:
        self.cache.close()


@dataclass(frozen=True)
class JudgeServices:
    """Handles of the limiter and cache actors (either may be None): picklable, so pass
    it to Ray tasks and enter :meth:`active` there. Create it with :meth:`start` on the
    driver, read :meth:`stats` and :meth:`close` it there too."""

    limits: RateLimits | None = None
    limiter: Any = None
    cache: Any = None

    @classmethod
    def start(
        cls,
        limits: RateLimits | dict[str, Any] | None = None,
        cache: JudgeCache | str | Path | None = None,
    ) -> JudgeServices:
        """Start the actors on this (the driver's) node of the running Ray
        (``ray.init`` first): a limiter holding ``limits`` and a cache actor reading and
        writing ``cache`` (a :class:`JudgeCache`, whose file is used, or a path)."""
        ray = import_ray()
        if not ray.is_initialized():
            raise InvalidOptionError(
                "JudgeServices.start needs a running Ray: call ray.init(...) (or start the "
                "RayExecutor) on the driver first."
            )
        checked = None if limits is None else RateLimits.of(limits)
        path = _cache_path(cache)
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        here = NodeAffinitySchedulingStrategy(ray.get_runtime_context().get_node_id(), soft=False)
        options = {"num_cpus": 0, "scheduling_strategy": here}
        limiter = None
        if checked is not None:
            limiter = ray.remote(LimiterActor).options(**options).remote(checked.model_dump())
        cache_actor = None
        if path is not None:
            cache_actor = ray.remote(CacheActor).options(**options).remote(str(path))
        services = cls(checked, limiter, cache_actor)
        services.stats()  # the actors are up (or their start error is raised here)
        return services

    @contextmanager
    def active(self) -> Iterator[JudgeServices]:
        """Route the judge calls of this context through the cache actor, then the limiter
        actor, then the model (in a worker: around a partition's cases or threads)."""
        with ExitStack() as stack:
            if self.limiter is not None and self.limits is not None:
                stack.enter_context(holding(_remote_gate(self.limiter), self.limits))
            if self.cache is not None:
                stack.enter_context(use_hook(caching_hook(_remote_cache(self.cache))))
            yield self

    def stats(self) -> dict[str, Any]:
        """``{"cache": {hits, misses, saved_calls, saved_tokens, saved_cost} | None,
        "limiter": {requests, waits, waited_seconds, tokens, max_in_flight} | None}``."""
        ray = import_ray()
        cache = None if self.cache is None else self.cache.stats.remote()
        limiter = None if self.limiter is None else self.limiter.stats.remote()
        return {
            "cache": None if cache is None else ray.get(cache),
            "limiter": None if limiter is None else ray.get(limiter),
        }

    def close(self) -> None:
        """Close the cache file and kill both actors (closing again does nothing)."""
        ray = import_ray()
        from ray.exceptions import RayActorError

        if self.cache is not None:
            with suppress(RayActorError):  # already closed and killed
                ray.get(self.cache.close.remote())
            ray.kill(self.cache)
        if self.limiter is not None:
            ray.kill(self.limiter)


def _cache_path(cache: JudgeCache | str | Path | None) -> Path | None:
    if cache is None:
        return None
    if isinstance(cache, JudgeCache):
        return cache.path.resolve()
    if isinstance(cache, str | Path):
        return Path(cache).resolve()  # the actor's working directory may differ
    raise InvalidOptionError(
        f"cache is a {type(cache).__name__}; pass a JudgeCache, a path to its SQLite file, "
        "or None for no shared cache."
    )


def _remote_gate(actor: Any) -> Gate:
    """The limiter actor as a :class:`Gate`: a blocking or awaited ``try_acquire``, a
    ``settle`` sent without waiting (Ray runs one caller's calls in order)."""
    ray = import_ray()

    def try_acquire(estimate: int, waited: float) -> Effect[tuple[int | None, float | None]]:
        return Effect(
            lambda: ray.get(actor.try_acquire.remote(estimate, waited)),
            lambda: _awaited(actor.try_acquire.remote(estimate, waited)),
        )

    return Gate(try_acquire, lambda grant, tokens: actor.settle.remote(grant, tokens), REMOTE_POLL)


def _remote_cache(actor: Any) -> CacheAccess:
    ray = import_ray()

    def lookup(key: str) -> Effect[AIMessage | None]:
        return Effect(
            lambda: ray.get(actor.lookup.remote(key)),
            lambda: _awaited(actor.lookup.remote(key)),
        )

    def keep(key: str, model: str, reply: AIMessage) -> Effect[None]:
        return Effect(
            lambda: ray.get(actor.keep.remote(key, model, reply)),
            lambda: _awaited(actor.keep.remote(key, model, reply)),
        )

    return CacheAccess(lookup, keep)


async def _awaited(ref: Any) -> Any:
    return await ref


# --------------------------------------------------------------------------- a run's services


@dataclass(frozen=True)
class LocalJudgeServices:
    """The same ``active()`` / ``stats()`` as :class:`JudgeServices`, for cases played in
    this process (a local run, or the partitions of a
    :class:`~lg_eval.executors.LocalExecutor`): a :class:`RateLimiter` and a
    :class:`JudgeCache` (either may be None)."""

    limiter: RateLimiter | None = None
    cache: JudgeCache | None = None
    budget: RateLimiter | None = None
    """A limiter that outlives the run (a watch's hourly judge budget), held before
    ``limiter``."""

    @contextmanager
    def active(self) -> Iterator[LocalJudgeServices]:
        """Route the judge calls of this context through the cache, then the limiters."""
        with ExitStack() as stack:
            if self.budget is not None:
                stack.enter_context(self.budget.active())
            if self.limiter is not None:
                stack.enter_context(self.limiter.active())
            if self.cache is not None:
                stack.enter_context(self.cache.active())
            yield self

    def stats(self) -> dict[str, Any]:
        """As :meth:`JudgeServices.stats`, with ``"budget"``: the budget's counters over its
        whole life (every run that shared it), or None."""
        return {
            "cache": None if self.cache is None else self.cache.stats.as_dict(),
            "limiter": None if self.limiter is None else self.limiter.stats().as_dict(),
            "budget": None if self.budget is None else self.budget.stats().as_dict(),
        }


@contextmanager
def judge_services(
    executor: Any,
    limits: RateLimits | Mapping[str, Any] | None,
    cache: Path | JudgeCache | None,
    *,
    budget: RateLimiter | None = None,
) -> Iterator[JudgeServices | LocalJudgeServices | None]:
    """The judge limiter and cache a run's cases share, for the executor running them.

    In this process (``executor`` None, or a :class:`~lg_eval.executors.LocalExecutor`):
    :class:`LocalJudgeServices` (a cache given as a path is opened here and closed at the
    end; a :class:`JudgeCache` object is the caller's). On a
    :class:`~lg_eval.executors._ray.RayExecutor`: :class:`JudgeServices` (Ray started first;
    the actors killed at the end). ``None`` when there is nothing to share (no limits, no
    cache); another executor (its own processes) gets None too and each worker opens the
    cache file itself, and limits are refused there (they would hold per process only).
    ``budget``: a limiter the caller keeps across runs (in this process only).
    """
    from lg_eval.executors import LocalExecutor
    from lg_eval.executors._ray import RayExecutor

    checked = None if limits is None else RateLimits.of(limits)
    if checked is None and cache is None and budget is None:
        yield None
        return
    here = executor is None or isinstance(executor, LocalExecutor)
    if budget is not None and not here:
        raise InvalidOptionError(
            f"judge_budget= with executor {type(executor).__name__}: an hourly judge budget "
            "is held in this process, so it needs executor='local'."
        )
    if isinstance(executor, RayExecutor):
        executor.start()
        services = JudgeServices.start(limits=checked, cache=cache)
        try:
            yield services
        finally:
            services.close()
        return
    if here:
        opened = JudgeCache(cache) if isinstance(cache, Path) else cache
        try:
            limiter = None if checked is None else RateLimiter(checked)
            yield LocalJudgeServices(limiter, opened, budget)
        finally:
            if opened is not None and opened is not cache:
                opened.close()
        return
    if checked is not None:
        raise InvalidOptionError(
            f"judge_limits= with executor {type(executor).__name__}: limits are shared by the "
            "local and ray executors only (use executor='local' or 'ray')."
        )
    yield None


def services_record(stats: dict[str, Any]) -> dict[str, Any]:
    """What a run record keeps of its services' :meth:`~JudgeServices.stats`: the cache's
    hits and savings (``judge_cache``), the limiter's counters (``judge_limiter``) and an
    hourly budget's, counted since it was made (``judge_budget_used``)."""
    kept: dict[str, Any] = {}
    if stats.get("cache") is not None:
        kept["judge_cache"] = {"enabled": True, **stats["cache"]}
    if stats.get("limiter") is not None:
        kept["judge_limiter"] = stats["limiter"]
    if stats.get("budget") is not None:
        kept["judge_budget_used"] = stats["budget"]
    return kept
