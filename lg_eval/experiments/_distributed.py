"""Experiments on an executor (Ray): cases cut into partitions, played by workers, stored here.

The driver decides what is left to run (a resumed run skips what the store holds, exactly
as a local run), cuts the case × repetition pairs into partitions of ``partition_size`` and
hands them to the executor. A worker plays its partition with the runner's own loop
(:func:`~lg_eval.experiments._case.play_cases`: blocking cases on daemon OS threads,
``concurrency`` at once, each under ``timeout``), on the checkpointer and target it opens
by name once per process, and returns the partition's results; the driver alone writes
them to the results store, one transaction per partition, and keeps the run record.

A partition may be played twice (Ray runs it again when its worker dies), so a worker takes
every thread as one a dead worker may have left (``resume_threads``): a case goes on from
its last finished turn; only the attempt that came back is stored. Workers get names, never
live objects: the target as ``module:attr`` (or the dataset's ``graph:``), the checkpointer
as a URL, the judge cache as a path. The run's judge services (the cluster-wide limiter and
cache, :func:`~lg_eval.experiments._judges.judge_services`) are entered around each
partition in its worker; without them a worker opens the judge cache file itself.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import Future
from contextlib import ExitStack, closing, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from lg_eval._daemons import DaemonPool
from lg_eval._offline import offline
from lg_eval._urls import parse_checkpointer_url
from lg_eval.datasets import Dataset, dataset_hash, load_dataset
from lg_eval.errors import InvalidOptionError
from lg_eval.executors import Executor, get_executor
from lg_eval.experiments._case import CaseContext, CasePlan, CaseTargets, plan_for, play_cases
from lg_eval.experiments._judges import JudgeCache, judge_cache_of, judge_services, services_record
from lg_eval.experiments._lifecycle import DEFAULT_CHECKPOINTER, RunLifecycle, new_run_id, run_info
from lg_eval.experiments._options import ExecutorOptions, RunOptions, check_evaluators
from lg_eval.experiments._results import CaseResult, ExperimentRun
from lg_eval.experiments._score import EvaluatorResolver
from lg_eval.experiments._store import ResultStore, open_store
from lg_eval.play import open_checkpointer

Partition = Sequence[tuple[int, int]]
"""``(ordinal of the case in the dataset, repetition)`` pairs."""

PARTITION_CASES_PER_SLOT = 2
"""Default partition size, in multiples of ``concurrency`` (a worker's case slots)."""


def run_distributed(
    target: Any, dataset: Dataset | str | Path, options: ExecutorOptions
) -> ExperimentRun:
    """Run the experiment on ``options["executor"]``; the store is written here."""
    loaded, shipped = _for_workers(target, dataset, options)
    runner = get_executor(options["executor"], address=options["ray_address"])
    size = options["partition_size"] or PARTITION_CASES_PER_SLOT * options["concurrency"]
    with nullcontext() if options["langsmith"] else offline():
        return _orchestrate(target, loaded, options, shipped, runner, size)


def _orchestrate(
    target: Any,
    dataset: Dataset,
    options: RunOptions,
    shipped: RunOptions,
    runner: Executor,
    size: int,
) -> ExperimentRun:
    run_id = options["run_id"] or new_run_id(dataset.name)
    check_evaluators(dataset, EvaluatorResolver(dataset))  # they fail before any task
    targets = CaseTargets(target, dataset, None)  # so does a bad target
    with ExitStack() as stack:
        store = options["store"]
        if not isinstance(store, ResultStore):
            store = stack.enter_context(closing(open_store(store)))
        info = run_info(options, dataset, run_id, targets.describe(), store)
        run = RunLifecycle.begin(store, info, options["progress"])
        stack.callback(run.release)  # if setup fails before the run is recorded
        todo = run.left(dataset, options["repetitions"])
        services: Any = None

        def learned() -> dict[str, Any]:
            config: dict[str, Any] = {"executor": type(runner).__name__, "partition_size": size}
            if services is not None:
                config.update(services_record(services.stats()))
            return config

        with run.recording(learned):
            if todo:  # nothing left (a finished run resumed): no executor started
                cache = shipped["judge_cache"]
                shared = judge_services(
                    runner, shipped["judge_limits"], cache if isinstance(cache, Path) else None
                )
                services = stack.enter_context(shared)
                digest = dataset_hash(dataset)
                partitions = PlayCases(run_id, target, dataset, digest, shipped, services)
                for results in runner.map_partitions(partitions, _chunks(todo, size)):
                    store.write(results)
                    for _, result in results:
                        run.counter.add(result.status)
        return run.result(owned=not isinstance(options["store"], ResultStore))


def _for_workers(
    target: Any, dataset: Dataset | str | Path, options: RunOptions
) -> tuple[Dataset, RunOptions]:
    """The dataset and the options as workers get them: names and URLs only, nothing of the
    driver's."""
    if target is not None and not isinstance(target, str):
        raise InvalidOptionError(
            f"target={type(target).__name__} object: a distributed run plays cases in "
            "other processes; pass the target as 'module:attr', or None for the dataset's graph."
        )
    saver = options["checkpointer"]
    if saver is not None and not isinstance(saver, str):
        raise InvalidOptionError(
            f"checkpointer={type(saver).__name__} object: a distributed run's "
            "workers open their own; pass its URL (postgresql://... or sqlite:///...)."
        )
    cache = judge_cache_of(options["judge_cache"])
    if isinstance(cache, JudgeCache):
        raise InvalidOptionError(
            "judge_cache=JudgeCache object: a distributed run's workers open their own; pass "
            "its path, True (the default file) or False."
        )
    shipped: RunOptions = {
        **options,
        "checkpointer": _absolute(saver or DEFAULT_CHECKPOINTER),
        "store": None,
        "progress": None,
        "judge_cache": False if cache is None else cache.resolve(),
    }
    for driver_only in ("executor", "ray_address", "partition_size"):
        shipped.pop(driver_only, None)  # type: ignore[misc]
    return dataset if isinstance(dataset, Dataset) else load_dataset(dataset), shipped


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

    run_id: str
    target: str | None
    dataset: Dataset
    digest: str
    """The dataset's hash: which workers' resources serve it."""
    options: RunOptions
    services: Any = None
    """The run's judge services (``.active()``, a context manager), entered around the
    partition."""

    def __call__(self, partition: Partition) -> list[tuple[int, CaseResult]]:
        ready = _resources(self)
        context = CaseContext.of_run(self.options, self.run_id, ready.targets, resume_threads=True)
        plans = [
            plan_for(ready.resolver, ordinal, self.dataset.cases[ordinal], repetition)
            for ordinal, repetition in partition
        ]
        results: list[tuple[int, CaseResult]] = []
        with ExitStack() as stack:
            if not self.options["langsmith"]:
                stack.enter_context(offline())
            if self.services is not None:
                stack.enter_context(self.services.active())
            elif ready.cache is not None:
                stack.enter_context(ready.cache.active())
            asyncio.run(_play(plans, context, self.options, results))
        return results


async def _play(
    plans: list[CasePlan],
    context: CaseContext,
    options: RunOptions,
    results: list[tuple[int, CaseResult]],
) -> None:
    """The runner's loop on this worker's partition; the driver stores what it collects."""
    pool = DaemonPool(asyncio.get_running_loop())

    def collected(plan: CasePlan, result: CaseResult) -> Future[None]:
        results.append((plan.ordinal, result))
        done: Future[None] = Future()
        done.set_result(None)
        return done

    try:
        await play_cases(plans, context, options, pool=pool, finished=collected)
    finally:
        pool.close()


@dataclass(frozen=True)
class _Resources:
    targets: CaseTargets
    resolver: EvaluatorResolver
    cache: JudgeCache | None


_LOCK = threading.Lock()
_OPEN = ExitStack()  # checkpointers stay open for the worker process's life
_SAVERS: dict[str, Any] = {}
_CACHES: dict[Path, JudgeCache] = {}
_READY: dict[tuple[str, str | None, str], _Resources] = {}


def _resources(work: PlayCases) -> _Resources:
    """This process's checkpointer, targets, evaluators and judge cache for a run's
    partitions: opened on the first partition, reused by every later one."""
    url = cast(str, work.options["checkpointer"])
    key = (url, work.target, work.digest)
    with _LOCK:
        ready = _READY.get(key)
        if ready is not None:
            return ready
        saver = _SAVERS.get(url)
        if saver is None:
            saver = _SAVERS[url] = _OPEN.enter_context(open_checkpointer(url))
        path = work.options["judge_cache"]
        cache = None
        if isinstance(path, Path):
            cache = _CACHES.get(path)
            if cache is None:
                cache = _CACHES[path] = JudgeCache(path)
        targets = CaseTargets(work.target, work.dataset, saver)
        ready = _READY[key] = _Resources(targets, EvaluatorResolver(work.dataset), cache)
        return ready
