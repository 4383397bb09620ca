"""What a case is played on: the checkpointer a URL names, and the graph bound to it.

Checkpointers. Open the checkpointer a URL names (see :mod:`lg_eval._urls`), sync or async.

SQLite files and the directories leading to them that lg_eval creates are
owner-only (0600 / 0700, the ``-wal`` and ``-shm`` siblings too): checkpoints
hold whole conversations. Postgres errors are re-raised as
:class:`~lg_eval.errors.CheckpointerError` with the URL redacted and without the
driver's original exception attached, because psycopg echoes the DSN,
password included.

Targets. The graph, named by reference or given as an object, in one of three forms, as a
``"module:attr"`` string or as the Python object itself:

* a compiled graph (``Pregel``): rebound to the player's checkpointer with
  ``graph.copy(update={"checkpointer": saver})``, so the original is untouched;
* an uncompiled ``StateGraph`` builder: compiled with the checkpointer;
* a factory: called as ``factory(checkpointer=saver)``, returning either of the
  above (the example graphs' ``build`` functions are factories).

:func:`~lg_eval._importing.import_reference` (re-exported here) is the one place
lg_eval imports code named by data, and the one place that refuses to when the data
did not come from a trusted local file.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import StateGraph
from langgraph.pregel import Pregel

from lg_eval._files import private_dirs
from lg_eval._importing import import_reference as import_reference
from lg_eval._urls import CheckpointerURL, parse_checkpointer_url, scrub
from lg_eval.errors import CheckpointerError, InvalidOptionError
from lg_eval.play._models import Graph, Saver

FILE_MODE = 0o600
SQLITE_SIBLINGS = ("-wal", "-shm", "-journal")
PG_CONNECT_TIMEOUT = 10
"""Seconds to wait for a Postgres server before giving up (unless the URL says otherwise)."""


@contextmanager
def open_checkpointer(url: str | None = None) -> Iterator[Saver]:
    """A ready checkpointer for ``url`` (tables set up), closed on exit.

    ``None`` is the embedded SQLite file ``.lg_eval/checkpoints.sqlite`` under
    the current directory; ``memory://`` an ``InMemorySaver``.
    """
    parsed = parse_checkpointer_url(url)
    if parsed.kind == "memory":
        yield InMemorySaver()
        return
    if parsed.kind == "sqlite":
        from langgraph.checkpoint.sqlite import SqliteSaver

        path, created = _prepare_sqlite(parsed)
        try:
            conn = sqlite3.connect(str(path), check_same_thread=False)
            saver = SqliteSaver(conn)
            saver.setup()
        except sqlite3.Error as exc:
            raise _sqlite_error(parsed, exc) from exc
        try:
            _restrict_siblings(path, created)
            yield saver
        finally:
            conn.close()
            _restrict_siblings(path, created)
        return
    with _postgres_sync(parsed) as pg_saver:
        yield pg_saver


@asynccontextmanager
async def aopen_checkpointer(url: str | None = None) -> AsyncIterator[Saver]:
    """Async twin of :func:`open_checkpointer` (``AsyncSqliteSaver`` / ``AsyncPostgresSaver``)."""
    parsed = parse_checkpointer_url(url)
    if parsed.kind == "memory":
        yield InMemorySaver()
        return
    if parsed.kind == "sqlite":
        import aiosqlite
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

        path, created = _prepare_sqlite(parsed)
        try:
            conn = await aiosqlite.connect(str(path))
        except sqlite3.Error as exc:
            raise _sqlite_error(parsed, exc) from exc
        try:
            saver = AsyncSqliteSaver(conn)
            try:
                await saver.setup()
            except sqlite3.Error as exc:
                raise _sqlite_error(parsed, exc) from exc
            _restrict_siblings(path, created)
            yield saver
        finally:
            await conn.close()
            _restrict_siblings(path, created)
        return
    _require_postgres(parsed)
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
    from psycopg import AsyncConnection
    from psycopg.rows import dict_row

    problem = None
    aconn: Any = None
    try:
        aconn = await AsyncConnection.connect(
            parsed.dsn or "", row_factory=dict_row, **_pg_kwargs(parsed)
        )
        asaver = AsyncPostgresSaver(aconn)
        while not await _atry_setup_lock(aconn):
            await asyncio.sleep(SETUP_POLL)  # see SETUP_LOCK
        try:
            await asaver.setup()
        finally:
            await aconn.execute(_UNLOCK_SETUP, (SETUP_LOCK,))
    except Exception as exc:  # psycopg's messages echo the DSN: never chain them
        problem = _pg_problem(parsed, exc)
    if problem is not None:
        if aconn is not None:
            await aconn.close()
        raise problem
    try:
        yield asaver
    finally:
        await aconn.close()


@contextmanager
def _postgres_sync(parsed: CheckpointerURL) -> Iterator[Saver]:
    _require_postgres(parsed)
    from langgraph.checkpoint.postgres import PostgresSaver
    from psycopg import Connection
    from psycopg.rows import dict_row

    problem = None
    conn: Any = None
    try:
        conn = Connection.connect(parsed.dsn or "", row_factory=dict_row, **_pg_kwargs(parsed))
        saver = PostgresSaver(conn)
        while not conn.execute(_LOCK_SETUP, (SETUP_LOCK,)).fetchone()["locked"]:
            time.sleep(SETUP_POLL)  # see SETUP_LOCK
        try:
            saver.setup()
        finally:
            conn.execute(_UNLOCK_SETUP, (SETUP_LOCK,))
    except Exception as exc:  # psycopg's messages echo the DSN: never chain them
        problem = _pg_problem(parsed, exc)
    if problem is not None:
        if conn is not None:
            conn.close()
        raise problem
    try:
        yield saver
    finally:
        conn.close()


SETUP_LOCK = 0x6C675F6576616C
"""The Postgres advisory lock held while LangGraph's migrations run: ``setup()`` is not safe
to run at once from two connections on a fresh database (both insert the same
``checkpoint_migrations`` row), which is what Ray workers opening one URL together do.
It is taken by polling ``pg_try_advisory_lock``, not by waiting in ``pg_advisory_lock``:
a migration runs ``CREATE INDEX CONCURRENTLY``, which waits for every open transaction,
including a session blocked on the lock (a deadlock)."""
SETUP_POLL = 0.02
_LOCK_SETUP = "SELECT pg_try_advisory_lock(%s) AS locked"
_UNLOCK_SETUP = "SELECT pg_advisory_unlock(%s)"


async def _atry_setup_lock(aconn: Any) -> bool:
    row = await (await aconn.execute(_LOCK_SETUP, (SETUP_LOCK,))).fetchone()
    return bool(row["locked"])


def _require_postgres(parsed: CheckpointerURL) -> None:
    """A clear error when the ``postgres`` extra is not installed."""
    try:
        import langgraph.checkpoint.postgres  # noqa: F401
        import psycopg  # noqa: F401
    except ImportError as exc:
        raise CheckpointerError(
            f"{parsed.redacted} needs the Postgres extra: pip install 'lg-eval[postgres]' "
            f"(missing {exc.name})."
        ) from None


def _pg_kwargs(parsed: CheckpointerURL) -> dict[str, Any]:
    """What LangGraph's savers expect of a connection, plus a connect timeout."""
    kwargs: dict[str, Any] = {"autocommit": True, "prepare_threshold": 0}
    if "connect_timeout=" not in (parsed.dsn or ""):
        kwargs["connect_timeout"] = PG_CONNECT_TIMEOUT
    return kwargs


