"""What every ``lg-eval`` command shares: consoles, exit codes, turning errors into messages,
and writing a report in the formats asked for.

Exit codes (the one table; docs/experiments.md repeats it for users):

- 0 ``PASSED``: the run passed, or the command did its job;
- 1 ``GATE_FAILED``: a gate failed (``--fail-under``, thresholds) or a comparison
  found a regression;
- 2 ``INPUT_ERROR``: the input was wrong (a usage error, a dataset error, an
  unknown run, a store or checkpointer that cannot be opened or is corrupt);
- 3 ``CASES_ERRORED``: one or more cases errored (the graph raised, timed out,
  or the dataset's script did not fit the thread);
- 4 ``WRITE_FAILED``: a report or output file could not be written;
- 5 ``RUN_IN_USE``: another live run holds the run id;
- 130 ``INTERRUPTED``: Ctrl-C or SIGTERM stopped ``run``, ``sweep`` or ``replay`` (what was
  finished is stored; the message gives the command that resumes).

Messages
about user input go to stderr; text from threads or datasets is printed only as
``rich.text.Text`` (never interpreted as markup) and URLs only in redacted form.

Reports are written in the formats asked for by ``run`` and ``report`` (the renderers are
imported when a report is written).
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn, TypeVar

import typer
from rich.console import Console
from rich.text import Text

from lg_eval._describe import safe_text
from lg_eval._files import atomic_writer, write_atomic
from lg_eval._urls import new_folder
from lg_eval._visible import visible
from lg_eval.errors import LgEvalError, OutputWriteError, RunInUseError

if TYPE_CHECKING:
    from lg_eval.experiments import ResultStore
    from lg_eval.reports import Report


T = TypeVar("T")

PASSED, GATE_FAILED, INPUT_ERROR, CASES_ERRORED, WRITE_FAILED, RUN_IN_USE = 0, 1, 2, 3, 4, 5
INTERRUPTED = 130

EXIT_CODES: tuple[tuple[int, str], ...] = (
    (PASSED, "passed, or the command did its job (failing scores alone, without a gate)"),
    (GATE_FAILED, "a gate failed (--fail-under) or compare found a regression"),
    (INPUT_ERROR, "bad input: usage, dataset, unknown run, store or checkpointer"),
    (CASES_ERRORED, "a case or swept thread errored (raised, timed out, script did not fit)"),
    (WRITE_FAILED, "a report or output file could not be written"),
    (RUN_IN_USE, "another live run holds the run id"),
    (INTERRUPTED, "interrupted (Ctrl-C, SIGTERM); the message says how to resume"),
)
"""The table above as ``(code, meaning)`` rows, for ``lg-eval --help``."""

stdout = Console(highlight=False)
stderr = Console(stderr=True, highlight=False)


def fail(message: str, code: int = INPUT_ERROR) -> NoReturn:
    """Print ``message`` (as plain text, anything that could act on a terminal made
    visible) to stderr and exit with ``code``. One line, never wrapped by lg_eval, so a
    path or URL in it can be copied whole (the terminal folds it for the eye)."""
    stderr.print(Text(visible(f"lg-eval: {message}"), style="bold red"), soft_wrap=True)
    raise typer.Exit(code)


def say(message: str) -> None:
    """A plain status line on stderr (kept out of stdout, which may be piped); thread ids
    and other text from strangers in it are made visible (:func:`lg_eval._visible.visible`),
    so no escape sequence, bidi override or control character reaches the terminal. Not
    wrapped by lg_eval, as :func:`fail`."""
    stderr.print(Text(visible(message)), soft_wrap=True)


def done(message: str) -> None:
    """A line that says what the command did (``wrote report.html``, ``3 threads scored``):
    on stdout, where a successful command's output goes, made visible as :func:`say`
    makes it; progress, warnings and errors stay on stderr."""
    stdout.print(Text(visible(message)), soft_wrap=True)


@contextmanager
def input_errors() -> Iterator[None]:
    """lg_eval's typed errors become a one-line message and their exit code: 4 for a file
    that could not be written, 5 for a run id another live run holds, else 2 (bad input)."""
    try:
        yield
    except LgEvalError as exc:
        fail(_one_line(exc), exit_code(exc))


def exit_code(exc: LgEvalError) -> int:
    """The exit code of a typed error (see the table above)."""
    if isinstance(exc, OutputWriteError):
        return WRITE_FAILED
    if isinstance(exc, RunInUseError):
        return RUN_IN_USE
    return INPUT_ERROR


def _one_line(exc: BaseException) -> str:
    text = safe_text(exc).strip() or type(exc).__name__
    return text if "\n" not in text else text.replace("\n", " ")


def write_file(path: Path, text: str) -> None:
    """Write a report or output file whole or not at all (see :mod:`lg_eval._files`) and say
    where it went; a failure is one line on stderr and exit code 4 (``WRITE_FAILED``)."""
    with input_errors():
        write_atomic(path, text)
    done(f"wrote {path}")


def announce_new_folders(**files: str | Path | None) -> None:
    """Say which folder a command that writes a store will create for each SQLite file it
    was given (``results_store=URL``, ``checkpointer=URL``): a typo in a path otherwise
    makes a folder silently. Folders lg_eval creates are owner-only (0700)."""
    for what, url in files.items():
        folder = new_folder(url)
        if folder is not None:
            say(f"creating folder {folder} for the {what.replace('_', ' ')}")


def parse_pairs(items: list[str], option: str, convert: Callable[[str], T]) -> dict[str, T]:
    """``["key=value", ...]`` as a dict, values converted; a malformed item is a usage error."""
    pairs: dict[str, T] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            fail(f"{option} takes KEY=VALUE, got {item!r}")
        try:
            pairs[key] = convert(value)
        except ValueError:
            fail(f"{option} {item!r}: {value!r} is not a valid value")
    return pairs


@contextmanager
def readable_warnings() -> Iterator[None]:
    """Inside, a Python warning is one line on stderr (``lg-eval: warning: Type: text``),
    once per text, never the raw ``file:line: Category: text`` and source line; the
    filters a command sets inside (``run`` records extraction warnings in its report,
    ``--quiet`` ignores them all) are undone on exit."""
    shown: set[str] = set()

    def show(message: Warning | str, category: type[Warning], *_: object, **__: object) -> None:
        line = _one_line(message) if isinstance(message, Warning) else " ".join(message.split())
        text = f"warning: {category.__name__}: {line}"
        if text not in shown:
            shown.add(text)
            say(f"lg-eval: {text}")

    with warnings.catch_warnings():
        warnings.showwarning = show
        yield


def quiet_warnings() -> None:
    """Ignore every warning from here on (``--quiet``; see :func:`readable_warnings`)."""
    warnings.simplefilter("ignore")


def interactive() -> bool:
    """Whether stderr is a terminal (live progress) or a log (plain lines)."""
    return sys.stderr.isatty()


def renderers() -> dict[str, Callable[[Report], str]]:
    """The report's file renderings by format name (imported on first use: a command that
    writes no report, ``lg-eval --help`` included, starts without them)."""
    from lg_eval.reports import render_html, render_json, render_junit, render_markdown

    return {"html": render_html, "md": render_markdown, "json": render_json, "junit": render_junit}


def write_reports(
    report: Report,
    store: ResultStore,
    *,
    json: Path | None = None,
    html: Path | None = None,
    md: Path | None = None,
    junit: Path | None = None,
) -> None:
    """Write each format whose file was given, listing every result of ``report``'s run as
    ``store`` holds it: the JSON a result at a time as it is read; HTML, Markdown and JUnit
    from one report that holds them all (made only when one of them is asked)."""
    from lg_eval.reports import ReportCase, write_json

    every = report.model_copy(update={"cases_total": None})

    def cases() -> Iterator[ReportCase]:
        return (ReportCase.of(result) for result in store.iter_results(report.info.run_id))

    if json is not None:
        with input_errors(), atomic_writer(json) as out:
            write_json(every, out, cases=cases())
        done(f"wrote {json}")
    whole = [(name, path) for name, path in (("html", html), ("md", md), ("junit", junit)) if path]
    if whole:
        every = every.model_copy(update={"cases": list(cases())})
        for name, path in whole:
            write_file(path, renderers()[name](every))
