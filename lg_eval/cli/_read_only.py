"""What a command that only reads needs to exist before it opens it.

Opening a SQLite store or checkpointer creates the file (and its folder) when it is not
there: right for ``run``, which writes, and wrong for a command that only reads
(``runs``, ``report``, ``compare``, ``view``; ``extract``, ``dataset from-thread``, and
the threads ``sweep`` reads; ``replay`` refuses a missing production file itself). A typo
in a path would leave an empty
database behind and blame something else ("no thread 'x' in that checkpointer", "no run
'r1'"). These checks say instead that the file does not exist, exit 2, and create
nothing. Postgres URLs and anything that is not a SQLite file are left to the opener,
which says what is wrong with them.
"""

from __future__ import annotations

from pathlib import Path

from lg_eval._urls import DEFAULT_SQLITE_PATH, redact_url, sqlite_file
from lg_eval.cli._common import fail

DEFAULT_STORE_PATH = Path(".lg_eval") / "results.sqlite"
"""The results store a command uses without ``--store``."""


def existing_store(store: str | None) -> None:
    """Exit 2 unless the SQLite results store ``store`` names (default
    ``.lg_eval/results.sqlite``) is there."""
    path = sqlite_file(store) if store is not None else DEFAULT_STORE_PATH
    if path is not None and not path.exists():
        given = "" if store is None else f" ({redact_url(store)})"
        fail(
            f"no results store at {path}{given}: the file does not exist. Run `lg-eval run "
            "DATASET` here first, or pass --store with the store's URL."
        )


def existing_checkpointer(url: str | None, option: str = "--checkpointer") -> None:
    """Exit 2 unless the SQLite checkpointer ``url`` names (default
    ``.lg_eval/checkpoints.sqlite``) is there."""
    if url is not None and "://" not in url:
        return  # a checkpointer is named by URL only: a bare path is the opener's to refuse
    path = sqlite_file(url) if url is not None else DEFAULT_SQLITE_PATH
    if path is not None and not path.exists():
        given = f"{option} {redact_url(url)}" if url is not None else f"no {option}"
        fail(
            f"no checkpointer file at {path} ({given}): the file does not exist. Pass "
            f"{option} with the URL of the SQLite file (sqlite:///path) or Postgres server "
            "that holds the threads."
        )
