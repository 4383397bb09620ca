"""``lg-eval run``: play a golden dataset on a graph, score it, store it, report it, gate it."""

from __future__ import annotations

import warnings
from functools import partial
from pathlib import Path
from typing import Annotated, cast

import typer

from lg_eval.cli import _options as shared
from lg_eval.cli._common import (
    CASES_ERRORED,
    GATE_FAILED,
    PASSED,
    announce_new_folders,
    done,
    fail,
    input_errors,
    parse_pairs,
    quiet_warnings,
    say,
    stdout,
    write_reports,
)
from lg_eval.cli._options import MinJudgeKappa, calibrated, judge_minimums, judges_trusted
from lg_eval.cli._progress import (
    build_executor,
    interruptible,
    progress_display,
    stored_in,
    throughput_of,
)
from lg_eval.cli._server import ApiKey, Header, server_connection
from lg_eval.datasets import Dataset, load_dataset
from lg_eval.evaluators import get_evaluator
from lg_eval.experiments import new_run_id, open_store, run_experiment
from lg_eval.extract import ExtractionWarning
from lg_eval.langsmith import run_langsmith_experiment
from lg_eval.reports import Summary, render_terminal, stream_report
from lg_eval.server import server_target


def run(
    dataset: Annotated[Path, typer.Argument(help="The dataset file (YAML or JSONL).")],
    graph: Annotated[
        str | None,
        typer.Option(help="The target as module:attr (a compiled graph, builder or factory)."),
    ] = None,
    checkpointer: Annotated[
        str | None,
        typer.Option(help="Checkpointer URL (sqlite:///file, postgresql://...)."),
    ] = None,
    server: Annotated[
        str | None,
        typer.Option(
            help="Play every case on an assistant of this LangGraph Server (its URL) instead "
            "of a local graph, each on a new server thread; needs --assistant. --graph then "
            "names the local definition of the served graph (read, never run)."
        ),
    ] = None,
    assistant: Annotated[
        str | None,
        typer.Option(help="With --server: the assistant id, or the graph id it serves."),
    ] = None,
    api_key: ApiKey = None,
    header: Header = None,
    store: shared.Store = None,
    run_id: shared.RunId = None,
    concurrency: Annotated[int, typer.Option(min=1, help="Cases in flight at once.")] = 4,
    repetitions: Annotated[int, typer.Option(min=1, help="Runs of each case.")] = 1,
    timeout: Annotated[
        float | None, typer.Option(min=0, help="Seconds per case before it is cancelled.")
    ] = None,
    retries: Annotated[
        int, typer.Option(min=0, help="Extra attempts after an infrastructure error.")
    ] = 1,
    threshold: Annotated[
        list[str] | None,
        typer.Option(help="KEY=MIN: minimum score for a feedback key (repeatable)."),
    ] = None,
    fail_under: Annotated[
        float | None,
        typer.Option(min=0, max=1, help="Exit 1 when the pass rate is below this."),
    ] = None,
    min_judge_kappa: MinJudgeKappa = None,
    require_verdict: Annotated[
        bool,
        typer.Option(
            "--require-verdict",
            help="Fail a case when an evaluator gives it no verdict (by default a "
            "no-verdict is neither pass nor fail).",
        ),
    ] = False,
    json_file: shared.JsonReport = None,
    html: shared.HtmlReport = None,
    md: Annotated[Path | None, typer.Option(help="Write the Markdown report.")] = None,
    junit: Annotated[Path | None, typer.Option(help="Write JUnit XML.")] = None,
    no_cache: shared.NoCache = False,
    redact_pattern: shared.RedactPattern = None,
    quiet: shared.Quiet = False,
    reviewer_model: shared.ReviewerModel = None,
    reviewer_persona: shared.ReviewerPersona = shared.DEFAULT_PERSONA,
    reviewer_instructions: shared.ReviewerInstructions = "",
    langsmith: Annotated[
        bool,
        typer.Option(
            "--langsmith",
            help="Run through LangSmith instead: push the dataset and upload the experiment. "
            "Needs LANGSMITH_API_KEY.",
        ),
    ] = False,
    langsmith_name: Annotated[
        str | None,
        typer.Option(help="With --langsmith: the LangSmith dataset name (default its own)."),
    ] = None,
    executor: shared.ExecutorName = "local",
    ray_address: shared.RayAddress = None,
    partition_size: Annotated[
        int | None,
        typer.Option(min=1, help="With --executor ray: cases per task (default 2 x concurrency)."),
    ] = None,
    judge_rpm: shared.JudgeRpm = None,
    judge_tpm: shared.JudgeTpm = None,
    judge_concurrency: shared.JudgeInFlight = None,
) -> None:
    """Run DATASET: every case on a fresh thread, scored, stored as it finishes.

    With --server URL --assistant NAME, the cases are played on a deployed assistant, each
    on a new thread of that LangGraph Server, and read back from there.

    Offline unless --langsmith is given: nothing is sent anywhere (but to the --server),
    whatever the environment's LangSmith settings say. Exit code 0 when the run passes, 1 when
    --fail-under is not met or a --min-judge-kappa judge is not trusted, 2 for bad input (or
    a store that cannot be opened), 3 when a case errored or timed out (failing scores alone
    exit 0 unless a gate is given), 4 when a report file cannot be written, 5 when another
    live run holds the run id.
    """
    thresholds = parse_pairs(threshold or [], "--threshold", float)
    minimums = judge_minimums(min_judge_kappa)
    # The report shows what extraction could not tell, once per run (its notes).
    warnings.filterwarnings("ignore", category=ExtractionWarning)
    if quiet:
        quiet_warnings()
    target: object = graph
    if server is not None or assistant is not None:
        _server_options(server, assistant, checkpointer, langsmith)
        with input_errors():
            connection = server_connection(cast(str, server), api_key, header)
            target = server_target(connection, cast(str, assistant), graph=graph)
        checkpointer = "memory://"  # the assistant's threads live on the server
    elif api_key is not None or header:
        fail("--api-key and --header go with --server URL --assistant NAME")
    if langsmith:
        with input_errors():
            _through_langsmith(load_dataset(dataset), graph, langsmith_name, checkpointer)
        return
    with input_errors():
        loaded = load_dataset(dataset)
        run_id = run_id or new_run_id(loaded.name)  # named here, so a Ctrl-C can name it
        chosen = build_executor(executor, ray_address)
        announce_new_folders(results_store=store, checkpointer=checkpointer)
        stored = partial(stored_in, store, run_id, "cases", of_planned=True)
        with (
            interruptible(stored, run_id),
            progress_display(quiet, "cases", throughput_of(chosen)) as progress,
        ):
            result = run_experiment(
                target,
                loaded,
                checkpointer=checkpointer,
                store=store,
                run_id=run_id,
                concurrency=concurrency,
                repetitions=repetitions,
                timeout=timeout,
                retries=retries,
                thresholds=thresholds or None,
                fail_under=fail_under,
                require_verdict=require_verdict,
                judge_cache=not no_cache,
                progress=progress,
                redact=redact_pattern or None,
                reviewer=shared.simulated_reviewer(
                    reviewer_model, reviewer_persona, reviewer_instructions
                ),
                executor=chosen,
                partition_size=partition_size,
                judge_limits=shared.judge_limits(judge_rpm, judge_tpm, judge_concurrency),
            )
        # counted in SQL, the worst results listed: memory does not grow with the run
        with open_store(store) as results:
            report = calibrated(stream_report(results, result.info.run_id), results)
            keys = {summary.key for summary in report.evaluators}
            trusted = judges_trusted(results, minimums, keys) if minimums else True
    if not quiet:
        render_terminal(report, stdout)
    if json_file or html or md or junit:
        with input_errors(), open_store(store) as results:
            write_reports(report, results, json=json_file, html=html, md=md, junit=junit)
    raise typer.Exit(GATE_FAILED if not trusted else _exit_code(report.summary, fail_under))


