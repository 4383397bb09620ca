"""The ``lg-eval`` command line: experiments, reports, comparisons, threads and datasets.

Each command parses its options, calls one lg_eval function, renders the result
and sets the exit code from the one table in :mod:`lg_eval.cli._common`
(``EXIT_CODES``, listed by ``lg-eval --help``).

Commands are imported when they run (or show their own help), not when ``lg-eval``
starts: ``lg-eval --help`` and ``lg-eval --version`` load neither LangGraph nor the
runner. :data:`COMMANDS` names each command's module and its one-line summary.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import os
import sys
from dataclasses import dataclass
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from lg_eval.cli._common import EXIT_CODES, readable_warnings
from lg_eval.cli._options import Command


@dataclass(frozen=True)
class Entry:
    """Where a command lives (``module``, ``attr``: a function or a typer app) and the
    line ``lg-eval --help`` shows for it."""

    module: str
    attr: str
    summary: str


COMMANDS: dict[str, Entry] = {
    "run": Entry(
        "lg_eval.cli._run",
        "run",
        "Run DATASET: every case on a fresh thread, scored, stored as it finishes.",
    ),
    "report": Entry(
        "lg_eval.cli._runs",
        "report",
        "Render a stored run as a terminal summary, HTML, Markdown, JSON or JUnit XML.",
    ),
    "compare": Entry(
        "lg_eval.cli._runs",
        "compare",
        "Compare RUN_B with RUN_A case by case, with paired tests over the repetitions; exit 1 "
        "on a regression (see --fail-on), or when a --min-judge-kappa judge is not trusted.",
    ),
    "runs": Entry("lg_eval.cli._runs", "runs", "List the stored runs, newest first."),
    "extract": Entry(
        "lg_eval.cli._threads",
        "extract",
        "Extract a checkpointed thread and print it turn by turn (or as JSON).",
    ),
    "sweep": Entry(
        "lg_eval.cli._sweep",
        "sweep",
        "Sweep the threads of a checkpointer or a LangGraph Server: list them by time and "
        "metadata, extract, score and store those that changed since the last sweep, and "
        "report like an experiment.",
    ),
    "replay": Entry(
        "lg_eval.cli._replay",
        "replay",
        "Replay production threads with a new graph: fork each at a point, run the new graph "
        "from there with the answers its humans gave, and show what changed.",
    ),
    "view": Entry(
        "lg_eval.cli._view",
        "view",
        "Open a web viewer over the results store: runs and their trend, a run's evaluators, "
        "charts and cases (failing first, filters, search), each case's turns, trajectory "
        "against the reference and feedback, and two runs compared case by case.",
    ),
    "calibrate": Entry(
        "lg_eval.cli._labels",
        "calibrate",
        "How far KEY's verdicts agree with people's labels: confusion, TPR/TNR, precision, "
        "Cohen's kappa and Krippendorff's alpha with intervals, and every disagreement.",
    ),
    "labels": Entry(
        "lg_eval.cli._labels",
        "labels_app",
        "Keep people's labels in the results store: import them from files, harvest them "
        "from the decisions in checkpointed threads.",
    ),
    "dataset": Entry(
        "lg_eval.cli._threads",
        "dataset_app",
        "Check dataset files and grow them from checkpointed threads.",
    ),
}


def load_command(name: str, entry: Entry) -> Any:
    """The click command of ``entry``, built from its module (imported now)."""
    target = getattr(importlib.import_module(entry.module), entry.attr)
    if isinstance(target, typer.Typer):
        return typer.main.get_group(target)
    holder = typer.Typer(add_completion=False, rich_markup_mode=None)
    holder.command(name, cls=Command)(target)
    return typer.main.get_command(holder)


class LazyGroup(TyperGroup):
    """The root group: lists :data:`COMMANDS` from the table, imports one when it is used."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        """Keep the arguments as given (``ctx.meta``, shared with every subcommand): an
        interrupted run prints the command that resumes it (:mod:`lg_eval.cli._progress`)."""
        ctx.meta["lg_eval.argv"] = list(args)
        return list(super().parse_args(ctx, args))

    def list_commands(self, ctx: Any) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        entry = COMMANDS.get(cmd_name)
        if entry is None:
            return None
        if cmd_name not in self.commands:
            self.commands[cmd_name] = load_command(cmd_name, entry)
        return self.commands[cmd_name]

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        with formatter.section("Commands"):
            formatter.write_dl([(name, entry.summary) for name, entry in COMMANDS.items()])

    def format_epilog(self, ctx: Any, formatter: Any) -> None:
        with formatter.section("Exit codes"):
            formatter.write_dl([(str(code), meaning) for code, meaning in EXIT_CODES])


def version() -> str:
    """The installed lg-eval version."""
    try:
        return importlib.metadata.version("lg-eval")
    except importlib.metadata.PackageNotFoundError:  # run from a source tree
        return "unknown"


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"lg-eval {version()}")
        raise typer.Exit()


app = typer.Typer(
    name="lg-eval",
    cls=LazyGroup,
    help=(
        "Evaluate LangGraph agents from their checkpointed threads: run golden datasets that "
        "script the human's turns, score every case, report and compare runs."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


@app.callback()
def _root(
    ctx: typer.Context,
    show_version: Annotated[
        bool,
        typer.Option(
            "--version",
            is_eager=True,
            callback=_print_version,
            help="Print the lg-eval version and exit.",
        ),
    ] = False,
) -> None:
    """Evaluate LangGraph agents from their checkpointed threads."""
    ctx.with_resource(readable_warnings())  # no raw Python warning reaches the terminal


def main() -> None:
    """The console script's entry point.

    Targets and answer functions are named ``module:attr`` relative to the directory
    ``lg-eval`` runs in (as ``python -m`` would import them), so it goes first on
    ``sys.path``.
    """
    cwd = os.getcwd()
    if cwd not in sys.path:
        sys.path.insert(0, cwd)
    app(prog_name="lg-eval")


__all__ = ["COMMANDS", "Entry", "LazyGroup", "app", "load_command", "main", "version"]
