"""``sweep_threads``: score the threads already in a checkpointer or on a LangGraph
Server, incrementally.

The driver lists threads page by page (:mod:`lg_eval.sweeps._listing`), keeps those
that pass the sample and have changed since the sweep last scored them, cuts them
into partitions and hands those to an executor; each partition's results come back
to the driver, which alone writes them to the results store (the threads' state rows and
results in one transaction per partition). A run is a sweep (``RunInfo.dataset =
"sweep:<name>"``, a case per thread, ``case_id = thread_id``); the same ``run_id`` again
resumes it. With ``server=`` the threads come from a LangGraph Server
(:mod:`lg_eval.sweeps._server`); the rest is the same.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import ExitStack
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Unpack, cast

from langgraph.checkpoint.memory import InMemorySaver
from pydantic import SkipValidation
from pydantic_core import to_jsonable_python

from lg_eval._arguments import validated
from lg_eval._heap import frozen_heap
from lg_eval._urls import redact_url
from lg_eval.errors import InvalidOptionError, ServerError
from lg_eval.evaluators._registry import is_builtin
from lg_eval.executors import Executor, LocalExecutor, get_executor
from lg_eval.experiments import (
    DEFAULT_CACHE,
    ExperimentRun,
    Lease,
    Redactor,
    ResultStore,
    RunInfo,
    RunLifecycle,
    judge_services,
    new_run_id,
    open_store,
    redacted,
    services_record,
)
from lg_eval.judges import RateLimiter, RateLimits
from lg_eval.play import open_checkpointer, resolve_target
from lg_eval.reports import ResultTally, build_report, stream_report
from lg_eval.server import ServerConnection
from lg_eval.sweeps._listing import ThreadHead, in_sample, list_threads, saver_kind
from lg_eval.sweeps._options import SweepOptions as SweepOptions
from lg_eval.sweeps._options import SweepProgress as SweepProgress
from lg_eval.sweeps._result import SweepResult as SweepResult
from lg_eval.sweeps._result import worst_threads
from lg_eval.sweeps._server import ServerPartitionScorer, cut_off, server_heads
from lg_eval.sweeps._state import SweepState
from lg_eval.sweeps._worker import PartitionScorer, refuse_reference_needers, resolve_evaluators


@validated
def sweep_threads(
    graph: Any = None,
    checkpointer: Any = None,
    *,
    heads: SkipValidation[Iterable[list[ThreadHead]] | None] = None,
    **options: Unpack[SweepOptions],
) -> SweepResult:
    """Score the threads of ``checkpointer`` that match the filters and changed since the
    last sweep named ``name``.

    ``graph``: a compiled graph, builder, factory or ``"module:attr"`` (optional with
    ``server``: the graph the assistant serves, to tell its static breakpoints);
    ``checkpointer``: a SqliteSaver / PostgresSaver or a ``sqlite:///`` / ``postgresql://``
    URL (``None``: the graph's own). ``options``: :class:`SweepOptions` (filters, sample,
    evaluators, store, executor, judge limits, ...), each checked before a thread is listed
    (:class:`~lg_eval.errors.InvalidOptionError` naming it). Raises
    :class:`~lg_eval.sweeps.SweepError` for a saver that cannot list threads.

    The result's memory does not grow with the number of threads: its report (counts,
    per-evaluator aggregates, distributions, the trend over the ``history`` latest sweeps
    of the same name) is computed from the store a page at a time, it keeps the ``worst``
    threads with their checkpoint ids, and it reads the results only when asked
    (:meth:`SweepResult.results`; ``.run`` loads them all).

    With ``server`` the threads are listed by the server's threads search, filtered there
    by ``assistant_id``, ``status`` and ``metadata``. A server that stops answering raises
    :class:`~lg_eval.errors.ServerError`; the threads already stored stay scored, and the
    next sweep (or the same ``run_id``) scores the rest.

    ``heads``: pages of ``(thread_id, newest checkpoint id)`` to consider instead of
    listing the threads (:class:`~lg_eval.sweeps.Watch` passes those it saw change and
    settle); the sample, the incremental state and ``limit`` still apply.
    """
    return swept(graph, checkpointer, options, heads)


def swept(
    graph: Any,
    checkpointer: Any,
    options: SweepOptions,
    heads: Iterable[list[ThreadHead]] | None = None,
) -> SweepResult:
    """:func:`sweep_threads` with ``options`` already checked (every default filled in)."""
    evaluators, thresholds = options["evaluators"], options.get("thresholds") or {}
    sample, limit, incremental = options.get("sample"), options.get("limit"), options["incremental"]
    metadata, server = options.get("metadata"), options.get("server")
    assistant_id, status = options.get("assistant_id"), options.get("status")
    # the boundary made these of what was given: times, limits, the limiter, the redactor
    since_at = cast(datetime | None, options.get("since"))
    until_at = cast(datetime | None, options.get("until"))
    limits = cast(RateLimits | None, options.get("judge_limits"))
    budget = cast(RateLimiter | None, options.get("judge_budget"))
    redactor = cast(Redactor | None, options.get("redact"))
    store, progress, page_size = options.get("store"), options.get("progress"), options["page_size"]
    runner = get_executor(options["executor"], address=options.get("ray_address"))
    refuse_reference_needers(evaluators)
    evaluator_names = [n for n, _ in resolve_evaluators(evaluators)]  # fail early on bad names
    remote = not is_local(runner)
    if budget is not None and remote:
        raise InvalidOptionError(
            "judge_budget= holds the judge requests of this process: it needs "
            "executor='local' (on Ray, judge_limits= holds them across workers)."
        )
    connection = server_of(server, remote, checkpointer)
    label = options.get("name") or sweep_label(graph, connection, assistant_id)
    sweep = f"sweep:{label}"
    with ExitStack() as stack:
        if connection is None:
            saver, bound = open_saver(stack, graph, checkpointer)
            if saver_kind(saver) == "sqlite" and _inline(options["executor"], evaluators):
                runner = LocalExecutor(1)
        else:
            # the graph is only read (its static breakpoints): bound to a throwaway saver
            saver, bound = None, None if graph is None else resolve_target(graph, InMemorySaver())
        results = (
            store if isinstance(store, ResultStore) else stack.enter_context(open_store(store))
        )
        state = SweepState(results)
        if remote and not (isinstance(graph, str) and isinstance(checkpointer, str)):
            raise InvalidOptionError(
                "executor='ray' runs on other processes: pass graph as 'module:attr' and "
                "checkpointer as a URL (sqlite:///... or postgresql://...)."
            )
        where = {} if connection is None else {
            "server": connection.shown, "assistant_id": assistant_id, "status": status
        }  # fmt: skip
        config = {
            **where,
            "since": since_at.isoformat() if since_at else None,
            "until": until_at.isoformat() if until_at else None,
            "metadata": dict(metadata or {}),
            "sample": sample,
            "limit": limit,
            "evaluators": [  # with their options: another option is another sweep
                to_jsonable_python(item, fallback=repr) if isinstance(item, Mapping) else name
                for item, name in zip(evaluators, evaluator_names, strict=True)
            ],
            "incremental": incremental,
            "thresholds": dict(thresholds),
        }
        digest = hashlib.sha256(json.dumps(config, sort_keys=True, default=str).encode())
        run_id = options.get("run_id") or new_run_id("sweep")
        lease = Lease.acquire(results, run_id)  # one live sweep per run id, from the listing on
        stack.callback(lease.release)
        heads = (
            iter(heads)
            if heads is not None
            else list_threads(saver, since=since_at, until=until_at, metadata=metadata,
                              page_size=page_size)
            if connection is None
            else server_heads(connection, assistant_id=assistant_id, status=status,
                              metadata=metadata, since=since_at, until=until_at,
                              page_size=page_size)
        )  # fmt: skip
        matched = [0]  # threads listed that pass the filters and the sample
        pending = _pending(
            state, sweep, run_id, heads, sample=sample, limit=limit, incremental=incremental,
            matched=matched,
        )  # fmt: skip
        first = next(pending, None)  # read before the run is stored: none new, none stored
        if first is not None:
            pending = itertools.chain([first], pending)
        info = RunInfo(
            run_id=run_id,
            dataset=sweep,
            dataset_hash=digest.hexdigest(),
            target=graph if isinstance(graph, str) else (assistant_id or label),
            checkpointer=connection.shown
            if connection is not None
            else redact_url(checkpointer)
            if isinstance(checkpointer, str)
            else (type(saver).__name__),
            config={
                **config,
                "executor": type(runner).__name__,
                "judge_limits": None if limits is None else limits.model_dump(),
                "judge_budget": None if budget is None else budget.limits.requests_per_minute,
            },
            started_at=datetime.now(UTC),
        )
        if first is None and results.run_info(run_id) is None:
            return _nothing_new(info, store, matched[0])
        run = RunLifecycle.begin(results, info, None, lease)
        info = run.info
        services = stack.enter_context(
            judge_services(runner, limits, _cache_path(options["judge_cache"]), budget=budget)
        )
        scorer = PartitionScorer(
            run_id=info.run_id,
            graph=graph if remote else bound,
            evaluators=[
                item if isinstance(item, Mapping) else name  # names (and options) ship
                for item, name in zip(evaluators, evaluator_names, strict=True)
            ]
            if remote
            else list(evaluators),
            checkpointer=checkpointer if remote else None,
            thresholds=dict(thresholds),
            services=services,
        )
        score: Callable[[list[tuple[str, str]]], Any] = (
            scorer if connection is None else ServerPartitionScorer(connection, scorer)
        )
        ordinal = state.max_ordinal(info.run_id) + 1
        scored = passed = 0
        # what the report reads inside each result, counted as it is stored (a resumed
        # run's earlier results were not: its report reads them from the store)
        tally = ResultTally() if ordinal == 0 else None

        def learned() -> dict[str, Any]:
            return {} if services is None else services_record(services.stats())

        # finished or interrupted, the record counts the threads scored (a store lost
        # mid-sweep names the run to resume)
        # what lives for the whole sweep (graph, store, listing) is left out of full collections
        with run.recording(learned, lambda: {"cases": scored}), frozen_heap():
            try:
                chunks = _chunks(pending, options["partition_size"])
                for pairs in runner.map_partitions(score, chunks):
                    part_results = [redacted(r, redactor) for _, r in pairs]
                    marked = state.marks(sweep, info.run_id, [(r.case_id, c) for c, r in pairs])
                    results.write(  # the marks and the results: one transaction
                        [(ordinal + i, r) for i, r in enumerate(part_results)], beside=[marked]
                    )
                    ordinal += len(part_results)
                    if tally is not None:
                        tally.add(part_results)
                    scored += len(part_results)
                    passed += sum(r.status == "passed" for r in part_results)
                    if progress is not None:
                        progress(scored, passed, scored - passed)
            except ServerError as exc:  # the server went away mid-sweep: what is stored stays
                raise cut_off(exc, info.run_id, scored) from exc
        report = stream_report(
            results,
            info.run_id,
            worst=options["worst"],
            history=options["history"],
            tally=tally,
        )
        marks = state.checkpoints_for(info.run_id, [case.result.case_id for case in report.cases])
        return SweepResult(
            info=report.info,
            report=report,
            worst=worst_threads(report, marks),
            store=store,
        )


def _nothing_new(
    info: RunInfo, store: ResultStore | str | Path | None, matched: int
) -> SweepResult:
    """The result of a sweep that found no thread to score (``matched`` threads passed its
    filters, none of them new or changed): nothing is stored, so incremental sweeps that
    find nothing new do not pile up empty runs."""
    done = info.model_copy(update={"status": "finished", "finished_at": datetime.now(UTC)})
    report = build_report(ExperimentRun(info=done, results=[]))
    return SweepResult(
        info=done, report=report, worst=[], store=store, stored=False, matched=matched
    )


def _pending(
    state: SweepState,
    sweep: str,
    run_id: str,
    pages: Iterator[list[ThreadHead]],
    *,
    sample: float | None,
    limit: int | None,
    incremental: bool,
    matched: list[int],
) -> Iterator[tuple[str, str]]:
    """The threads to score, page by page: sampled, changed since scored, not yet in this
    run; ``matched[0]`` counts the threads listed that pass the sample."""
    left = limit
    for page in pages:
        if left is not None and left <= 0:
            return
        heads = [h for h in page if in_sample(h.thread_id, sample)]
        matched[0] += len(heads)
        ids = [h.thread_id for h in heads]
        done = state.done_in_run(run_id, ids)
        scored = state.scored(sweep, ids) if incremental else {}
        for head in heads:
            if head.thread_id in done:
                continue
            seen = scored.get(head.thread_id)
            if seen is not None and seen >= head.checkpoint_id:
                continue
            yield head.thread_id, head.checkpoint_id
            if left is not None:
                left -= 1
                if left <= 0:
                    return


def _chunks(items: Iterator[tuple[str, str]], size: int) -> Iterator[list[tuple[str, str]]]:
    chunk: list[tuple[str, str]] = []
    for item in items:
        chunk.append(item)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _cache_path(option: bool | str | Path) -> Path | None:
    if option is False:
        return None
    return (DEFAULT_CACHE if option is True else Path(option)).resolve()


def _inline(executor: str | Executor | None, evaluators: Iterable[Any]) -> bool:
    """Whether a sweep given ``executor`` scores its partitions one after another in this
    thread: the default local executor over a SQLite file with only lg_eval's own
    evaluators, where nothing waits (no network, no judge, no user code) and a second
    thread would only take turns with the first for the GIL and the file's connection."""
    if executor not in (None, "local"):
        return False
    names = (item.get("name") if isinstance(item, Mapping) else item for item in evaluators)
    return all(isinstance(name, str) and is_builtin(name) for name in names)


