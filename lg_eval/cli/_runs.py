"""``lg-eval runs``, ``lg-eval report`` and ``lg-eval compare``: stored runs, read back."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from rich.text import Text

from lg_eval._visible import visible
from lg_eval.cli import _options as shared
from lg_eval.cli._common import (
    GATE_FAILED,
    PASSED,
    done,
    fail,
    input_errors,
    renderers,
    say,
    stdout,
    write_file,
)
from lg_eval.cli._options import MinJudgeKappa, calibrated, judge_minimums, judges_trusted
from lg_eval.cli._read_only import existing_store
from lg_eval.experiments import (
    Comparison,
    ExperimentRun,
    ResultStore,
    compare_runs,
    open_store,
)
from lg_eval.reports import build_report, render_comparison, render_terminal, stream_report
from lg_eval.reports._text import Column, fitted_table


class FailOn(StrEnum):
    """What makes ``compare`` exit 1."""

    regression = "regression"
    significant_regression = "significant-regression"


class Format(StrEnum):
    """Report formats: the terminal summary, or a file format."""

    terminal = "terminal"
    html = "html"
    md = "md"
    json = "json"
    junit = "junit"


FormatOption = Annotated[Format, typer.Option("--format", "-f", help="Output format.")]
OutputOption = Annotated[
    Path | None,
    typer.Option("--output", "-o", help="Write to this file (else stdout)."),
]


def runs(
    store: shared.Store = None,
    dataset: Annotated[str | None, typer.Option(help="Only runs of this dataset.")] = None,
) -> None:
    """List the stored runs, newest first."""
    existing_store(store)
    with input_errors(), open_store(store) as results:
        infos = [i for i in results.runs() if dataset is None or i.dataset == dataset]
    rows = [
        (
            Text(visible(info.run_id)),
            Text(visible(info.dataset)),
            info.status,
            str(info.cases),
            info.started_at.strftime("%Y-%m-%d %H:%M:%S"),
        )
        for info in sorted(infos, key=lambda i: i.started_at, reverse=True)
    ]
    stdout.print(fitted_table(RUN_COLUMNS, rows, stdout.width, title="stored runs"))


RUN_COLUMNS = (
    Column("run id"),  # whole: it is copied into `report` and `compare`
    Column("dataset", wrap=True),
    Column("status"),
    Column("cases", "right", priority=2),
    Column("started", priority=1),
)


def report(
    run_id: Annotated[str, typer.Argument(help="The stored run to report.")],
    store: shared.Store = None,
    format: FormatOption = Format.terminal,
    output: OutputOption = None,
    history: Annotated[
        int, typer.Option(min=0, help="Earlier runs of the dataset shown in the trend.")
    ] = 10,
) -> None:
    """Render a stored run as a terminal summary, HTML, Markdown, JSON or JUnit XML."""
    existing_store(store)
    with input_errors(), open_store(store) as results:
        _known(results, run_id)
        report_ = calibrated(stream_report(results, run_id, worst=None, history=history), results)
    if format is Format.terminal:
        render_terminal(report_, stdout)
        return
    text = renderers()[format.value](report_)
    if output is None:
        typer.echo(text)
    else:
        write_file(output, text)


def compare(
    run_a: Annotated[str, typer.Argument(help="The baseline run.")],
    run_b: Annotated[str, typer.Argument(help="The run to check against it.")],
    store: shared.Store = None,
    tolerance: Annotated[
        float, typer.Option(min=0, help="Score drops up to this are not regressions.")
    ] = 0.0,
    format: FormatOption = Format.terminal,
    output: OutputOption = None,
    fail_on: Annotated[
        FailOn,
        typer.Option(
            help="regression: any case that passed in RUN_A and not in RUN_B, or a score "
            "drop beyond --tolerance; significant-regression: only a drop a paired test "
            "over the repetitions finds significant at --alpha."
        ),
    ] = FailOn.regression,
    alpha: Annotated[
        float,
        typer.Option(help="Significance level of the paired tests, in (0, 1)."),
    ] = 0.05,
    min_judge_kappa: MinJudgeKappa = None,
) -> None:
    """Compare RUN_B with RUN_A case by case, with paired tests over the repetitions;
    exit 1 on a regression (see --fail-on), or when a --min-judge-kappa judge is not
    trusted.

    The terminal shows only the comparison (`lg-eval report RUN_B` shows the run itself);
    the file formats hold RUN_B's report with the comparison in it.
    """
    minimums = judge_minimums(min_judge_kappa)
    existing_store(store)
    with input_errors(), open_store(store) as results:
        baseline, candidate = _load(results, run_a), _load(results, run_b)
        comparison = compare_runs(baseline, candidate, tolerance=tolerance, alpha=alpha)
        report_ = calibrated(build_report(candidate, comparison=comparison), results)
        keys = {row.key for run in (baseline, candidate) for r in run.results for row in r.scores}
        trusted = judges_trusted(results, minimums, keys) if minimums else True
    if format is Format.terminal:
        render_comparison(report_, stdout)
    else:
        text = renderers()[format.value](report_)
        if output is None:
            typer.echo(text)
        else:
            write_file(output, text)
    significant = fail_on is FailOn.significant_regression
    failed = comparison.significant_regression if significant else comparison.regressed
    code = GATE_FAILED if failed or not trusted else PASSED
    line = verdict(comparison, significant, code)
    (done if format is Format.terminal or output is not None else say)(line)
    raise typer.Exit(code)


def verdict(comparison: Comparison, significant: bool, code: int) -> str:
    """What ``compare`` concluded, in words, with the exit code it gives."""
    regressed = sum(change.change == "regressed" for change in comparison.cases)
    cases = f"{regressed} of {len(comparison.cases)} case repetitions regressed"
    level = f"at alpha {comparison.alpha:g}"
    if significant:
        if comparison.significant_regression:
            found = f"significant regression: a paired test {level} finds {comparison.run_b} worse"
            return f"verdict: {found} than {comparison.run_a} ({cases}); exit {code}"
        return f"verdict: no significant regression {level} ({cases}); exit {code}"
    if regressed:
        return (
            f"verdict: regression: {cases} (passed in {comparison.run_a}, not in "
            f"{comparison.run_b}, or a score dropped by more than --tolerance "
            f"{comparison.tolerance:g}); exit {code}"
        )
    return f"verdict: no regression ({cases}); exit {code}"


def _load(results: ResultStore, run_id: str) -> ExperimentRun:
    _known(results, run_id)
    return results.load_run(run_id)


def _known(results: ResultStore, run_id: str) -> None:
    if results.run_info(run_id) is None:
        known = ", ".join(i.run_id for i in results.runs()[:5]) or "none"
        fail(f"no run {run_id!r} in the store (recent runs: {known}); see `lg-eval runs`")
