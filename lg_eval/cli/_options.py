"""The options more than one ``lg-eval`` command takes, each declared once, and how every
command reads in ``--help``.

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

In ``--help``: plain usage lines and named metavars.
typer shows a required argument as ``{dataset}`` and an option's value by its Python
type (``<str>``, ``<list[str]>``, ``<float range>``). :class:`Command` shows them the
way shell tools do: ``Usage: lg-eval run [OPTIONS] DATASET`` and ``--graph MODULE:ATTR``,
``--threshold KEY=MIN``, ``--format [terminal|html|...]``. The names come from
:data:`METAVARS` (by option name) or, failing that, the option's own name in capitals.

Judges and people's labels, shared by ``run``, ``report`` and ``compare``:
``--min-judge-kappa`` (its option, its parser, its gate) and the report's calibration.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
import yaml
from typer.core import TyperArgument, TyperCommand, TyperOption

from lg_eval.cli._common import fail, parse_pairs, say
from lg_eval.errors import InvalidOptionError

if TYPE_CHECKING:
    from lg_eval.experiments import ResultStore
    from lg_eval.judges import RateLimits
    from lg_eval.play import SimulatedReviewer
    from lg_eval.reports import Report

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


METAVARS = {
    "graph": "MODULE:ATTR",
    "baseline": "MODULE:ATTR",
    "target": "URL",
    "thread": "THREAD_ID",
    "fork": "POINT",
    "checkpointer": "URL",
    "server": "URL",
    "assistant": "ID",
    "store": "URL",
    "threshold": "KEY=MIN",
    "metadata": "KEY=VALUE",
    "json_file": "FILE",
    "html": "FILE",
    "md": "FILE",
    "junit": "FILE",
    "output": "FILE",
    "redact_pattern": "REGEX",
    "reviewer_model": "PROVIDER:MODEL",
    "evaluator": "NAME",
    "since": "WHEN",
    "until": "WHEN",
    "timeout": "SECONDS",
    "tolerance": "DELTA",
    "fail_under": "RATE",
    "sample": "FRACTION",
    "ray_address": "ADDRESS",
    "scoring": "[auto|process|inline]",
    "executor": "[local|ray]",
    "concurrency": "N",
    "repetitions": "K",
    "retries": "N",
    "limit": "N",
    "partition_size": "N",
    "history": "N",
    "judge_rpm": "N",
    "judge_tpm": "N",
    "judge_concurrency": "N",
    "reviewer_persona": "TEXT",
    "reviewer_instructions": "TEXT",
    "langsmith_name": "NAME",
}
"""Metavars by parameter name, where the capitalised name would say less."""


def metavar(param: TyperOption | TyperArgument) -> str:
    """The name shown for the value of ``param``."""
    described = param.type_descriptor
    if isinstance(param, TyperOption) and described.is_choice and described.choices:
        return "[" + "|".join(str(getattr(c, "value", c)) for c in described.choices) + "]"
    name = param.name or "value"
    return METAVARS.get(name, name.upper())


class Command(TyperCommand):
    """A typer command whose usage line and option values read as in a man page."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for param in self.params:
            if isinstance(param, TyperArgument | TyperOption) and param.metavar is None:
                if isinstance(param, TyperOption) and (param.is_flag or param.count):
                    continue
                param.metavar = metavar(param)

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        """``[OPTIONS]`` then each argument: ``NAME``, ``[NAME]`` when optional, ``...`` when
        it repeats."""
        pieces = [self.options_metavar] if self.options_metavar else []
        for param in self.get_params(ctx):
            if isinstance(param, TyperArgument):
                name = param.metavar or (param.name or "ARG").upper()
                name = name if param.required else f"[{name}]"
                pieces.append(name + ("..." if param.nargs != 1 else ""))
        return pieces


MinJudgeKappa = Annotated[
    list[str] | None,
    typer.Option(
        metavar="KEY=MIN",
        help="Trust the gate only if judge KEY agrees with people's labels in the store at "
        "Cohen's kappa >= MIN (-1..1; repeatable): exit 1 when it was never calibrated "
        "(no label pairs with its verdicts) or falls short. See lg-eval calibrate.",
    ),
]


def judge_minimums(items: list[str] | None) -> dict[str, float]:
    """``--min-judge-kappa KEY=MIN`` items, each minimum in [-1, 1]; a bad one is a usage
    error (exit 2), found before anything runs."""
    minimums = parse_pairs(items or [], "--min-judge-kappa", float)
    for key, minimum in minimums.items():
        if not -1 <= minimum <= 1:
            fail(f"--min-judge-kappa {key}={minimum:g}: kappa is between -1 and 1")
    return minimums


def judges_trusted(store: ResultStore, minimums: dict[str, float], keys: Collection[str]) -> bool:
    """Whether every judge in ``minimums`` agrees with people enough to gate on; each one
    that does not is said on stderr. A key the run does not have is a usage error (exit 2):
    a misspelt key would otherwise gate on nothing."""
    from lg_eval.labels import judge_gate_problems

    for key in minimums:
        if key not in keys:
            known = ", ".join(sorted(keys)) or "none"
            fail(f"--min-judge-kappa {key}: the run has no feedback key {key!r} (keys: {known})")
    _, problems = judge_gate_problems(store, minimums)
    for problem in problems:
        say(f"lg-eval: {problem}")
    return not problems


def calibrated(report: Report, store: ResultStore) -> Report:
    """``report`` with its labelled judges' agreement with people (see
    :func:`lg_eval.reports.with_calibration`)."""
    from lg_eval.reports import with_calibration

    return with_calibration(report, store)
