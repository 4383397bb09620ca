"""Deployed graphs: threads of a LangGraph Server, read into trajectories.

:func:`extract_server_thread` / :func:`aextract_server_thread` read a thread through
the server's threads API (``langgraph-sdk``) into the same
:class:`~lg_eval.ThreadTrajectory` :func:`lg_eval.extract_thread` gives for the same
run on a local checkpointer: the server's history is restated as checkpoint records
and assembled by the one assembler. :class:`ServerConnection` holds the URL and the
credentials (never shown or stored). :func:`list_server_threads` lists the threads a
sweep scores (paged search, each with its newest checkpoint); :func:`updated_threads`
those a watch sees change.
"""

from __future__ import annotations

from typing import Any

from lg_eval._effects import adrive, drive
from lg_eval._trajectory import ThreadTrajectory
from lg_eval.server._connection import API_KEY_ENV, ServerConnection
from lg_eval.server._extraction import server_extraction
from lg_eval.server._search import (
    STATUSES,
    ServerThread,
    ThreadStatus,
    list_server_threads,
    thread_filter,
    updated_threads,
)
from lg_eval.server._target import ServerTarget, as_server_target, remote_target, server_target


def _connection(server: ServerConnection | str) -> ServerConnection:
    return server if isinstance(server, ServerConnection) else ServerConnection(server)


def extract_server_thread(
    server: ServerConnection | str,
    thread_id: str,
    *,
    checkpoint_id: str | None = None,
    graph: Any = None,
) -> ThreadTrajectory:
    """Extract thread ``thread_id`` of the LangGraph Server ``server`` (a URL or a
    :class:`ServerConnection`).

    Pass ``graph`` (the compiled graph the assistant serves, built without a
    checkpointer) to tell static breakpoints from other stops and to name the functional
    API's ``@task`` calls; without it every stop with planned tasks reads as a breakpoint.
    """
    return drive(server_extraction(_connection(server), thread_id, checkpoint_id, graph))


async def aextract_server_thread(
    server: ServerConnection | str,
    thread_id: str,
    *,
    checkpoint_id: str | None = None,
    graph: Any = None,
) -> ThreadTrajectory:
    """Async twin of :func:`extract_server_thread` (the same core, awaited)."""
    return await adrive(server_extraction(_connection(server), thread_id, checkpoint_id, graph))


__all__ = [
    "API_KEY_ENV",
    "STATUSES",
    "ServerConnection",
    "ServerTarget",
    "ServerThread",
    "ThreadStatus",
    "aextract_server_thread",
    "as_server_target",
    "extract_server_thread",
    "list_server_threads",
    "remote_target",
    "server_target",
    "thread_filter",
    "updated_threads",
]
