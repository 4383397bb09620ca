"""``lg-eval replay``: rerun production threads with a new graph from a fork point."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from lg_eval._urls import redact_url
from lg_eval.cli import _options as shared
from lg_eval.cli._common import (
    CASES_ERRORED,
    PASSED,
    announce_new_folders,
    done,
    fail,
    input_errors,
    quiet_warnings,
    stdout,
    write_file,
)
from lg_eval.cli._progress import interruptible
from lg_eval.replay import DEFAULT_TARGET, new_run_name, replay_threads


def replay(
    graph: Annotated[
        str, typer.Option(help="The new graph as module:attr (graph, builder, factory).")
    ],
    checkpointer: Annotated[
        str, typer.Option(help="Checkpointer URL holding the production threads (only read).")
    ],
    baseline: Annotated[
        str | None,
        typer.Option(help="The graph that wrote the threads, to read them (default --graph)."),
    ] = None,
    thread: Annotated[
        list[str] | None, typer.Option(help="Replay this thread (repeatable; default all).")
    ] = None,
    fork: Annotated[
        str,
        typer.Option(
            help="Where to fork: last-interrupt, turn:N (N-th input, from 1), before:NODE."
        ),
    ] = "last-interrupt",
    target: Annotated[
        str,
        typer.Option(
            help="Checkpointer URL the replay threads are written to (not the production one)."
        ),
    ] = DEFAULT_TARGET,
    evaluator: shared.Evaluators = None,
    since: shared.Since = None,
    until: shared.Until = None,
    metadata: shared.Metadata = None,
    limit: Annotated[int | None, typer.Option(min=0, help="Replay at most N threads.")] = None,
    concurrency: Annotated[int, typer.Option(min=1, help="Threads replayed at once.")] = 4,
    run_id: Annotated[
        str | None,
        typer.Option(
            help="Name the replay: its forks are replay:<id>:<thread>, and the same id again "
            "reuses the forks of threads that have not changed since."
        ),
    ] = None,
    full: Annotated[
        bool, typer.Option("--full", help="Fork every thread again, changed or not.")
    ] = False,
    reviewer_model: shared.ReviewerModel = None,
    reviewer_persona: shared.ReviewerPersona = shared.DEFAULT_PERSONA,
    reviewer_instructions: shared.ReviewerInstructions = "",
    json_file: Annotated[
        Path | None, typer.Option("--json", help="Write the result as JSON.")
    ] = None,
    only_changed: Annotated[
        bool, typer.Option("--only-changed", help="Show only the threads whose trajectory changed.")
    ] = False,
    quiet: Annotated[bool, typer.Option(help="No table; only the counts.")] = False,
) -> None:
    """Replay production threads with a new graph: fork each at a point, run the new graph
    from there with the answers its humans gave, and show what changed.

    Each thread of CHECKPOINTER is copied up to the fork point onto a fresh thread of
    --target and continued by --graph, whose interrupts get the answers the original's
    humans recorded (by node, in order), each only for the question it answered: a thread
    whose new graph asks another question stops there (or, with --reviewer-model, the
    reviewer answers it). Old and new are scored with the same evaluators.
    The production threads are only read. The same --run-id into a kept --target reuses
    the forks of threads that have not changed since (--full forks them all again).

    Exit code 0 when the replay ran (whatever changed), 2 for bad input (a bad --fork, an
    unknown evaluator or one that needs a reference, a checkpointer that cannot be opened,
    a --thread it does not hold, a --target that is the production store), 3 when the new
    graph raised on a thread, 4 when --json cannot be written.
    """
    if quiet:
        quiet_warnings()
    pairs = shared.metadata_filter(metadata)
    since_at, until_at = shared.time_bound("--since", since), shared.time_bound("--until", until)
    reviewer = shared.simulated_reviewer(reviewer_model, reviewer_persona, reviewer_instructions)
    if thread and (since or until or metadata):
        fail(
            "--thread names the threads to replay; --since, --until and --metadata choose "
            "among all threads, so they would be ignored: give one or the other."
        )
    run_id = run_id or new_run_name()  # named here, so a Ctrl-C can name it
    replayed = [0, 0]  # threads done, threads chosen

    def counted(done: int, total: int) -> None:
        replayed[:] = [done, total]

    def kept() -> str:
        done = f"{replayed[0]} of {replayed[1]} threads replayed"
        if target.lower().startswith("memory://"):
            return f"{done}, none kept (--target memory:// is gone with this process)"
        return f"{done}, their forks kept in {redact_url(target)}"

    with input_errors(), interruptible(kept, run_id):
        announce_new_folders(target=target)
        result = replay_threads(
            graph,
            checkpointer,
            baseline=baseline,
            thread_ids=thread or None,
            fork=fork,
            target=target,
            evaluators=shared.evaluator_specs(evaluator),
            on_new_question="stop" if reviewer is None else "reviewer",
            reviewer=reviewer,
            since=since_at,
            until=until_at,
            metadata=pairs,
            limit=limit,
            run=run_id,
            incremental=not full,
            concurrency=concurrency,
            progress=counted,
        )
    if not quiet:
        stdout.print(result.table(only_changed=only_changed))
    counts = result.counts()
    reused = sum(t.reused for t in result.threads)
    done(
        f"replayed {len(result.threads)} threads: {counts['changed']} changed, "
        f"{counts['stopped']} stopped, {counts['error']} errored, {counts['skipped']} skipped"
        + (f", {asked} question changed" if (asked := counts["question_changed"]) else "")
        + (f" ({reused} forks reused)" if reused else "")
    )
    if json_file is not None:
        write_file(json_file, result.to_json())
    raise typer.Exit(CASES_ERRORED if counts["error"] else PASSED)
