"""Experiments on an executor (Ray): cases cut into partitions, played by workers, stored here.

The driver decides what is left to run (a resumed run skips what the store
holds, exactly as a local run), cuts the case × repetition pairs into
partitions of ``partition_size`` and hands them to the executor. A worker plays
its partition with the runner's own case core (:func:`run_case`, driven with
blocking calls in threads, ``concurrency`` cases at once, each under
``timeout``), on the checkpointer and target it opens by name once per process,
and returns the partition's results; the driver alone writes them to the results
store, one transaction per partition, and keeps the run record.

A partition may be played twice (Ray runs it again when its worker dies), so a
worker takes every thread as one a dead worker may have left (``resume_threads``): a
case goes on from its last finished turn; only the attempt that came back is stored.
Workers get names, never live objects: the target as ``module:attr`` (or the dataset's
``graph:``), the checkpointer as a URL, the judge cache as a path.

``services``: an object whose ``.active()`` is a context manager entered around a
partition's cases in the worker (the cluster-wide judge rate limiter and judge
cache); when given, it replaces the worker's own judge cache file.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, closing, nullcontext
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, cast

from lg_eval.errors import InvalidOptionError
from lg_eval.executors import Executor, get_executor
from lg_eval.experiments._case import CaseContext, CasePlan, plan_for
from lg_eval.experiments._targets import CaseTargets
from lg_eval.experiments._upstream import (
    DEFAULT_CHECKPOINTER,
    Dataset,
    dataset_hash,
    load_dataset,
    open_checkpointer,
    parse_checkpointer_url,
)
from lg_eval.experiments.case_threads import CaseThreads
from lg_eval.experiments.checks import check_evaluators
from lg_eval.experiments.judge_cache import DEFAULT_CACHE, JudgeCache
from lg_eval.experiments.judge_services import judge_services, services_record
from lg_eval.experiments.lifecycle import RunLifecycle, new_run_id, run_info
from lg_eval.experiments.options import RunOptions
from lg_eval.experiments.redaction import make_redactor
from lg_eval.experiments.results import CaseResult, ExperimentRun
from lg_eval.experiments.scoring import EvaluatorResolver
from lg_eval.experiments.store import ResultStore, open_store
from lg_eval.experiments.workers import inline, one_at_a_time, run_all
from lg_eval.offline import offline

Partition = Sequence[tuple[int, int]]
"""``(ordinal of the case in the dataset, repetition)`` pairs."""

PARTITION_CASES_PER_SLOT = 2
"""Default partition size, in multiples of ``concurrency`` (a worker's case slots)."""


def run_distributed(
    options: RunOptions,
    executor: str | Executor,
    *,
    ray_address: str | None = None,
    partition_size: int | None = None,
    services: Any = None,
) -> ExperimentRun:
    """Run the experiment ``options`` describes on ``executor``; the store is written here.

    ``partition_size``: cases × repetitions per task (default ``2 * concurrency``).
    ``services``: entered (``services.active()``) around each partition in its worker.
    """
    size = partition_size
    if size is not None and (isinstance(size, bool) or not isinstance(size, int) or size < 1):
        raise InvalidOptionError(f"partition_size={partition_size!r}: use an integer >= 1.")
    shipped = _for_workers(options)
    runner = get_executor(executor, address=ray_address)
    size = partition_size or PARTITION_CASES_PER_SLOT * options.concurrency
    with nullcontext() if options.langsmith else offline():
        return _orchestrate(options, shipped, runner, size, services)


def _orchestrate(
    options: RunOptions, shipped: RunOptions, runner: Executor, size: int, services: Any
) -> ExperimentRun:
    dataset = shipped.dataset
    assert isinstance(dataset, Dataset)
    run_id = options.run_id or new_run_id(dataset.name)
    check_evaluators(dataset, EvaluatorResolver(dataset))  # they fail before any task
    targets = CaseTargets(options.target, dataset, None)  # so does a bad target
    with ExitStack() as stack:
        store = options.store
        if not isinstance(store, ResultStore):
            store = stack.enter_context(closing(open_store(store)))
        run = RunLifecycle.begin(
            store, run_info(options, dataset, run_id, targets.describe(), store), options.progress
        )
        stack.callback(run.release)  # if setup fails before the run is recorded
        todo = run.left(dataset, options.repetitions)

        def learned() -> dict[str, Any]:
            config: dict[str, Any] = {"executor": type(runner).__name__, "partition_size": size}
            if services is not None and hasattr(services, "stats"):
                config.update(services_record(services.stats()))
            return config

        with run.recording(learned):
            if todo:  # nothing left (a finished run resumed): no executor started
                if services is None:
                    services = stack.enter_context(_shared_judges(runner, shipped))
                work = PlayCases(shipped, run_id, dataset_hash(dataset), services)
                for results in runner.map_partitions(work, _chunks(todo, size)):
                    store.write(results)
                    for _, result in results:
                        run.tally.add(result.status)
        return run.result()


def _shared_judges(runner: Executor, shipped: RunOptions) -> Any:
    """The run's judge limiter and cache for ``runner`` (:func:`judge_services`)."""
    cache = shipped.judge_cache if isinstance(shipped.judge_cache, Path) else None
    return judge_services(runner, shipped.judge_limits, cache)


def _for_workers(options: RunOptions) -> RunOptions:
    """The options as workers get them: names and URLs only, nothing of the driver's."""
    if options.target is not None and not isinstance(options.target, str):
        raise InvalidOptionError(
            f"target={type(options.target).__name__} object: a distributed run plays cases in "
            "other processes; pass the target as 'module:attr', or None for the dataset's graph."
        )
    if options.checkpointer is not None and not isinstance(options.checkpointer, str):
        raise InvalidOptionError(
            f"checkpointer={type(options.checkpointer).__name__} object: a distributed run's "
            "workers open their own; pass its URL (postgresql://... or sqlite:///...)."
        )
    if isinstance(options.judge_cache, JudgeCache):
        raise InvalidOptionError(
            "judge_cache=JudgeCache object: a distributed run's workers open their own; pass "
            "its path, True (the default file) or False."
        )
    dataset = options.dataset
    if not isinstance(dataset, Dataset):
        dataset = load_dataset(dataset)
    cache: bool | Path = False
    if options.judge_cache is not False:
        cache = DEFAULT_CACHE if options.judge_cache is True else Path(options.judge_cache)
        cache = cache.resolve()
    return replace(
        options,
        dataset=dataset,
        checkpointer=_absolute(options.checkpointer or DEFAULT_CHECKPOINTER),
        store=None,
        progress=None,
        judge_cache=cache,
    )


def _absolute(url: str) -> str:
    """A SQLite URL with an absolute path (a worker's working directory may differ)."""
    parsed = parse_checkpointer_url(url)
    if parsed.kind != "sqlite" or parsed.path is None:
        return url
    return f"sqlite:///{parsed.path.resolve()}"


def _chunks(items: list[tuple[int, int]], size: int) -> Iterator[list[tuple[int, int]]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


# --------------------------------------------------------------------------- in the worker


@dataclass(frozen=True)
class PlayCases:
    """``play(partition) -> [(ordinal, CaseResult)]``: what a worker runs for one partition."""

    options: RunOptions
    run_id: str
    dataset_hash: str
    services: Any = None
    """An object with ``.active()`` (a context manager), entered around the partition."""

    def __call__(self, partition: Partition) -> list[tuple[int, CaseResult]]:
        options = self.options
        dataset = options.dataset
        assert isinstance(dataset, Dataset)
        ready = _resources(options, self.dataset_hash)
        context = CaseContext.of_run(
            options,
            run_id=self.run_id,
            targets=ready.targets,
            saver=ready.saver,
            redactor=make_redactor(options.redact),
            resume_threads=True,
        )
        plans = [
            plan_for(ready.resolver, ordinal, dataset.cases[ordinal], repetition)
            for ordinal, repetition in partition
        ]
        results: list[tuple[int, CaseResult]] = []
        with ExitStack() as stack:
            if not options.langsmith:
                stack.enter_context(offline())
            if self.services is not None:
                stack.enter_context(self.services.active())
            elif ready.cache is not None:
                stack.enter_context(ready.cache.active())
            asyncio.run(_play(plans, context, options, results))
        return results


async def _play(
    plans: list[CasePlan],
    context: CaseContext,
    options: RunOptions,
    results: list[tuple[int, CaseResult]],
) -> None:
    """The runner's loop: ``concurrency`` blocking cases at once, each under ``timeout``."""
    threads = CaseThreads(asyncio.get_running_loop())
    try:

        async def collected(plan: CasePlan, result: CaseResult) -> None:
            results.append((plan.ordinal, result))  # the driver stores

        execute = inline(context, options.timeout, threads, collected)
        await run_all(plans, one_at_a_time(execute), options.concurrency)
    finally:
        threads.close()


@dataclass(frozen=True)
class _Resources:
    saver: Any
    targets: CaseTargets
    resolver: EvaluatorResolver
    cache: JudgeCache | None


_LOCK = threading.Lock()
_OPEN = ExitStack()  # checkpointers stay open for the worker process's life
_SAVERS: dict[str, Any] = {}
_CACHES: dict[Path, JudgeCache] = {}
_READY: dict[tuple[str, str | None, str], _Resources] = {}


def _resources(options: RunOptions, digest: str) -> _Resources:
    """This process's checkpointer, targets, evaluators and judge cache for a run's options:
    opened on the first partition, reused by every later one."""
    url = cast(str, options.checkpointer)
    key = (url, cast("str | None", options.target), digest)
    with _LOCK:
        ready = _READY.get(key)
        if ready is not None:
            return ready
        saver = _SAVERS.get(url)
        if saver is None:
            saver = _SAVERS[url] = _OPEN.enter_context(open_checkpointer(url))
        cache = None
        if isinstance(options.judge_cache, Path):
            cache = _CACHES.get(options.judge_cache)
            if cache is None:
                cache = _CACHES[options.judge_cache] = JudgeCache(options.judge_cache)
        dataset = cast(Dataset, options.dataset)
        ready = _READY[key] = _Resources(
            saver, CaseTargets(options.target, dataset, saver), EvaluatorResolver(dataset), cache
        )
        return ready


__all__ = ["PARTITION_CASES_PER_SLOT", "Partition", "PlayCases", "run_distributed"]
