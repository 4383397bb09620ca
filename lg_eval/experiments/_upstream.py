"""The one place ``lg_eval.experiments`` meets ``lg_eval.datasets``, ``lg_eval.play`` and
``lg_eval.urls``: every other module of the package imports what it needs of them from here
(``tests/test_layout.py`` checks it), so what the runner depends on below it is one list."""

from __future__ import annotations

from pathlib import Path

from lg_eval.datasets import Case, Dataset, EvaluatorRef, Expected, dataset_hash, load_dataset
from lg_eval.errors import InvalidOptionError, ScriptMismatchError
from lg_eval.play import (
    Graph,
    PlayedCase,
    Reviewer,
    Saver,
    aopen_checkpointer,
    import_reference,
    open_checkpointer,
    playing,
    resolve_target,
)
from lg_eval.urls import (
    is_keyword_dsn,
    keyword_dsn_problem,
    malformed_url_problem,
    parse_checkpointer_url,
    redact_url,
    scrub,
)

DEFAULT_CHECKPOINTER = parse_checkpointer_url(None).url


def is_postgres(url: str) -> bool:
    """Whether ``url`` names a Postgres server."""
    return url.partition("://")[0].lower() in ("postgresql", "postgres")


def sqlite_path(url: str) -> Path | None:
    """The file a ``sqlite:///rel`` / ``sqlite:////abs`` URL or a plain path names (None: not
    SQLite)."""
    if "://" not in url:
        return Path(url)
    scheme = url.partition("://")[0].lower()
    if scheme == "memory":
        raise InvalidOptionError(
            "memory:// keeps nothing; the results store needs a file or Postgres."
        )
    if scheme != "sqlite":
        raise InvalidOptionError(
            f"store={redact_url(url)!r}: {scheme!r} is not a results store scheme; use "
            "sqlite:///file.sqlite, a path, or postgresql://..."
        )
    return parse_checkpointer_url(url).path


__all__ = [
    "DEFAULT_CHECKPOINTER",
    "Case",
    "Dataset",
    "EvaluatorRef",
    "Expected",
    "Graph",
    "PlayedCase",
    "Reviewer",
    "Saver",
    "ScriptMismatchError",
    "aopen_checkpointer",
    "dataset_hash",
    "import_reference",
    "is_keyword_dsn",
    "is_postgres",
    "keyword_dsn_problem",
    "load_dataset",
    "malformed_url_problem",
    "open_checkpointer",
    "parse_checkpointer_url",
    "playing",
    "redact_url",
    "resolve_target",
    "scrub",
    "sqlite_path",
]
