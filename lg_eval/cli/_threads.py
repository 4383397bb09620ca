"""``lg-eval extract`` and ``lg-eval dataset ...``: threads and dataset files."""

from __future__ import annotations

import sys
import tempfile
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from rich.text import Text

from lg_eval._display import print_trajectory
from lg_eval._trajectory import ThreadTrajectory
from lg_eval._visible import data_escaped, visible
from lg_eval.cli._common import INPUT_ERROR, done, fail, input_errors, say, stderr, stdout
from lg_eval.cli._options import Command
from lg_eval.cli._read_only import existing_checkpointer
from lg_eval.datasets import Dataset, case_from_thread, dump_dataset, load_dataset
from lg_eval.extract import extract_thread
from lg_eval.play import open_checkpointer, resolve_target, thread_config

GraphOption = Annotated[
    str, typer.Option(help="The graph that wrote the thread, as module:attr.", show_default=False)
]
ThreadOption = Annotated[str, typer.Option(help="The thread id.", show_default=False)]
CheckpointerOption = Annotated[
    str | None,
    typer.Option(help="Checkpointer URL (default the embedded .lg_eval/checkpoints.sqlite)."),
]

dataset_app = typer.Typer(
    name="dataset",
    help="Check dataset files and grow them from checkpointed threads.",
    no_args_is_help=True,
    rich_markup_mode=None,
)


class ThreadFormat(StrEnum):
    """How ``extract`` prints a thread."""

    text = "text"
    json = "json"


def extract(
    graph: GraphOption,
    thread: ThreadOption,
    checkpointer: CheckpointerOption = None,
    format: Annotated[ThreadFormat, typer.Option("--format", "-f")] = ThreadFormat.text,
) -> None:
    """Extract a checkpointed thread and print it turn by turn (or as JSON)."""
    trajectory = _extracted(graph, thread, checkpointer)
    if format is ThreadFormat.json:
        typer.echo(data_escaped(trajectory.model_dump_json(indent=2)))
    else:
        print_trajectory(trajectory, console=stdout)


@dataset_app.command("validate", cls=Command)
def validate(
    files: Annotated[list[Path], typer.Argument(help="Dataset files (YAML or JSONL).")],
) -> None:
    """Check dataset files and resolve the evaluators and code they name.

    Per case and evaluator, a reference the evaluator needs that the case does not state is
    listed with how a run will score it: no verdict (the file is still valid), or an error
    (a problem). Exit 0 when every file is valid, 2 at the first file with a problem (each
    is listed).
    """
    from lg_eval.experiments import check_dataset

    for path in files:
        with input_errors():
            dataset = load_dataset(path)
        checked = check_dataset(dataset)
        for problem in checked.problems:
            line = Text(visible(f"lg-eval: {path}: {problem}"), style="bold red")
            stderr.print(line, soft_wrap=True)
        if checked.problems:
            for item in checked.no_verdicts:
                say(f"lg-eval: {path}: {item}")
            raise typer.Exit(INPUT_ERROR)
        done(f"{path}: {len(dataset.cases)} cases, valid")
        for item in checked.no_verdicts:
            done(f"  no verdict: {item}")
        for item in checked.unchecked:
            done(f"  not checked: {item}")


@dataset_app.command("from-thread", cls=Command)
def from_thread(
    graph: GraphOption,
    thread: ThreadOption,
    checkpointer: CheckpointerOption = None,
    case_id: Annotated[str | None, typer.Option(help="The case id (default: the thread id).")] = (
        None
    ),
    tag: Annotated[list[str] | None, typer.Option(help="A tag for the case (repeatable).")] = None,
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="Write a dataset file (.yaml or .jsonl)."),
    ] = None,
) -> None:
    """Write a case from a checkpointed thread: its inputs, resumes, edits and trajectory."""
    trajectory = _extracted(graph, thread, checkpointer)
    with input_errors():
        case = case_from_thread(trajectory, case_id=case_id or thread, tags=tag or None)
        dataset = Dataset(name=case.id, graph=graph, cases=[case])
        if output is not None:
            done(f"wrote {dump_dataset(dataset, output)}")
            return
        with tempfile.TemporaryDirectory() as folder:  # dump_dataset writes files; print it
            path = dump_dataset(dataset, Path(folder) / "case.yaml")
            sys.stdout.write(path.read_text(encoding="utf-8"))


def _extracted(graph: str, thread: str, checkpointer: str | None) -> ThreadTrajectory:
    existing_checkpointer(checkpointer)
    with input_errors(), open_checkpointer(checkpointer) as saver:
        target = resolve_target(graph, saver)
        trajectory = extract_thread(target, thread_config(thread))
    if not trajectory.turns:
        fail(f"thread {thread!r} has no checkpoints in that checkpointer")
    say(f"thread {thread}: {len(trajectory.turns)} turns")
    return trajectory