def _through_langsmith(
    dataset: Dataset, graph: str | None, name: str | None, checkpointer: str | None
) -> None:
    """The dataset's default evaluators, in an uploaded LangSmith experiment."""
    evaluators = [get_evaluator(ref.name, **ref.options) for ref in dataset.evaluators]
    results = run_langsmith_experiment(
        dataset, graph, name=name, evaluators=evaluators, checkpointer=checkpointer
    )
    done(f"LangSmith experiment: {getattr(results, 'experiment_name', results)}")


def _server_options(
    server: str | None, assistant: str | None, checkpointer: str | None, langsmith: bool
) -> None:
    """Refuse the options that do not go with a deployed assistant (exit code 2)."""
    if server is None:
        fail("--assistant goes with --server URL (the LangGraph Server that serves it)")
    if assistant is None:
        fail("--server needs --assistant NAME: the assistant id, or the graph id it serves")
    if checkpointer is not None:
        fail("--checkpointer does not go with --server: the assistant's threads are on the server")
    if langsmith:
        fail("--langsmith does not go with --server: run one or the other")


def _exit_code(summary: Summary, fail_under: float | None) -> int:
    """The gate first (1 when the pass rate is below ``--fail-under``), then errors (3 when a
    case errored or timed out: its scores are missing, so a passing gate does not clear it),
    else 0. Failing scores alone are not an error: they exit 1 only through a gate."""
    if fail_under is not None:
        rate = summary.pass_rate
        if rate is None:
            fail("the run has no results to gate on", GATE_FAILED)
        if rate < fail_under:
            say(f"pass rate {rate:.1%} is below --fail-under {fail_under:.1%}")
            return GATE_FAILED
    errored = summary.counts.error + summary.counts.timeout
    if errored:
        say(f"{errored} of {summary.results} results errored or timed out")
        return CASES_ERRORED
    return PASSED
