"""The ``lg-eval`` command line: experiments, reports, comparisons, threads and datasets.

Each command parses its options, calls one lg_eval function, renders the result
and sets the exit code: 0 when it passed, 1 when a gate failed or a comparison
found a regression, 2 for bad input (usage errors, invalid datasets, unknown
runs, stores or checkpointers that cannot be opened).
"""

from __future__ import annotations

import os
import sys

import typer

from lg_eval.cli.run import run
from lg_eval.cli.runs import compare, report, runs
from lg_eval.cli.sweep import sweep
from lg_eval.cli.threads import dataset_app, extract
from lg_eval.cli.view import view

app = typer.Typer(
    name="lg-eval",
    help=(
        "Evaluate LangGraph agents from their checkpointed threads: run golden datasets that "
        "script the human's turns, score every case, report and compare runs."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
app.command()(run)
app.command()(report)
app.command()(compare)
app.command()(runs)
app.command()(extract)
app.command()(sweep)
app.command()(view)
app.add_typer(dataset_app)


def main() -> None:
    """The console script's entry point.

    Targets and answer functions are named ``module:attr`` relative to the directory
    ``lg-eval`` runs in (as ``python -m`` would import them), so it goes first on
    ``sys.path``.
    """
    cwd = os.getcwd()
    if cwd not in sys.path:
        sys.path.insert(0, cwd)
    app()


__all__ = ["app", "main"]
