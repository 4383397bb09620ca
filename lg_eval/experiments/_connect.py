"""Opening the results store's database, and the driver's errors as :class:`StoreError`.

A store URL comes from a command line and its errors end up in CI logs, so
nothing a driver says about it is shown raw: psycopg quotes the DSN (password
included) in its messages, and SQLite's ``file is not a database`` is a
traceback unless caught. Every failure of the database, at open time or
mid-run (a corrupt file, a server that went away), becomes a
:class:`~lg_eval.errors.StoreError` whose message names the store by its
redacted URL, with the driver's words scrubbed of the password and no
exception chained (a chained psycopg error would print the DSN again).
"""

from __future__ import annotations

import logging
import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lg_eval._files import private_dirs
from lg_eval.errors import InvalidOptionError, StoreError
from lg_eval.experiments._upstream import (
    is_keyword_dsn,
    is_postgres,
    keyword_dsn_problem,
    malformed_url_problem,
    redact_url,
    scrub,
    sqlite_path,
)

CONNECT_TIMEOUT = 10
"""Seconds to wait for a Postgres server before the store gives up."""


@dataclass(frozen=True)
class Connection:
    """An open DB-API connection and what the store needs to know about it."""

    connection: Any
    url: str
    postgres: bool
    errors: tuple[type[BaseException], ...]


def connect(url: str) -> Connection:
    """Open the database ``url`` names (``sqlite:///``, a path, ``postgresql://``).

    Raises:
        StoreError: the URL is malformed, the server cannot be reached, or the
            file is not a SQLite database (the message never holds the password).
        InvalidOptionError: ``url`` names something that cannot hold results
            (``memory://``, a libpq keyword DSN).
    """
    problem = malformed_url_problem(url)
    if problem is not None:
        raise InvalidOptionError(f"store: {problem}")
    if is_postgres(url):
        return _postgres(url)
    if is_keyword_dsn(url):
        raise InvalidOptionError(f"store: {keyword_dsn_problem(url)}")
    path = sqlite_path(url)
    if path is None:
        raise InvalidOptionError(
            f"store={redact_url(url)!r}: use sqlite:///file.sqlite, a path, or postgresql://..."
        )
    with driver_errors(url, (sqlite3.Error, OSError), opening=True):
        connection = sqlite_connection(path)
    return Connection(connection, url, postgres=False, errors=(sqlite3.Error,))


def _postgres(url: str) -> Connection:
    try:
        import psycopg
    except ImportError:  # pragma: no cover - the postgres extra is missing
        raise StoreError(
            "A Postgres results store needs psycopg: pip install 'lg-eval[postgres]'."
        ) from None
    kwargs: dict[str, Any] = (
        {} if "connect_timeout=" in url else {"connect_timeout": CONNECT_TIMEOUT}
    )
    # psycopg logs a lost connection itself ("error ignored terminating <Pipeline>"), which
    # Python prints raw when no logging is configured; the StoreError says it once instead.
    _quiet_unless_configured(logging.getLogger("psycopg"))
    with driver_errors(url, (psycopg.Error,), opening=True):
        connection = psycopg.connect(url, **kwargs)
    return Connection(connection, url, postgres=True, errors=(psycopg.Error,))


def _quiet_unless_configured(logger: logging.Logger) -> None:
    """A NullHandler on ``logger``: its records still reach the handlers an application
    configured, but no longer Python's last-resort print to stderr."""
    if not any(isinstance(handler, logging.NullHandler) for handler in logger.handlers):
        logger.addHandler(logging.NullHandler())


@contextmanager
def driver_errors(
    url: str, errors: tuple[type[BaseException], ...], *, opening: bool = False
) -> Iterator[None]:
    """The driver's ``errors`` raised inside as a :class:`StoreError` naming the store;
    ``opening``: while connecting (nothing of a run can have been stored yet)."""
    try:
        yield
    except errors as exc:
        raise StoreError(store_problem(url, exc, opening=opening)) from None


def store_problem(url: str, exc: BaseException, *, opening: bool = False) -> str:
    """What went wrong with the store at ``url``, in one line, without its password."""
    detail = " ".join(scrub(str(exc), url).split()).rstrip(".") or type(exc).__name__
    where = redact_url(url)
    if isinstance(exc, sqlite3.DatabaseError) and not isinstance(exc, sqlite3.OperationalError):
        return (
            f"the results store {where} is not a usable SQLite database ({detail}); it may be "
            "corrupt or another kind of file: move it aside, or pass another --store."
        )
    if isinstance(exc, OSError):
        return f"cannot open the results store {where}: {exc.strerror or detail}."
    if opening:
        return (
            f"cannot open the results store {where}: {type(exc).__name__}: {detail}. Check the "
            "URL (postgresql://user:password@host:port/dbname, special characters in the "
            "password percent-encoded) and that the server is running."
        )
    return (
        f"the results store {where} failed: {type(exc).__name__}: {detail}. What was stored "
        "is kept: once the database is reachable, run the same command with the same run id "
        "to resume."
    )


def sqlite_connection(path: Path) -> sqlite3.Connection:
    """A connection to ``path``, the file made ``0600`` and the folders lg_eval creates
    ``0700`` (whatever the umask)."""
    private_dirs(path.parent)
    if not path.exists():
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
    connection = sqlite3.connect(path, check_same_thread=False, timeout=30)
    try:
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("PRAGMA synchronous=NORMAL")
    except BaseException:
        connection.close()
        raise
    return connection


__all__ = ["Connection", "connect", "driver_errors", "sqlite_connection", "store_problem"]
