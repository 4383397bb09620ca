"""``lg-eval calibrate`` and ``lg-eval labels ...``: people's labels and a judge's agreement."""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from rich.text import Text

from lg_eval._visible import data_escaped, visible
from lg_eval.cli import _options as shared
from lg_eval.cli._common import done, fail, input_errors, say, stdout, write_file
from lg_eval.cli._options import Command
from lg_eval.cli._read_only import existing_checkpointer, existing_store
from lg_eval.cli._server import ApiKey, Header, server_connection
from lg_eval.experiments import open_store
from lg_eval.labels import (
    ACTION_KEY,
    EXAMPLES_FRACTION,
    MAX_EXAMPLES,
    REVIEW_KEY,
    REVIEWER,
    Calibration,
    correction_examples,
    harvest_labels,
    harvest_server_labels,
    read_label_file,
    save_labels,
)
from lg_eval.labels import (
    calibrate as calibrate_key,
)
from lg_eval.reports._text import Column, fitted_table
from lg_eval.stats import Interval

labels_app = typer.Typer(
    name="labels",
    help="Keep people's labels in the results store: import them from files, harvest them "
    "from the decisions in checkpointed threads.",
    no_args_is_help=True,
    rich_markup_mode=None,
)


class Shown(StrEnum):
    """How ``calibrate`` prints its result."""

    text = "text"
    json = "json"


Fraction = Annotated[
    float,
    typer.Option(min=0, max=1, help="The share of labelled cases few-shot examples may come from."),
]
Salt = Annotated[str, typer.Option(help="Changes which cases are on each side of the split.")]


def calibrate(
    key: Annotated[str, typer.Argument(help="The evaluator's feedback key (a judge's).")],
    store: shared.Store = None,
    label_key: Annotated[
        str | None, typer.Option(help="The labels' key, when it is not KEY (approved_actions).")
    ] = None,
    run: Annotated[
        list[str] | None,
        typer.Option(help="Only this run's verdicts (repeatable; default every run)."),
    ] = None,
    held_out: Annotated[
        bool,
        typer.Option(
            "--held-out",
            help="Measure only the cases few-shot examples never come from (after "
            "correcting the judge with --examples).",
        ),
    ] = False,
    fraction: Fraction = EXAMPLES_FRACTION,
    salt: Salt = "",
    examples: Annotated[
        Path | None,
        typer.Option(
            help="Write the judge's disagreements on the other side of the split as few-shot "
            "examples (JSON, for the judge's few_shot_examples)."
        ),
    ] = None,
    max_examples: Annotated[
        int, typer.Option(min=1, max=MAX_EXAMPLES, help="The most examples written.")
    ] = 4,
    format: Annotated[Shown, typer.Option("--format", "-f")] = Shown.text,
) -> None:
    """How far KEY's verdicts agree with people's labels: confusion, TPR/TNR, precision,
    Cohen's kappa and Krippendorff's alpha with intervals, and every disagreement.

    The labels and verdicts are paired on the same cases; agreement, TPR, TNR, precision,
    kappa and alpha each carry a 95% bootstrap interval over cases, and every disagreement
    shows the judge's reasoning beside the person's note. Exit 0, or 2 for bad input."""
    existing_store(store)
    with input_errors(), open_store(store) as results:
        found = calibrate_key(
            results,
            key,
            label_key=label_key,
            runs=run or None,
            split="held_out" if held_out else "all",
            fraction=fraction,
            salt=salt,
        )
        corrections = (
            None
            if examples is None
            else correction_examples(
                results,
                key,
                label_key=label_key,
                runs=run or None,
                limit=max_examples,
                fraction=fraction,
                salt=salt,
            )
        )
    if format is Shown.json:
        typer.echo(data_escaped(found.model_dump_json(indent=2)))
    else:
        _show(found)
    if corrections is not None and examples is not None:
        text = json.dumps(corrections.examples, indent=2, ensure_ascii=False)
        write_file(examples, data_escaped(text))
        say(
            f"{len(corrections.examples)} examples from {corrections.disagreements} "
            f"disagreements on the examples side; measure the corrected judge with --held-out"
        )


