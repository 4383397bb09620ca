"""Judge rate limits and the judge cache, shared by every worker of a Ray cluster.

A run on 20 workers must not send the judge provider 20 times what one process
may: :class:`JudgeServices` starts two Ray actors on the driver's node, which
every worker talks to through the actor handles it holds:

* the **limiter actor** holds one :class:`~lg_eval.judges.rate_limits.Budget` (the
  same bookkeeping as the local :class:`~lg_eval.judges.RateLimiter`): a worker asks
  it for a grant before each judge request (``try_acquire``: a grant, or how long to
  wait before asking again) and settles the grant with the reply's usage after;
* the **cache actor** serves ``lookup``/``keep`` from the driver's
  :class:`~lg_eval.experiments.JudgeCache` file, so the cache persists across runs and
  one worker's answers are hits for every other, also on other machines.

``services.active()`` in a worker installs both as request hooks, cache outside
the limiter (cache → limiter → model), so hits spend no rate budget. Sync judges
block on ``ray.get``; async judges await the object refs, so their event loop
keeps running. Ray is imported only when called (``pip install 'lg-eval[ray]'``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage

from lg_eval._effects import Effect
from lg_eval.errors import InvalidOptionError
from lg_eval.executors.ray import import_ray
from lg_eval.experiments.judge_cache import CacheAccess, JudgeCache, caching_hook
from lg_eval.judges import use_hook
from lg_eval.judges.rate_limits import Budget, Gate, RateLimiter, RateLimits, limiting_hook

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
                gate = _remote_gate(self.limiter)
                stack.enter_context(use_hook(limiting_hook(gate, self.limits)))
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
    """The same ``active()`` / ``stats()`` as :class:`JudgeServices`, for partitions run in
    this process (:class:`~lg_eval.executors.LocalExecutor`): a :class:`RateLimiter` and a
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
    cache: Path | None,
    *,
    budget: RateLimiter | None = None,
) -> Iterator[JudgeServices | LocalJudgeServices | None]:
    """The judge limiter and cache a run's partitions share, for the executor running them.

    On a :class:`~lg_eval.executors.ray.RayExecutor`: :class:`JudgeServices` (Ray started
    first; the actors killed at the end). On a :class:`~lg_eval.executors.LocalExecutor`:
    :class:`LocalJudgeServices`. ``None`` when there is nothing to share (no limits, no
    cache); another executor (its own processes) gets None too and each worker opens the
    cache file itself, and limits are refused there (they would hold per process only).
    ``budget``: a limiter the caller keeps across runs (local executor only).
    """
    from lg_eval.executors import LocalExecutor
    from lg_eval.executors.ray import RayExecutor

    checked = None if limits is None else RateLimits.of(limits)
    if checked is None and cache is None and budget is None:
        yield None
        return
    if budget is not None and not isinstance(executor, LocalExecutor):
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
    if isinstance(executor, LocalExecutor):
        opened = None if cache is None else JudgeCache(cache)
        try:
            limiter = None if checked is None else RateLimiter(checked)
            yield LocalJudgeServices(limiter, opened, budget)
        finally:
            if opened is not None:
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


__all__ = [
    "CacheActor",
    "JudgeServices",
    "LimiterActor",
    "LocalJudgeServices",
    "judge_services",
    "services_record",
]
