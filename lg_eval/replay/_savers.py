"""The two checkpointers of a replay: opened from URLs, told apart, and the threads listed.

The production checkpointer is listed as a sweep lists it (SQLite and Postgres, with the
time and metadata filters), or through its ``list`` for any other saver. The target must
not store where the production one does: the same object, the same SQLite file (device and
inode: a hard link, a symlink or another spelling of the path is the same file), or the
same Postgres database (the server's system identifier, the database and the schema, asked
over real connections: ``localhost`` and ``127.0.0.1`` are one server). The target is
checked before it is opened, so a refused target is never written to, not even by
LangGraph's table setup.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack
from datetime import datetime
from typing import Any

from lg_eval._urls import parse_checkpointer_url, redact_url
from lg_eval.errors import InvalidOptionError, SweepError
from lg_eval.play import open_checkpointer, storage_of
from lg_eval.sweeps._listing import list_threads, saver_kind


def open_saver(stack: ExitStack, saver: Any, what: str, *, existing: bool = False) -> Any:
    """``saver`` itself, or the saver its URL names (closed with ``stack``); ``existing``:
    a SQLite file that is not there is an error, not a new empty file (production is only
    read: a typo in its path must not create a file or a folder)."""
    if isinstance(saver, str):
        path = parse_checkpointer_url(saver).path
        if existing and path is not None and not path.is_file():
            raise InvalidOptionError(
                f"{what}: no SQLite file at {path} ({redact_url(saver)}); the production "
                "threads are only read, so nothing is created: check the path."
            )
        return stack.enter_context(open_checkpointer(saver))
    if saver is None or not hasattr(saver, "put"):
        raise InvalidOptionError(f"{what}: a checkpointer (saver) or its URL, not {saver!r}.")
    if type(saver).__module__.endswith(".aio"):
        raise InvalidOptionError(
            f"{what}: a {type(saver).__name__} is async only; replay reads and writes "
            "checkpoints with the sync API: pass a sync saver or the URL."
        )
    return saver


def refuse_production_target(source: Any, target: Any) -> None:
    """Refuse a ``target`` (a saver, or its URL, not opened yet) that stores where the
    opened production saver ``source`` does.

    Raises:
        InvalidOptionError: ``target`` is the production checkpointer, however spelled.
        CheckpointerError: a Postgres target cannot be reached to ask who it is.
    """
    where = storage_of(source) if target is not source else ("saver",)
    if where is None or (target is not source and storage_of(target) != where):
        return
    shown = redact_url(target) if isinstance(target, str) else type(target).__name__
    kind = {"sqlite": "SQLite file", "postgres": "Postgres database"}.get(where[0], "saver")
    raise InvalidOptionError(
        f"target: {shown} is the production checkpointer itself (the same {kind}); the "
        "replay threads go to another checkpointer than the production one (default "
        "memory://): pass a different saver or URL. Nothing was written."
    )


def all_threads(
    saver: Any,
    since: datetime | None,
    until: datetime | None,
    metadata: Mapping[str, Any] | None,
) -> list[str]:
    """The ids of the threads to replay: a sweep's listing on SQLite and Postgres; every
    thread of any other saver (whose threads cannot be filtered by time or metadata)."""
    try:
        saver_kind(saver)
    except SweepError:
        if since or until or metadata:
            raise
        return sorted({t.config["configurable"]["thread_id"] for t in _roots(saver)})
    pages = list_threads(saver, since=since, until=until, metadata=metadata)
    return [head.thread_id for page in pages for head in page]


def named_threads(saver: Any, thread_ids: Sequence[str], where: str) -> list[str]:
    """``thread_ids``, once each, in order, when the production saver holds every one.

    Raises:
        InvalidOptionError: a named thread has no checkpoint there (``where``: how the
            saver is shown).
    """
    named = list(dict.fromkeys(thread_ids))
    missing = [t for t in named if saver.get_tuple({"configurable": {"thread_id": t}}) is None]
    if missing:
        listed = ", ".join(repr(t) for t in missing[:5]) + (", ..." if len(missing) > 5 else "")
        raise InvalidOptionError(
            f"thread_ids (--thread): no thread {listed} in the checkpointer {where}; name "
            "threads it holds."
        )
    return named


def _roots(saver: Any) -> Iterator[Any]:
    for tup in saver.list(None):
        if tup.config["configurable"].get("checkpoint_ns", "") == "":
            yield tup