def is_local(executor: Executor) -> bool:
    """Whether ``executor`` runs partitions in this process (live objects may go to it)."""
    from lg_eval.executors import LocalExecutor

    return isinstance(executor, LocalExecutor)


def open_saver(stack: ExitStack, graph: Any, checkpointer: Any) -> tuple[Any, Any]:
    """``(saver, graph bound to it)``."""
    saver: Any
    if isinstance(checkpointer, str):
        saver = stack.enter_context(open_checkpointer(checkpointer))
    elif checkpointer is None:
        saver = getattr(graph, "checkpointer", None)
        if saver is None:
            raise InvalidOptionError(
                "No checkpointer: pass checkpointer= (a saver or a URL), or a graph compiled "
                "with one."
            )
    else:
        saver = checkpointer
    return saver, resolve_target(graph, saver)


def server_of(
    server: ServerConnection | str | None, remote: bool, checkpointer: Any
) -> ServerConnection | None:
    """The server to sweep (None: a checkpointer); refuses what cannot go with it."""
    if server is None:
        return None
    if checkpointer is not None:
        raise InvalidOptionError(
            "Pass either checkpointer= (threads in a checkpointer) or server= (threads on a "
            "LangGraph Server), not both."
        )
    if remote:
        raise InvalidOptionError(
            "A server sweep runs on the local executor (executor='local'); its workers "
            "read the server over HTTP."
        )
    return server if isinstance(server, ServerConnection) else ServerConnection(server)


def sweep_label(
    graph: Any, server: ServerConnection | None = None, assistant: str | None = None
) -> str:
    """The sweep's default name: the graph's reference or name, else the assistant or the
    server's URL (no password)."""
    if isinstance(graph, str):
        return graph
    if server is not None and (assistant or graph is None):
        return assistant or redact_url(server.url)
    return str(getattr(graph, "name", None) or type(graph).__name__)