def _pg_problem(parsed: CheckpointerURL, exc: BaseException) -> CheckpointerError:
    detail = " ".join(scrub(str(exc), parsed.url).split())
    return CheckpointerError(
        f"cannot open the Postgres checkpointer {parsed.redacted}: {type(exc).__name__}: "
        f"{detail}. Check that the server is running and the URL's user, host, port and "
        "database are right."
    )


def _sqlite_error(parsed: CheckpointerURL, exc: sqlite3.Error) -> CheckpointerError:
    return CheckpointerError(
        f"cannot open the SQLite checkpointer {parsed.redacted} ({parsed.path}): {exc}."
    )


def _prepare_sqlite(parsed: CheckpointerURL) -> tuple[Path, bool]:
    """The absolute file path, its missing parent directories made 0700 and the file 0600.

    Returns whether lg_eval created the file (an existing file keeps its mode).
    """
    assert parsed.path is not None
    path = parsed.path if parsed.path.is_absolute() else Path.cwd() / parsed.path
    try:
        private_dirs(path.parent)
        if path.exists():
            return path, False
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, FILE_MODE)
        os.close(fd)
        os.chmod(path, FILE_MODE)
    except OSError as exc:
        raise CheckpointerError(
            f"cannot create the SQLite checkpointer file {path} for {parsed.redacted}: "
            f"{exc.strerror or exc}."
        ) from exc
    return path, True


def _restrict_siblings(path: Path, created: bool) -> None:
    """Make the journal files SQLite keeps next to a file lg_eval created owner-only too."""
    if not created:
        return
    for suffix in SQLITE_SIBLINGS:
        sibling = path.with_name(path.name + suffix)
        try:
            if sibling.exists():
                os.chmod(sibling, FILE_MODE)
        except OSError:  # it may vanish between the check and the chmod
            continue


Storage = tuple[str, ...]
"""Where a checkpointer keeps its rows, as the storage itself tells: ``("sqlite", device,
inode)`` of the file, ``("postgres", system identifier, database, schema)`` of the server."""

