"""How every ``lg-eval`` command reads in ``--help``: plain usage lines and named metavars.

typer shows a required argument as ``{dataset}`` and an option's value by its Python
type (``<str>``, ``<list[str]>``, ``<float range>``). :class:`Command` shows them the
way shell tools do: ``Usage: lg-eval run [OPTIONS] DATASET`` and ``--graph MODULE:ATTR``,
``--threshold KEY=MIN``, ``--format [terminal|html|...]``. The names come from
:data:`METAVARS` (by option name) or, failing that, the option's own name in capitals.
"""

from __future__ import annotations

from typing import Any

from typer.core import TyperArgument, TyperCommand, TyperOption

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
