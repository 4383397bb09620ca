"""A deployed assistant as the target of an experiment: the one turn player drives it.

:func:`server_target` names an assistant of a LangGraph Server (its id, or the graph id
the server registered it under); :func:`remote_target` takes what a LangGraph
``RemoteGraph`` calls. An experiment plays each case on a fresh server thread
(``threads.create``) through :class:`~lg_eval.server._remote.ServerGraph`, a thin shell
over ``RemoteGraph`` with the methods the player calls, and reads the thread back from the
server with :func:`lg_eval.server.extract_server_thread`'s core.

The server wants UUID thread ids, so each of the run's thread ids (``run:case:rep:attempt``)
is mapped to a UUID derived from it (:func:`server_thread_id`): a resumed run finds, and
replaces, the thread a killed run left half played.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any, Literal

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.pregel import Pregel
from langgraph.pregel.remote import RemoteGraph

from lg_eval._arguments import validated
from lg_eval._effects import Core, adrive, drive
from lg_eval._trajectory import ThreadTrajectory
from lg_eval._urls import redact_url
from lg_eval.errors import AssistantNotFoundError, InvalidOptionError, ThreadNotFoundError
from lg_eval.play import resolve_target
from lg_eval.server._connection import ServerConnection, request
from lg_eval.server._extraction import server_extraction
from lg_eval.server._remote import (
    ServerGraph as ServerGraph,
)
from lg_eval.server._remote import (
    run_failure as run_failure,
)
from lg_eval.server._remote import (
    snapshot_of as snapshot_of,
)

_THREADS = uuid.UUID("9a3e4f0c-52d1-4c36-8f0e-6c1b2d7a5e10")
"""The namespace of the UUIDs lg_eval gives the server threads of its runs."""
_KNOWN_SHOWN = 20


def server_thread_id(thread_id: str) -> str:
    """The UUID of the server thread that plays the run's thread ``thread_id``."""
    return str(uuid.uuid5(_THREADS, thread_id))


@dataclass(frozen=True)
class ServerTarget:
    """Assistant ``assistant_id`` of the LangGraph Server ``server``, as a run's target.

    ``graph`` is the local definition of the graph the assistant serves, compiled; it is
    never run, only read by extraction for its static breakpoints (see
    :func:`~lg_eval.server.extract_server_thread`).
    """

    server: ServerConnection
    assistant_id: str
    graph: Any = field(default=None, repr=False, compare=False)
    config: Mapping[str, Any] | None = field(default=None, repr=False, compare=False)
    """Merged into every run's config, as ``RemoteGraph(config=...)`` does."""

    def describe(self) -> str:
        """``assistant 'weather' at http://host:2024`` (the URL without credentials)."""
        return f"assistant {self.assistant_id!r} at {redact_url(self.server.url)}"

    def checking(self) -> Core[None]:
        """Check that the server answers and serves the assistant.

        Raises:
            ServerError: the server could not be reached (after its retries).
            AssistantNotFoundError: it has no assistant or graph of that id.
        """
        shape: Literal["list", "object"]
        if _is_uuid(self.assistant_id):
            what, call, shape = (
                f"assistant {self.assistant_id!r}",
                partial(_get_assistant, self.assistant_id),
                "object",
            )
        else:
            query = {"graph_id": self.assistant_id, "limit": 1}
            what, call, shape = (
                f"the assistants of graph {self.assistant_id!r}",
                partial(_search_assistants, query),
                "list",
            )
        try:  # an unknown graph id is a 404 or an empty list, by server version
            found = yield from request(self.server, what, call, call, shape=shape)
        except ThreadNotFoundError as exc:
            raise self._unknown((yield from self._graph_ids())) from exc
        if not found:
            raise self._unknown((yield from self._graph_ids()))

    def check(self) -> None:
        """:meth:`checking`, blocking."""
        drive(self.checking())

    async def acheck(self) -> None:
        """:meth:`checking`, awaited."""
        await adrive(self.checking())

    def for_run(self) -> ServerTarget:
        """This target with a connection of its own (the same URL, credentials and
        patience), whose SDK clients are made on first use: a run's async client belongs to
        that run's event loop."""
        return replace(self, server=replace(self.server))

    def player_graph(self) -> ServerGraph:
        """The graph-like object the turn player drives."""
        return ServerGraph(self.server, self.assistant_id, self.config)

    def fresh_thread(self, thread_id: str, *, replace_old: bool) -> Core[str]:
        """Create the server thread for the run's ``thread_id`` (deleting a thread a killed
        run left under the same id first when ``replace_old``); returns its UUID."""
        server_id = server_thread_id(thread_id)
        if replace_old:
            with contextlib.suppress(ThreadNotFoundError):
                yield from request(
                    self.server,
                    f"deleting thread {server_id!r}",
                    partial(_delete_thread, server_id),
                    partial(_delete_thread, server_id),
                    thread_id=server_id,
                )
        kwargs = {"thread_id": server_id, "metadata": {"lg_eval_thread_id": thread_id}}
        yield from request(
            self.server,
            f"creating thread {server_id!r}",
            partial(_create_thread, kwargs),
            partial(_create_thread, kwargs),
        )
        return server_id

    def extraction(self, thread_id: str, *, warn: bool = True) -> Core[ThreadTrajectory]:
        """Read server thread ``thread_id`` into a trajectory (with :attr:`graph`)."""
        return server_extraction(self.server, thread_id, None, self.graph, warn=warn)

    def _graph_ids(self) -> Core[list[str]]:
        query = {"limit": 100}
        listed = yield from request(
            self.server,
            "the assistants",
            partial(_search_assistants, query),
            partial(_search_assistants, query),
            shape="list",
        )
        return sorted({str(item.get("graph_id")) for item in listed})

    def _unknown(self, graph_ids: list[str]) -> AssistantNotFoundError:
        shown = ", ".join(graph_ids[:_KNOWN_SHOWN]) + (
            ", ..." if len(graph_ids) > _KNOWN_SHOWN else ""
        )
        return AssistantNotFoundError(
            f"The LangGraph Server at {redact_url(self.server.url)} has no assistant "
            f"{self.assistant_id!r}. Pass an assistant id or one of its graph ids: "
            f"{shown or '(it serves none)'}."
        )


