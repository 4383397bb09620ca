"""Run a graph over a dataset: every case × repetition played, scored and stored as it finishes.

One orchestrator (:func:`_experiment`, a coroutine) holds every decision of a run in
this process: the concurrency bound, timeouts, the judge cache and limiter, whether a
scoring process scores the cases. What every way of running shares — the run's record,
what is left to run (a resumed run skips what the store has), the tally — is
:class:`~lg_eval.experiments.lifecycle.RunLifecycle`; how cases get done is
:mod:`lg_eval.experiments.workers`. The two entry points differ in one thing only, how a
case's effect core is driven: :func:`arun_experiment` awaits it (``ainvoke`` on an async
checkpointer), :func:`run_experiment` drives it with blocking calls in a thread per case
(``invoke`` on a sync checkpointer) under ``asyncio.run``; with the scoring process, each
worker's cases run on one thread of their own. A case that runs past ``timeout`` is
cancelled (async) or abandoned (sync: its thread's late result is dropped); either way
only the ``timeout`` result is ever stored.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Mapping
from contextlib import AsyncExitStack, ExitStack, closing, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langgraph.checkpoint.base import BaseCheckpointSaver

from lg_eval._effects import adrive, drive
from lg_eval._heap import frozen_heap
from lg_eval.experiments._case import CaseContext, plan_for
from lg_eval.experiments._scoring_choice import Scoring, scoring_spec
from lg_eval.experiments._scoring_process import ScoringProcess
from lg_eval.experiments._targets import CaseTargets
from lg_eval.experiments._upstream import (
    Dataset,
    Reviewer,
    aopen_checkpointer,
    load_dataset,
    open_checkpointer,
)
from lg_eval.experiments._writer import BatchWriter
from lg_eval.experiments.case_threads import CaseThreads
from lg_eval.experiments.checks import check_evaluators
from lg_eval.experiments.judge_cache import DEFAULT_CACHE, JudgeCache
from lg_eval.experiments.lease import new_token
from lg_eval.experiments.lifecycle import RunLifecycle, new_run_id, run_info
from lg_eval.experiments.options import Progress, RunOptions
from lg_eval.experiments.redaction import RedactOption, make_redactor
from lg_eval.experiments.results import ExperimentRun
from lg_eval.experiments.scoring import EvaluatorResolver
from lg_eval.experiments.store import ResultStore, open_store
from lg_eval.experiments.workers import handed, inline, one_at_a_time, run_all, stored
from lg_eval.judges import RateLimiter, RateLimits
from lg_eval.offline import offline

if TYPE_CHECKING:
    from lg_eval.executors import Executor


def run_experiment(
    target: Any,
    dataset: Dataset | str | Path,
    *,
    checkpointer: BaseCheckpointSaver[Any] | str | None = None,
    store: ResultStore | str | Path | None = None,
    run_id: str | None = None,
    concurrency: int = 4,
    repetitions: int = 1,
    timeout: float | None = None,
    retries: int = 1,
    thresholds: Mapping[str, float] | None = None,
    fail_under: float | None = None,
    require_verdict: bool = False,
    judge_cache: bool | str | Path | JudgeCache = True,
    progress: Progress | None = None,
    redact: RedactOption = None,
    langsmith: bool = False,
    reviewer: Reviewer | None = None,
    judge_limits: RateLimits | Mapping[str, Any] | None = None,
    executor: str | Executor | None = "local",
    ray_address: str | None = None,
    partition_size: int | None = None,
    scoring: Scoring = "auto",
) -> ExperimentRun:
    """Play every case of ``dataset`` on ``target``, score it, store it; return the run.

    Args:
        target: a compiled graph, a ``StateGraph`` builder, a factory
            ``f(checkpointer=saver)`` or ``"module:attr"``; None uses the dataset's ``graph``.
        dataset: a :class:`~lg_eval.datasets.Dataset` or the path of a dataset file.
        checkpointer: a sync saver, or a URL (``sqlite:///...``, ``postgresql://...``);
            default the embedded SQLite file ``.lg_eval/checkpoints.sqlite``.
        store: a :class:`ResultStore` or its URL; default ``.lg_eval/results.sqlite``.
        run_id: names the run; running again with the same id resumes it (cases already
            stored are not run again). Default: ``<dataset>-<UTC time>-<random>``.
        concurrency: cases played at once (with the scoring process, each worker also has
            at most one case being scored meanwhile).
        repetitions: runs of each case (see :mod:`lg_eval.experiments.aggregate`).
        timeout: seconds per case (all its attempts) before it is cancelled (``timeout``).
        retries: extra attempts after an infrastructure error (never after a low score).
        thresholds: ``{feedback key or evaluator name: minimum}`` for numeric scores
            (default 1.0); a bool score passes when True.
        fail_under: the pass rate below which :attr:`ExperimentRun.gate_failed` is True.
        require_verdict: fail a case when any of its evaluators gives no verdict (a
            ``None`` score). By default a no-verdict is neither pass nor fail: it never
            fails a case that has a passing verdict.
        judge_cache: cache judge answers (True: ``.lg_eval/judge_cache.sqlite``; a path;
            a :class:`JudgeCache`; False: call the models every time).
        progress: ``progress(done, total, passed, failed)`` after each case.
        redact: a ``str -> str`` function or regex patterns, applied to every string
            taken from a thread before it is stored.
        reviewer: answers turns written ``resume: {reviewer: true}``, e.g. a
            :class:`~lg_eval.play.SimulatedReviewer` (a chat model playing a persona).
        langsmith: let the graph's and the judges' runs be traced to LangSmith as the
            environment says; by default the run sends nothing (:func:`lg_eval.langsmith.offline`).
        judge_limits: the judge provider's limits (:class:`~lg_eval.judges.RateLimits` or
            its dict: requests and tokens per minute, calls in flight), held for the whole
            run, across every worker with ``executor="ray"``; cache hits spend none.
        executor: ``"local"`` (this process), ``"ray"`` or an Executor object: cases cut into
            partitions of ``partition_size`` played by workers, stored here
            (:mod:`lg_eval.experiments.distributed`; target and checkpointer as names).
        ray_address: with ``executor="ray"``, the cluster (default a local Ray).
        partition_size: with another executor, cases per task (default ``2 * concurrency``).
        scoring: where cases are read back, scored and stored: ``"process"`` in a second
            process while this one plays the next cases, ``"inline"`` on the thread that
            played the case, ``"auto"`` (default) the process whenever it changes nothing
            but speed (named checkpointer and store, built-in evaluators, no ``timeout``,
            Linux, no other Python thread, 64 cases or more), else inline.

    Raises:
        InvalidOptionError: a bad option, no target, or an evaluator that cannot be built.
        StoreError: the store cannot be opened, or ``run_id`` belongs to another dataset.
    """
    options = RunOptions(
        target=target, dataset=dataset, checkpointer=checkpointer, store=store, run_id=run_id,
        concurrency=concurrency, repetitions=repetitions, timeout=timeout, retries=retries,
        thresholds=thresholds, fail_under=fail_under, require_verdict=require_verdict,
        judge_cache=judge_cache,
        progress=progress, redact=redact, langsmith=langsmith, reviewer=reviewer,
        judge_limits=judge_limits, scoring=scoring,
    )  # fmt: skip
    if executor not in (None, "local"):
        from lg_eval.experiments.distributed import run_distributed

        return run_distributed(
            options, executor, ray_address=ray_address, partition_size=partition_size
        )
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_blocking(options)).run
    # Called from inside an event loop (a notebook): run on a loop of our own.
    box: list[ExperimentRun | BaseException] = []

    def main() -> None:
        try:
            box.append(asyncio.run(_blocking(options)).run)
        except BaseException as exc:
            box.append(exc)

    worker = threading.Thread(target=main, name="lg_eval-experiment")
    worker.start()
    worker.join()
    if isinstance(box[0], BaseException):
        raise box[0]
    return box[0]


async def arun_experiment(
    target: Any,
    dataset: Dataset | str | Path,
    *,
    checkpointer: BaseCheckpointSaver[Any] | str | None = None,
    store: ResultStore | str | Path | None = None,
    run_id: str | None = None,
    concurrency: int = 4,
    repetitions: int = 1,
    timeout: float | None = None,
    retries: int = 1,
    thresholds: Mapping[str, float] | None = None,
    fail_under: float | None = None,
    require_verdict: bool = False,
    judge_cache: bool | str | Path | JudgeCache = True,
    progress: Progress | None = None,
    redact: RedactOption = None,
    langsmith: bool = False,
    reviewer: Reviewer | None = None,
    judge_limits: RateLimits | Mapping[str, Any] | None = None,
    scoring: Scoring = "auto",
) -> ExperimentRun:
    """:func:`run_experiment`, awaited: the graph is run with ``ainvoke`` on an async
    checkpointer (a saver you pass must be async-capable), evaluators with ``aevaluate``
    (the scoring process, when the run has one, reads and scores with blocking calls)."""
    options = RunOptions(
        target=target, dataset=dataset, checkpointer=checkpointer, store=store, run_id=run_id,
        concurrency=concurrency, repetitions=repetitions, timeout=timeout, retries=retries,
        thresholds=thresholds, fail_under=fail_under, require_verdict=require_verdict,
        judge_cache=judge_cache,
        progress=progress, redact=redact, langsmith=langsmith, reviewer=reviewer,
        judge_limits=judge_limits, scoring=scoring,
    )  # fmt: skip
    return await _experiment(options, blocking=False)


# --------------------------------------------------------------------------- the orchestrator


class _Outcome:
    """The run, wrapped so the main task's result has a short ``repr``: at exit
    ``asyncio.run`` (Python 3.11) formats the task, result included, into an error
    message it discards; a run's repr costs about 0.07 ms per result."""

    __slots__ = ("run",)

    def __init__(self, run: ExperimentRun) -> None:
        self.run = run