def _number(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def _span(interval: Interval | None) -> str:
    return "–" if interval is None else f"[{interval.low:.3f}, {interval.high:.3f}]"


def _show(found: Calibration) -> None:
    agreement = found.agreement
    done(f"{found.key}: {found.summary()}")
    say(
        f"{found.labels} labels of {found.label_key!r} ({found.split}), "
        f"{agreement.pairs} cases paired, {found.unpaired} without a verdict to pair"
    )
    rows = [
        (name, _number(estimate.value), _span(estimate.interval), estimate.reason or "")
        for name, estimate in (
            ("agreement", agreement.agreement),
            ("TPR", agreement.tpr),
            ("TNR", agreement.tnr),
            ("precision", agreement.precision),
            ("Cohen's kappa", agreement.kappa),
            ("Krippendorff's alpha", agreement.alpha),
        )
    ]
    if found.scores is not None:
        alpha = found.scores.alpha
        rows.append(("alpha of scores", _number(alpha.value), _span(alpha.interval), ""))
    columns = (
        Column("statistic"),
        Column("value", "right"),
        Column("95% CI", "right"),
        Column("why none", wrap=True),
    )
    shown = [(name, value, ci, Text(visible(why))) for name, value, ci, why in rows]
    stdout.print(fitted_table(columns, shown, stdout.width, title="agreement"))
    labels = [str(label) for label in agreement.labels]
    matrix: list[list[Text | str]] = [
        [Text(visible(f"person {labels[i]}")), *(str(n) for n in row)]
        for i, row in enumerate(agreement.confusion)
    ]
    heads = (Column("", wrap=True), *(Column(f"judge {label}", "right") for label in labels))
    stdout.print(fitted_table(heads, matrix, stdout.width, title="confusion"))
    for item in found.disagreements:
        line = (
            f"{item.case_id} ({item.run_id}): judge {'pass' if item.judge else 'fail'}: "
            f"{item.judge_comment or '–'} | person {'pass' if item.human else 'fail'} "
            f"({', '.join(item.labelers)}): {item.note or '–'}"
        )
        stdout.print(Text(visible(line)), soft_wrap=True)


@labels_app.command("import", cls=Command)
def import_labels(
    files: Annotated[list[Path], typer.Argument(help="Label files: CSV (.csv) or JSONL.")],
    store: shared.Store = None,
) -> None:
    """Add the labels in FILES to the results store (a label of the same key, unit and
    labeler replaces the stored one). Exit 0, or 2 at the first file that is no label file."""
    existing_store(store)
    with input_errors():
        read = [(path, read_label_file(path)) for path in files]
        with open_store(store) as results:
            for path, labels in read:
                done(f"{path}: {save_labels(results, labels)} labels stored")


@labels_app.command("harvest", cls=Command)
def harvest(
    graph: Annotated[
        str | None,
        typer.Option(
            help="The graph that wrote the threads, as module:attr (optional with --server)."
        ),
    ] = None,
    checkpointer: Annotated[
        str | None, typer.Option(help="Checkpointer URL holding the threads.")
    ] = None,
    server: Annotated[
        str | None, typer.Option(help="Read the threads of this LangGraph Server instead.")
    ] = None,
    assistant: Annotated[
        str | None, typer.Option(help="With --server and no --thread: this assistant's threads.")
    ] = None,
    api_key: ApiKey = None,
    header: Header = None,
    thread: Annotated[
        list[str] | None, typer.Option(help="A thread id (repeatable; default every thread).")
    ] = None,
    key: Annotated[str, typer.Option(help="The key of an action decision's label.")] = ACTION_KEY,
    review_key: Annotated[
        str, typer.Option(help="The key of an evaluation review's label.")
    ] = REVIEW_KEY,
    labeler: Annotated[
        str, typer.Option(help="Who decided, when the thread does not say.")
    ] = REVIEWER,
    store: shared.Store = None,
) -> None:
    """Store the labels people gave inside checkpointed threads: each interrupt decision on
    an action request (approve: the action should happen; edit, reject: not as proposed),
    and each review verdict of the evaluation graph. Exit 0, or 2 for bad input."""
    options = {"key": key, "review_key": review_key, "labeler": labeler}
    with input_errors():
        if server is not None:
            if checkpointer is not None:
                fail("--checkpointer does not go with --server: the threads are on the server")
            connection = server_connection(server, api_key, header)
            found = harvest_server_labels(
                connection, thread, graph=graph, assistant_id=assistant, **options
            )
        else:
            if graph is None:
                fail("--graph is needed to read a checkpointer's threads (or give --server)")
            existing_checkpointer(checkpointer)
            found = harvest_labels(graph, thread, checkpointer=checkpointer, **options)
        with open_store(store) as results:
            stored = save_labels(results, found)
    sources = sorted({label.source for label in found})
    done(f"{stored} labels stored ({', '.join(sources) or 'none found'})")