_IDENTIFY = (
    "SELECT (SELECT system_identifier FROM pg_control_system())::text AS server,"
    " current_database() AS db, current_schema() AS schema"
)
_IDENTIFY_FALLBACK = (  # a server that hides pg_control_system(): its start time and port
    "SELECT pg_postmaster_start_time()::text || ' ' || current_setting('port') AS server,"
    " current_database() AS db, current_schema() AS schema"
)


def storage_of(where: Any) -> Storage | None:
    """Where ``where`` (an open saver, or a checkpointer URL) keeps its rows, asked of the
    storage itself, so that no spelling can hide that two names are one place: a SQLite
    file by device and inode (hard links, symlinks, relative paths and ``file:`` URIs all
    resolve to them), a Postgres database by the server's ``system_identifier``, the
    database and the schema, read over a real connection (``localhost`` and
    ``127.0.0.1``, ``hostaddr=`` or any query parameter give the same answer).

    None: the rows are private to this process (``memory://``, an in-memory SQLite
    database, a SQLite file that does not exist yet) or the saver's storage is unknown.
    A URL is only read: a missing file is not created, and no table is set up.

    Raises:
        CheckpointerURLError: ``where`` is a malformed URL.
        CheckpointerError: the Postgres server cannot be reached.
    """
    if isinstance(where, str):
        return _url_storage(parse_checkpointer_url(where))
    conn = getattr(where, "conn", None)
    if isinstance(conn, sqlite3.Connection):
        files = [row[2] for row in conn.execute("PRAGMA database_list") if row[1] == "main"]
        return _file_storage(Path(files[0])) if files and files[0] else None
    cursor = getattr(where, "_cursor", None)  # a PostgresSaver: its lock and its pool
    if cursor is not None and (hasattr(conn, "info") or hasattr(conn, "connection")):
        with cursor() as cur:
            return _pg_storage(cur)
    return None


def _url_storage(parsed: CheckpointerURL) -> Storage | None:
    if parsed.kind == "memory":
        return None
    if parsed.kind == "sqlite":
        assert parsed.path is not None
        return _file_storage(parsed.path if parsed.path.is_absolute() else Path.cwd() / parsed.path)
    _require_postgres(parsed)
    from psycopg import Connection

    problem = None
    try:
        with (
            Connection.connect(parsed.dsn or "", **_pg_kwargs(parsed)) as conn,
            conn.cursor() as cur,
        ):
            return _pg_storage(cur)
    except Exception as exc:  # psycopg's messages echo the DSN: never chain them
        problem = _pg_problem(parsed, exc)
    raise problem


def _file_storage(path: Path) -> Storage | None:
    try:
        found = os.stat(path)
    except OSError:
        return None  # not there (yet): nothing else can be using it
    return ("sqlite", str(found.st_dev), str(found.st_ino))


def _pg_storage(cur: Any) -> Storage:
    """The identity of the server and database ``cur`` is connected to."""
    for statement in (_IDENTIFY, _IDENTIFY_FALLBACK):
        try:
            cur.execute(statement)
            row = cur.fetchone()
        except Exception:
            cur.connection.rollback()
            continue
        values = list(row.values()) if isinstance(row, dict) else list(row)
        return ("postgres", *(str(value) for value in values))
    info = cur.connection.info  # neither answered: the address the connection reached
    return ("postgres", f"{info.host}:{info.port}", str(info.dbname), "")


def resolve_target(target: Any, checkpointer: Saver, *, allow_code: bool = True) -> Graph:
    """A compiled graph bound to ``checkpointer``, from any of the three target forms.

    ``allow_code`` only matters for a string: pass ``dataset.allows_code`` when the
    reference came from a dataset.
    """
    label = repr(target) if isinstance(target, str) else type(target).__name__
    obj = (
        import_reference(target, what="target", allow_code=allow_code)
        if isinstance(target, str)
        else target
    )
    bound = _bind(obj, checkpointer)
    if bound is not None:
        return bound
    if callable(obj):
        try:
            built = obj(checkpointer=checkpointer)
        except TypeError as exc:
            raise InvalidOptionError(
                f"target {label}: calling it as a factory, factory(checkpointer=...), failed "
                f"with TypeError: {exc}."
            ) from exc
        bound = _bind(built, checkpointer)
        if bound is not None:
            return bound
        raise InvalidOptionError(
            f"target {label}: the factory returned a {type(built).__name__}, not a compiled "
            "graph or a StateGraph builder."
        )
    raise InvalidOptionError(
        f"target {label} is a {type(obj).__name__}; give a compiled graph, a StateGraph "
        "builder, or a factory called as factory(checkpointer=...)."
    )


def _bind(obj: Any, checkpointer: Saver) -> Graph | None:
    if isinstance(obj, Pregel):
        return obj if obj.checkpointer is checkpointer else obj.copy({"checkpointer": checkpointer})
    if isinstance(obj, StateGraph):
        return obj.compile(checkpointer=checkpointer)
    return None
