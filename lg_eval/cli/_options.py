"""The options more than one ``lg-eval`` command takes, each declared once.

An option that two commands share is one ``Annotated[..., typer.Option(...)]`` alias here,
and its value is read by one parser here, so its ``--help`` line and its error for a bad
value are the same words in every command that takes it. An option whose meaning differs
between commands (``run --quiet`` and ``replay --quiet``, ``--limit``, ``--full``) stays
with its command. Commands import this module whole (``from lg_eval.cli import _options
as shared``) and write ``store: shared.Store = None``. The LangGraph Server's ``--api-key``
and ``--header`` are declared, and parsed, in :mod:`lg_eval.cli._server`; ``--executor`` and
``--ray-address`` are read by :func:`lg_eval.cli._progress.build_executor`.

The parsers report a bad value as one line and exit code 2 (``INPUT_ERROR``), naming the
option and what it takes. Nothing here imports LangGraph until a parser needs it: the
commands that only read stores (``runs``, ``view``) start without it.
"""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
import yaml

from lg_eval.cli._common import fail, parse_pairs
from lg_eval.errors import InvalidOptionError

if TYPE_CHECKING:
    from lg_eval.judges import RateLimits
    from lg_eval.play import SimulatedReviewer

Store = Annotated[
    str | None, typer.Option(help="Results store URL (default .lg_eval/results.sqlite).")
]
RunId = Annotated[str | None, typer.Option(help="Name the run; the same id again resumes it.")]
JsonReport = Annotated[Path | None, typer.Option("--json", help="Write the JSON report.")]
HtmlReport = Annotated[Path | None, typer.Option(help="Write the HTML report.")]
Quiet = Annotated[bool, typer.Option(help="No progress and no summary table.")]
RedactPattern = Annotated[
    list[str] | None,
    typer.Option(help="A regex removed from thread text before it is stored (repeatable)."),
]
NoCache = Annotated[
    bool, typer.Option("--no-cache", help="Call judge models even for cached prompts.")
]
ExecutorName = Annotated[
    str,
    typer.Option(help="local (this process) or ray (the work in partitions on Ray)."),
]
RayAddress = Annotated[
    str | None, typer.Option(help="With --executor ray: the cluster (default: local Ray).")
]

JudgeRpm = Annotated[
    int | None,
    typer.Option("--judge-rpm", min=1, help="Judge requests per minute, across every worker."),
]
JudgeTpm = Annotated[
    int | None,
    typer.Option("--judge-tpm", min=1, help="Judge tokens per minute, across every worker."),
]
JudgeInFlight = Annotated[
    int | None,
    typer.Option("--judge-concurrency", min=1, help="Judge calls in flight at once, in all."),
]

# Which threads (sweep, replay) and how they are scored.
Evaluators = Annotated[
    list[str] | None,
    typer.Option(
        help="A registry name or module:attr (repeatable; default redundancy), with its "
        "options after a colon: call_budget:max_tool_calls=2 or "
        "keywords:keywords=[refund],mode=any (values read as YAML: numbers, true, [lists])."
    ),
]
Since = Annotated[
    str | None, typer.Option(help="Newest checkpoint at or after: 24h, 30m, 7d or ISO 8601.")
]
Until = Annotated[str | None, typer.Option(help="Newest checkpoint before this time.")]
Metadata = Annotated[
    list[str] | None,
    typer.Option(
        help="Only threads whose metadata has KEY=VALUE: one of their checkpoints', or a "
        "server thread's own (repeatable; all must match)."
    ),
]

# The simulated reviewer (run, replay).
ReviewerModel = Annotated[
    str | None,
    typer.Option(
        help="A chat model ('provider:model') playing --reviewer-persona, to answer a "
        "dataset's turns written `resume: {reviewer: true}` and the questions a replayed "
        "thread's humans never answered (without it a replay stops there)."
    ),
]
ReviewerPersona = Annotated[str, typer.Option(help="Who the simulated reviewer is.")]
ReviewerInstructions = Annotated[str, typer.Option(help="How the simulated reviewer decides.")]
DEFAULT_PERSONA = "a careful human reviewer"
DEFAULT_EVALUATORS = ("redundancy",)


def evaluator_specs(given: list[str] | None) -> list[str | dict[str, Any]]:
    """``--evaluator`` items as the library takes them: a name (``redundancy``,
    ``module:attr``) as it is, a name with options (``call_budget:max_tool_calls=2``) as
    ``{"name", "options"}``; the default (``redundancy``) when none is given. A malformed
    item is a usage error naming it."""
    return [_evaluator_spec(item) for item in given or DEFAULT_EVALUATORS]


_WITH_OPTIONS = re.compile(r"^(?P<name>[^=]+?):(?P<options>[A-Za-z_]\w*=.*)$", re.DOTALL)


def _evaluator_spec(item: str) -> str | dict[str, Any]:
    found = _WITH_OPTIONS.match(item)
    if found is None:
        return item
    options: dict[str, Any] = {}
    for pair in _top_level(found["options"], item):
        key, sep, text = pair.partition("=")
        key = key.strip()
        if not sep or not key.isidentifier():
            fail(f"--evaluator {item!r}: {pair!r} is not KEY=VALUE (options: NAME:K=V,K=V)")
        if key in options:
            fail(f"--evaluator {item!r}: option {key!r} is given twice")
        try:
            options[key] = yaml.safe_load(text) if text.strip() else ""
        except yaml.YAMLError:
            fail(f"--evaluator {item!r}: the value of {key!r}, {text!r}, is not valid YAML")
    return {"name": found["name"], "options": options}


def _top_level(text: str, item: str) -> list[str]:
    """``text`` cut at the commas outside brackets, braces and quotes."""
    parts, depth, quote, start = [], 0, "", 0
    for at, char in enumerate(text):
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char in "[{":
            depth += 1
        elif char in "]}":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[start:at])
            start = at + 1
    if quote or depth:
        fail(f"--evaluator {item!r}: an unclosed quote or bracket in its options")
    return [*parts, text[start:]]


def time_bound(option: str, value: str | None) -> datetime | None:
    """``--since`` / ``--until`` (``option``) as a time: a duration before now (``24h``) or
    ISO 8601 (UTC when it names no zone); a bad value is a usage error naming the option."""
    if value is None:
        return None
    from lg_eval.sweeps._listing import parse_time

    try:
        return parse_time(value)
    except InvalidOptionError as exc:
        fail(f"{option}: {exc}")


def metadata_filter(items: list[str] | None) -> dict[str, str] | None:
    """``--metadata KEY=VALUE`` items as the filter (None when none is given)."""
    return parse_pairs(items or [], "--metadata", str) or None


def judge_limits(rpm: int | None, tpm: int | None, in_flight: int | None) -> RateLimits | None:
    """The ``--judge-*`` options as ``judge_limits=`` (None when none is given)."""
    limits = {
        "requests_per_minute": rpm,
        "tokens_per_minute": tpm,
        "max_concurrent": in_flight,
    }
    given = {name: value for name, value in limits.items() if value is not None}
    if not given:
        return None
    from lg_eval.judges import RateLimits

    return RateLimits(**given)


def simulated_reviewer(
    model: str | None, persona: str, instructions: str
) -> SimulatedReviewer | None:
    """The ``--reviewer-*`` options as a reviewer (None without ``--reviewer-model``)."""
    if model is None:
        return None
    from lg_eval.play import SimulatedReviewer

    return SimulatedReviewer(model, persona=persona, instructions=instructions)