async def _blocking(options: RunOptions) -> _Outcome:
    return _Outcome(await _experiment(options, blocking=True))


async def _experiment(options: RunOptions, *, blocking: bool) -> ExperimentRun:
    with nullcontext() if options.langsmith else offline():
        return await _orchestrate(options, blocking=blocking)


async def _orchestrate(options: RunOptions, *, blocking: bool) -> ExperimentRun:
    dataset = options.dataset
    if not isinstance(dataset, Dataset):
        dataset = load_dataset(dataset)
    run_id = options.run_id or new_run_id(dataset.name)
    redactor = make_redactor(options.redact)
    # A typo in a target or an evaluator fails here, before a file is opened or a run stored.
    resolver = EvaluatorResolver(dataset)
    check_evaluators(dataset, resolver)
    CaseTargets(options.target, dataset, None)
    token = new_token()  # the lease's, handed to the scoring process before it forks
    async with AsyncExitStack() as stack:
        spec = scoring_spec(
            options.scoring, run_id=run_id, target=options.target, dataset=dataset,
            checkpointer=options.checkpointer, store=options.store, timeout=options.timeout,
            repetitions=options.repetitions, thresholds=options.thresholds,
            require_verdict=options.require_verdict, retries=options.retries, redactor=redactor,
            lease_token=token,
        )  # fmt: skip
        # Forked before this process opens a connection, so it shares none of them.
        scorer = None if spec is None else ScoringProcess(spec, options.concurrency)
        if scorer is not None:
            stack.callback(scorer.close)  # if setup fails; the run closes it before its record
        store = options.store
        if not isinstance(store, ResultStore):
            store = stack.enter_context(closing(open_store(store)))
        saver = options.checkpointer
        if not isinstance(saver, BaseCheckpointSaver):
            if blocking:
                saver = stack.enter_context(open_checkpointer(saver))
            else:
                saver = await stack.enter_async_context(aopen_checkpointer(saver))
        targets = CaseTargets(options.target, dataset, saver)
        if blocking:  # this loop is the run's own: nothing else waits on it yet
            drive(targets.ready())
        else:
            await adrive(targets.ready())
        cache = _judge_cache(options.judge_cache)
        if cache is not None and not isinstance(options.judge_cache, JudgeCache):
            stack.callback(cache.close)
        limits = options.limits
        limiter = None if limits is None else RateLimiter(limits)
        scoring = "inline" if scorer is None else "process"
        run = RunLifecycle.begin(
            store,
            run_info(options, dataset, run_id, targets.describe(), store, scoring),
            options.progress,
            token=token,
        )
        stack.callback(run.release)  # if setup fails before the run is recorded
        plans = [
            plan_for(resolver, ordinal, dataset.cases[ordinal], repetition)
            for ordinal, repetition in run.left(dataset, options.repetitions)
        ]
        context = CaseContext.of_run(
            options,
            run_id=run_id,
            targets=targets,
            saver=saver,
            redactor=redactor,
            resume_threads=run.resumed,
        )
        threads = CaseThreads(asyncio.get_running_loop()) if blocking else None
        if threads is not None:
            stack.callback(threads.close)
        stack.enter_context(frozen_heap())  # the setup above is alive for the whole run
        writer = None  # the scoring process, if any, stores its own results
        if scorer is None:
            writer = BatchWriter(store)
            worker = one_at_a_time(
                inline(context, options.timeout, threads, stored(writer, run.tally))
            )
        else:
            worker = handed(context, scorer, threads, run.tally)

        def learned() -> dict[str, Any]:
            config: dict[str, Any] = {}
            if cache is not None:
                config["judge_cache"] = {"enabled": True, **cache.stats.as_dict()}
            if limiter is not None:
                config["judge_limiter"] = limiter.stats().as_dict()
            return config

        with run.recording(learned):
            try:
                with ExitStack() as judges:  # the limiter first: cache hits spend no budget
                    if limiter is not None:
                        judges.enter_context(limiter.active())
                    if cache is not None:
                        judges.enter_context(cache.active())
                    await run_all(plans, worker, options.concurrency)
            finally:
                if writer is not None:
                    writer.close()
                if scorer is not None:
                    scorer.close()  # every result it was sent is committed when it exits
        return run.result()


def _judge_cache(option: bool | str | Path | JudgeCache) -> JudgeCache | None:
    if isinstance(option, JudgeCache):
        return option
    if option is False:
        return None
    return JudgeCache(DEFAULT_CACHE if option is True else Path(option))


__all__ = ["Progress", "arun_experiment", "run_experiment"]