def _is_uuid(text: str) -> bool:
    try:
        uuid.UUID(text)
    except ValueError:
        return False
    return True


def _get_assistant(assistant_id: str, client: Any) -> Any:
    return client.assistants.get(assistant_id)


def _search_assistants(query: dict[str, Any], client: Any) -> Any:
    return client.assistants.search(**query)


def _create_thread(kwargs: dict[str, Any], client: Any) -> Any:
    return client.threads.create(**kwargs)


def _delete_thread(thread_id: str, client: Any) -> Any:
    return client.threads.delete(thread_id)


def server_target(
    server: ServerConnection | str,
    assistant_id: str,
    *,
    api_key: str | None = None,
    headers: Mapping[str, str] | None = None,
    graph: Any = None,
) -> ServerTarget:
    """A run target that plays every case on assistant ``assistant_id`` of ``server``.

    ``server`` is a URL or a :class:`~lg_eval.server.ServerConnection`; ``api_key``
    (default ``$LANGGRAPH_API_KEY``) and ``headers`` apply to a URL only. ``graph`` is the
    local definition of the graph the assistant serves, in any target form (a compiled
    graph, a ``StateGraph`` builder, a factory or ``"module:attr"``), read by extraction
    for its static breakpoints; it is never run. Nothing is sent until the run starts,
    which first checks that the server serves the assistant.

    Raises:
        InvalidOptionError: ``assistant_id`` is no name, credentials beside a connection,
            or a ``graph`` that is none of the target forms.
    """
    if not isinstance(assistant_id, str) or not assistant_id.strip():
        raise InvalidOptionError(
            f"assistant_id={assistant_id!r}: expected an assistant id or the graph id the "
            "server registered it under (e.g. 'agent')."
        )
    if isinstance(server, ServerConnection):
        if api_key is not None or headers is not None:
            raise InvalidOptionError(
                "api_key= and headers= go into the ServerConnection when server is one."
            )
        connection = server
    else:
        connection = ServerConnection(server, api_key=api_key, headers=dict(headers or {}))
    return ServerTarget(connection, assistant_id, _definition(graph))


_HTTPX_HEADERS = frozenset({"accept", "accept-encoding", "connection", "user-agent"})
"""Headers every SDK client sends on its own; the rest of a RemoteGraph's are the user's."""


@validated
def remote_target(remote: RemoteGraph, *, graph: Any = None) -> ServerTarget:
    """The target that plays on what ``remote`` calls: its server (URL, API key and headers,
    read from its SDK client), its assistant and its ``config``.

    Raises:
        InvalidOptionError: ``remote`` is no ``RemoteGraph``, or was built without a URL or
            client.
    """
    client = remote.sync_client or remote.client
    if client is None:
        raise InvalidOptionError(
            "target=RemoteGraph without a client: build it with url=... (or client=/sync_client=)."
        )
    http = client.http.client  # the SDK client's httpx client: base URL and headers
    sent = {name.lower(): value for name, value in http.headers.items()}
    connection = ServerConnection(
        str(http.base_url).rstrip("/"),
        api_key=sent.pop("x-api-key", None),
        headers={name: value for name, value in sent.items() if name not in _HTTPX_HEADERS},
    )
    return replace(
        server_target(connection, remote.assistant_id, graph=graph), config=remote.config
    )


def as_server_target(target: Any) -> ServerTarget | None:
    """``target`` as a :class:`ServerTarget` when it names a deployed assistant (a
    ``ServerTarget`` or a ``RemoteGraph``), else None."""
    if isinstance(target, ServerTarget):
        return target
    if isinstance(target, RemoteGraph):
        return remote_target(target)
    return None


def _definition(graph: Any) -> Any:
    """The compiled graph extraction reads ``graph``'s breakpoints from (bound to a saver
    of its own when it is built here: it is never run)."""
    if graph is None or isinstance(graph, Pregel):
        return graph
    return resolve_target(graph, InMemorySaver())
