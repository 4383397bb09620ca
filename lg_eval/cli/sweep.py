"""``lg-eval sweep``: score the threads already in a checkpointer or on a LangGraph Server,
only those that changed."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from lg_eval.cli._common import (
    CASES_ERRORED,
    PASSED,
    JudgeInFlight,
    JudgeRpm,
    JudgeTpm,
    fail,
    input_errors,
    judge_limits,
    parse_pairs,
    say,
    stdout,
)
from lg_eval.cli._progress import Update, build_executor, progress_display, throughput_of
from lg_eval.cli._server import ApiKey, Header, server_connection
from lg_eval.reports import render_terminal
from lg_eval.server import STATUSES
from lg_eval.sweeps import sweep_threads, write_sweep_html, write_sweep_json
from lg_eval.sweeps.sweep import SweepProgress


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
        typer.Option(
            metavar="URL", help="Sweep the threads of the LangGraph Server at this URL instead."
        ),
    ] = None,
    assistant: Annotated[
        str | None,
        typer.Option(
            metavar="ID", help="With --server: only threads of this assistant (UUID or graph id)."
        ),
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
    since: Annotated[
        str | None, typer.Option(help="Newest checkpoint at or after: 24h, 30m, 7d or ISO 8601.")
    ] = None,
    until: Annotated[str | None, typer.Option(help="Newest checkpoint before this time.")] = None,
    metadata: Annotated[
        list[str] | None,
        typer.Option(
            help="KEY=VALUE a checkpoint's metadata has (with --server: the thread's; repeatable)."
        ),
    ] = None,
    sample: Annotated[
        float | None,
        typer.Option(min=0, max=1, help="Keep this fraction (by thread id hash, stable)."),
    ] = None,
    limit: Annotated[int | None, typer.Option(min=0, help="Score at most N threads.")] = None,
    evaluator: Annotated[
        list[str] | None,
        typer.Option(help="A registry name or module:attr (repeatable; default redundancy)."),
    ] = None,
    store: Annotated[
        str | None, typer.Option(help="Results store URL (default .lg_eval/results.sqlite).")
    ] = None,
    name: Annotated[
        str | None,
        typer.Option(
            help="The sweep's name (its incremental state); default --graph, or with --server "
            "the --assistant, else the URL."
        ),
    ] = None,
    run_id: Annotated[
        str | None, typer.Option(help="Name the run; the same id resumes it.")
    ] = None,
    full: Annotated[
        bool, typer.Option("--full", help="Score every matching thread, changed or not.")
    ] = False,
    executor: Annotated[str, typer.Option(help="local or ray.")] = "local",
    ray_address: Annotated[
        str | None, typer.Option(help="With --executor ray: the cluster (default: local Ray).")
    ] = None,
    partition_size: Annotated[int, typer.Option(min=1, help="Threads per task.")] = 50,
    json_file: Annotated[Path | None, typer.Option("--json", help="Write the JSON report.")] = None,
    html: Annotated[Path | None, typer.Option(help="Write the HTML report.")] = None,
    quiet: Annotated[bool, typer.Option(help="No progress and no summary table.")] = False,
    redact_pattern: Annotated[
        list[str] | None,
        typer.Option(help="A regex removed from thread text before it is stored (repeatable)."),
    ] = None,
    no_cache: Annotated[
        bool, typer.Option("--no-cache", help="Call judge models even for cached prompts.")
    ] = False,
    judge_rpm: JudgeRpm = None,
    judge_tpm: JudgeTpm = None,
    judge_concurrency: JudgeInFlight = None,
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
    """
    pairs = parse_pairs(metadata or [], "--metadata", str)
    if executor not in ("local", "ray"):
        raise typer.BadParameter("use local or ray", param_hint="--executor")
    if (checkpointer is None) == (server is None):
        fail("give --checkpointer (with --graph) or --server, one of the two")
    if server is None and graph is None:
        fail("--checkpointer needs --graph (the graph as module:attr)")
    if server is None and (assistant or status or api_key or header):
        fail("--assistant, --status, --api-key and --header go with --server")
    if status is not None and status not in STATUSES:
        raise typer.BadParameter(f"use one of {', '.join(STATUSES)}", param_hint="--status")
    with input_errors():
        connection = None if server is None else server_connection(server, api_key, header)
        chosen = build_executor(executor, ray_address)
        with progress_display(quiet, "threads", throughput_of(chosen)) as update:
            result = sweep_threads(
                graph,
                checkpointer,
                server=connection,
                assistant_id=assistant,
                status=status,
                since=since,
                until=until,
                metadata=pairs or None,
                sample=sample,
                limit=limit,
                evaluators=evaluator or ["redundancy"],
                store=store,
                executor=chosen,
                name=name,
                run_id=run_id,
                incremental=not full,
                partition_size=partition_size,
                progress=None if update is None else _scored(update),
                redact=redact_pattern or None,
                judge_limits=judge_limits(judge_rpm, judge_tpm, judge_concurrency),
                judge_cache=not no_cache,
            )
    report = result.report  # bounded: aggregates, distributions, worst threads, trend
    if not result.stored:
        name = result.info.dataset.removeprefix("sweep:")
        say(f"sweep {name}: no thread is new or changed; no run stored")
        raise typer.Exit(PASSED)
    if not quiet:
        say(f"sweep {result.info.run_id}: {result.scored} threads scored")
        render_terminal(report, stdout)
    with input_errors():  # a file that cannot be written: exit 4
        if html is not None:
            write_sweep_html(result, html)
            say(f"wrote {html}")
        if json_file is not None:
            write_sweep_json(result, json_file)
            say(f"wrote {json_file}")
    counts = report.summary.counts
    errored = counts.error + counts.timeout
    if errored:
        say(f"{errored} of {counts.total} threads errored; see the report's errors")
    raise typer.Exit(CASES_ERRORED if errored else PASSED)


def _scored(update: Update) -> SweepProgress:
    """The sweep's ``progress(scored, passed, failed)`` as a display update (no total)."""

    def progress(scored: int, passed: int, failed: int) -> None:
        update(scored, None, passed, failed)

    return progress


__all__ = ["sweep"]
