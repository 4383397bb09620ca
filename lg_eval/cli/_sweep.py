"""``lg-eval sweep``: score the threads already in a checkpointer or on a LangGraph Server,
only those that changed."""

from __future__ import annotations

from functools import partial
from typing import Annotated

import typer

from lg_eval.cli import _options as shared
from lg_eval.cli import _watch as watching
from lg_eval.cli._common import (
    CASES_ERRORED,
    PASSED,
    announce_new_folders,
    done,
    fail,
    input_errors,
    quiet_warnings,
    say,
    stdout,
)
from lg_eval.cli._progress import (
    Update,
    build_executor,
    interruptible,
    progress_display,
    stored_in,
    throughput_of,
)
from lg_eval.cli._read_only import existing_checkpointer
from lg_eval.cli._server import ApiKey, Header, server_connection
from lg_eval.experiments import new_run_id
from lg_eval.reports import render_terminal
from lg_eval.server import STATUSES
from lg_eval.sweeps import SweepOptions, sweep_threads, write_sweep_html, write_sweep_json
from lg_eval.sweeps._sweep import SweepProgress


def sweep(
    graph: Annotated[
        str | None,
        typer.Option(
            help="The graph as module:attr (graph, builder, factory); optional with --server."
        ),
    ] = None,
    checkpointer: Annotated[
        str | None,
        typer.Option(help="Checkpointer URL holding the threads (sqlite:///, postgresql://)."),
    ] = None,
    server: Annotated[
        str | None,
        typer.Option(help="Sweep the threads of the LangGraph Server at this URL instead."),
    ] = None,
    assistant: Annotated[
        str | None,
        typer.Option(help="With --server: only threads of this assistant (UUID or graph id)."),
    ] = None,
    status: Annotated[
        str | None,
        typer.Option(
            metavar="STATUS",
            help="With --server: only threads in this status (idle, busy, interrupted, error).",
        ),
    ] = None,
    api_key: ApiKey = None,
    header: Header = None,
    since: shared.Since = None,
    until: shared.Until = None,
    metadata: shared.Metadata = None,
    sample: Annotated[
        float | None,
        typer.Option(min=0, max=1, help="Keep this fraction (by thread id hash, stable)."),
    ] = None,
    limit: Annotated[int | None, typer.Option(min=0, help="Score at most N threads.")] = None,
    evaluator: shared.Evaluators = None,
    store: shared.Store = None,
    name: Annotated[
        str | None,
        typer.Option(
            help="The sweep's name (its incremental state); default --graph, or with --server "
            "the --assistant, else the URL."
        ),
    ] = None,
    run_id: shared.RunId = None,
    full: Annotated[
        bool, typer.Option("--full", help="Score every matching thread, changed or not.")
    ] = False,
    executor: shared.ExecutorName = "local",
    ray_address: shared.RayAddress = None,
    partition_size: Annotated[int, typer.Option(min=1, help="Threads per task.")] = 50,
    json_file: shared.JsonReport = None,
    html: shared.HtmlReport = None,
    quiet: shared.Quiet = False,
    redact_pattern: shared.RedactPattern = None,
    no_cache: shared.NoCache = False,
    judge_rpm: shared.JudgeRpm = None,
    judge_tpm: shared.JudgeTpm = None,
    judge_concurrency: shared.JudgeInFlight = None,
    judge_budget: Annotated[
        int | None,
        typer.Option(
            min=1, metavar="N", help="At most N judge requests in any rolling hour (local)."
        ),
    ] = None,
    watch: Annotated[
        bool,
        typer.Option(
            "--watch",
            help="Keep sweeping: score each thread when its run stops (finishes, waits at an "
            "interrupt, raises) and again when it changes, until Ctrl-C or SIGTERM.",
        ),
    ] = False,
    every: Annotated[
        float, typer.Option(min=0, metavar="SECONDS", help="With --watch: seconds between looks.")
    ] = 30.0,
    idle: Annotated[
        float,
        typer.Option(
            min=0,
            metavar="SECONDS",
            help="With --watch: score a thread still running after this many idle seconds.",
        ),
    ] = 300.0,
    alert: Annotated[
        list[str] | None,
        typer.Option(
            metavar="KEY<THRESHOLD",
            help="With --watch: KEY<THRESHOLD (pass rate; mean:KEY<THRESHOLD for the mean) over "
            "--alert-window calls --alert-hook with the failing threads (repeatable).",
        ),
    ] = None,
    alert_window: Annotated[
        str,
        typer.Option(metavar="DURATION", help="With --watch: the alerts' window (30m, 1h, 1d)."),
    ] = "1h",
    alert_hook: Annotated[
        str | None,
        typer.Option(
            metavar="COMMAND|URL",
            help="With --watch: a command (gets the alert as JSON on stdin) or an http(s) URL "
            "(POSTed the JSON).",
        ),
    ] = None,
) -> None:
    """Sweep the threads of a checkpointer or a LangGraph Server: list them by time and
    metadata, extract, score and store those that changed since the last sweep, and report
    like an experiment.

    Give --checkpointer with --graph, or --server (with --metadata matching the threads'
    metadata there). Exit code 0 when the sweep ran (whatever the scores), 2 for bad
    input (an unknown evaluator, one that needs a reference, a checkpointer that cannot
    list threads, a store that cannot be opened) or a server that refused the key or
    stopped answering (the threads stored so far stay scored; run again to score the
    rest), 3 when a thread could not be scored (an evaluator raised on it). A sweep that
    finds nothing new stores no run.

    With --watch it keeps going: each look stores the threads that stopped since the last
    as one run of the sweep (a line each on stderr), and --alert calls --alert-hook when a
    key's pass rate falls below its threshold. Ctrl-C or SIGTERM stops it with exit code
    130; the same command goes on from there.
    """
    if quiet:
        quiet_warnings()
    pairs = shared.metadata_filter(metadata)
    since_at, until_at = shared.time_bound("--since", since), shared.time_bound("--until", until)
    if (checkpointer is None) == (server is None):
        fail("give --checkpointer (with --graph) or --server, one of the two")
    if server is None and graph is None:
        fail("--checkpointer needs --graph (the graph as module:attr)")
    if server is None and (assistant or status or api_key or header):
        fail("--assistant, --status, --api-key and --header go with --server")
    if status is not None and status not in STATUSES:
        raise typer.BadParameter(f"use one of {', '.join(STATUSES)}", param_hint="--status")
    if watch and (limit is not None or full or run_id or json_file or html):
        fail("--watch stores a run per look: --limit, --full, --run-id, --json and --html go "
             "with a single sweep")  # fmt: skip
    if not watch and (alert or alert_hook):
        fail("--alert and --alert-hook go with --watch")
    with input_errors():
        found = watching.alerts(alert, alert_window, alert_hook) if watch else []
    if checkpointer is not None:
        existing_checkpointer(checkpointer)  # the threads are only read: create no file
    with input_errors():
        connection = None if server is None else server_connection(server, api_key, header)
        chosen = build_executor(executor, ray_address)
        announce_new_folders(results_store=store)
        options = SweepOptions(
            server=connection, assistant_id=assistant, status=status, since=since_at,
            until=until_at, metadata=pairs, sample=sample,
            evaluators=shared.evaluator_specs(evaluator), store=store, executor=chosen,
            name=name, partition_size=partition_size, redact=redact_pattern or None,
            judge_limits=shared.judge_limits(judge_rpm, judge_tpm, judge_concurrency),
            judge_cache=not no_cache, judge_budget=judge_budget,
        )  # fmt: skip
    if watch:
        watching.watch(graph, checkpointer, options, idle, found, every, quiet)
    with input_errors():
        run_id = run_id or new_run_id("sweep")  # named here, so a Ctrl-C can name it
        stored = partial(stored_in, store, run_id, "threads scored and", of_planned=False)
        with (
            interruptible(stored, run_id),
            progress_display(quiet, "threads", throughput_of(chosen)) as update,
        ):
            progress = None if update is None else _scored(update)
            one = SweepOptions(limit=limit, run_id=run_id, incremental=not full, progress=progress)
            result = sweep_threads(graph, checkpointer, **(options | one))
    report = result.report  # bounded: aggregates, distributions, worst threads, trend
    if not result.stored:
        name = result.info.dataset.removeprefix("sweep:")
        done(f"sweep {name}: {_nothing_to_score(result.matched, pairs, since, until, sample)}")
        raise typer.Exit(PASSED)
    if not quiet:
        done(f"sweep {result.info.run_id}: {result.scored} threads scored")
        render_terminal(report, stdout)
    with input_errors():  # a file that cannot be written: exit 4
        if html is not None:
            write_sweep_html(result, html)
            done(f"wrote {html}")
        if json_file is not None:
            write_sweep_json(result, json_file)
            done(f"wrote {json_file}")
    counts = report.summary.counts
    errored = counts.error + counts.timeout
    if errored:
        say(f"{errored} of {counts.total} threads errored; see the report's errors")
    raise typer.Exit(CASES_ERRORED if errored else PASSED)


def _nothing_to_score(
    matched: int | None,
    metadata: object,
    since: str | None,
    until: str | None,
    sample: float | None,
) -> str:
    """Why a sweep stored no run: no thread matched its filters, or none that did changed."""
    if matched:
        return (
            f"none of the {matched} threads that matched is new or changed since the last "
            "sweep; no run stored (--full scores them again)"
        )
    given = [
        option
        for option, value in (
            ("--metadata", metadata), ("--since", since), ("--until", until), ("--sample", sample)
        )
        if value is not None
    ]  # fmt: skip
    filters = f" ({', '.join(given)})" if given else ""
    return f"no thread matched the filters{filters}; no run stored"


def _scored(update: Update) -> SweepProgress:
    """The sweep's ``progress(scored, passed, failed)`` as a display update (no total)."""

    def progress(scored: int, passed: int, failed: int) -> None:
        update(scored, None, passed, failed)

    return progress
