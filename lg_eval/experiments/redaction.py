"""What never reaches the results store: user-chosen patterns, and secrets from the environment.

:func:`make_redactor` turns the runner's ``redact=`` argument (a ``str -> str``
callable, or a list of regular expressions whose matches become ``[REDACTED]``)
into one function; :func:`redact_strings` applies it to every string inside a
JSON-like value. :func:`scrub_secrets` hides, in a run's stored configuration,
any value of an environment variable named ``*_KEY``, ``*_TOKEN``, ``*_SECRET``
or ``*PASSWORD*``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from lg_eval.errors import InvalidOptionError
from lg_eval.experiments.results import CaseResult

Redactor = Callable[[str], str]
REDACTED = "[REDACTED]"
SECRET_NAME = re.compile(r"(_KEY|_TOKEN|_SECRET)$|PASSWORD", re.IGNORECASE)
_MIN_SECRET = 4  # shorter values would scrub ordinary words


RedactOption = Redactor | Sequence[str | re.Pattern[str]] | None
"""What ``redact=`` takes: a ``str -> str`` function, regex patterns, or None."""


def make_redactor(redact: Redactor | Sequence[str | re.Pattern[str]] | None) -> Redactor | None:
    """One ``str -> str`` function for ``redact=`` (None: nothing is redacted)."""
    if redact is None:
        return None
    if callable(redact):
        return redact
    if isinstance(redact, str) or not isinstance(redact, Sequence):
        raise InvalidOptionError(
            "redact= takes a function str -> str or a list of regular expressions, "
            f"not {type(redact).__name__}."
        )
    try:
        patterns = [re.compile(p) if isinstance(p, str) else p for p in redact]
    except re.error as exc:
        raise InvalidOptionError(f"redact= has an invalid regular expression: {exc}.") from exc
    if not patterns:
        return None
    combined = re.compile("|".join(f"(?:{p.pattern})" for p in patterns))
    return lambda text: combined.sub(REDACTED, text)


def redact_strings(value: Any, redactor: Redactor | None) -> Any:
    """``value`` (JSON-like) with ``redactor`` applied to every string in it, keys included."""
    if redactor is None:
        return value
    if isinstance(value, str):
        return redactor(value)
    if isinstance(value, Mapping):
        return {
            redactor(k) if isinstance(k, str) else k: redact_strings(v, redactor)
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [redact_strings(item, redactor) for item in value]
    return value


def secret_values(environ: Mapping[str, str] | None = None) -> list[str]:
    """Values of environment variables whose names mark them as secrets, longest first."""
    env = os.environ if environ is None else environ
    found = {v for k, v in env.items() if SECRET_NAME.search(k) and len(v) >= _MIN_SECRET}
    return sorted(found, key=len, reverse=True)


def scrub_secrets(value: Any, environ: Mapping[str, str] | None = None) -> Any:
    """``value`` with every secret environment value in its strings replaced by ``***``."""
    secrets = secret_values(environ)
    if not secrets:
        return value

    def scrub(text: str) -> str:
        for secret in secrets:
            text = text.replace(secret, "***")
        return text

    return redact_strings(value, scrub)


def redacted(result: CaseResult, redactor: Redactor | None) -> CaseResult:
    """``result`` with ``redactor`` applied to every string taken from the thread (and to
    the expectations shown beside the agent's answers and calls: a case's expected answer
    holds what the thread says)."""
    if redactor is None:
        return result
    data = result.model_dump(mode="json")
    fields = ("error", "turns", "output", "expected_output", "answers", "notes")
    for field in (*fields, "expected_tool_calls"):
        data[field] = redact_strings(data[field], redactor)
    for row in data["scores"]:
        for field in ("comment", "metadata", "error"):
            row[field] = redact_strings(row[field], redactor)
    return CaseResult.model_validate(data)


__all__ = [
    "REDACTED",
    "RedactOption",
    "Redactor",
    "make_redactor",
    "redact_strings",
    "redacted",
    "scrub_secrets",
    "secret_values",
]
