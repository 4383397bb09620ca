"""A deployed assistant as the target of an experiment: the one turn player drives it.

:func:`server_target` names an assistant of a LangGraph Server (its id, or the graph id
the server registered it under). An experiment plays each case on a fresh server thread
(``threads.create``) through :class:`ServerGraph`, a thin shell over LangGraph's
``RemoteGraph`` with the methods the player calls (``invoke``, ``get_state``,
``update_state`` and their async twins), and reads the thread back from the server with
:func:`lg_eval.server.extract_server_thread`'s core.

The server wants UUID thread ids, so each of the run's thread ids (``run:case:rep:attempt``)
is mapped to a UUID derived from it (:func:`server_thread_id`): a resumed run finds, and
replaces, the thread a killed run left half played.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import lru_cache, partial
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.pregel import Pregel
from langgraph.pregel.remote import RemoteException, RemoteGraph
from langgraph.types import Interrupt, PregelTask, StateSnapshot

from lg_eval._effects import Core, adrive, drive
from lg_eval.errors import (
    AssistantNotFoundError,
    InvalidOptionError,
    ServerRunError,
    ThreadNotFoundError,
)
from lg_eval.play import resolve_target
from lg_eval.server._connection import ServerConnection, request
from lg_eval.server._extraction import server_extraction
from lg_eval.trajectory import ThreadTrajectory
from lg_eval.urls import redact_url

_THREADS = uuid.UUID("9a3e4f0c-52d1-4c36-8f0e-6c1b2d7a5e10")
"""The namespace of the UUIDs lg_eval gives the server threads of its runs."""
_KNOWN_SHOWN = 20


def server_thread_id(thread_id: str) -> str:
    """The UUID of the server thread that plays the run's thread ``thread_id``."""
    return str(uuid.uuid5(_THREADS, thread_id))


@dataclass(frozen=True)
class ServerTarget:
    """Assistant ``assistant_id`` of the LangGraph Server ``server``, as a run's target.

    ``graph`` is the graph the assistant serves, compiled without a checkpointer; it is
    never run, only read by extraction for its static breakpoints (see
    :func:`~lg_eval.server.extract_server_thread`).
    """

    server: ServerConnection
    assistant_id: str
    graph: Any = field(default=None, repr=False, compare=False)

    def describe(self) -> str:
        """``assistant 'weather' at http://host:2024`` (the URL without credentials)."""
        return f"assistant {self.assistant_id!r} at {redact_url(self.server.url)}"

    def checking(self) -> Core[None]:
        """Check that the server answers and serves the assistant.

        Raises:
            ServerError: the server could not be reached (after its retries).
            AssistantNotFoundError: it has no assistant or graph of that id.
        """
        if _is_uuid(self.assistant_id):
            what, call = (
                f"assistant {self.assistant_id!r}",
                partial(_get_assistant, self.assistant_id),
            )
        else:
            query = {"graph_id": self.assistant_id, "limit": 1}
            what, call = (
                f"the assistants of graph {self.assistant_id!r}",
                partial(_search_assistants, query),
            )
        try:  # an unknown graph id is a 404 or an empty list, by server version
            found = yield from request(self.server, what, call, call)
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
        return ServerGraph(self)

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

    def extraction(self, thread_id: str) -> Core[ThreadTrajectory]:
        """Read server thread ``thread_id`` into a trajectory (with :attr:`graph`)."""
        return server_extraction(self.server, thread_id, None, self.graph)

    def _graph_ids(self) -> Core[list[str]]:
        query = {"limit": 100}
        listed = yield from request(
            self.server,
            "the assistants",
            partial(_search_assistants, query),
            partial(_search_assistants, query),
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


class ServerGraph:
    """What the turn player calls, done on the server: runs through ``RemoteGraph``,
    state reads and edits through the threads API, failures as typed errors.

    A run is not retried (a second attempt could run the graph twice); a state read is.
    """

    def __init__(self, target: ServerTarget) -> None:
        self._target = target
        self._once = replace(target.server, retries=1)

    def invoke(self, payload: Any, config: RunnableConfig) -> Any:
        """One run of the assistant on the config's thread, to its end."""
        return drive(self._running(payload, config))

    async def ainvoke(self, payload: Any, config: RunnableConfig) -> Any:
        """:meth:`invoke`, awaited."""
        return await adrive(self._running(payload, config))

    def get_state(self, config: RunnableConfig, *, subgraphs: bool = False) -> StateSnapshot:
        """The thread's state (an empty snapshot for a thread with no checkpoint yet)."""
        return drive(self._reading(config, subgraphs))

    async def aget_state(self, config: RunnableConfig, *, subgraphs: bool = False) -> StateSnapshot:
        """:meth:`get_state`, awaited."""
        return await adrive(self._reading(config, subgraphs))

    def update_state(self, config: RunnableConfig, values: Any, as_node: str | None = None) -> Any:
        """``update_state`` on the server thread (``as_node`` as LangGraph takes it)."""
        return drive(self._updating(config, values, as_node))

    async def aupdate_state(
        self, config: RunnableConfig, values: Any, as_node: str | None = None
    ) -> Any:
        """:meth:`update_state`, awaited."""
        return await adrive(self._updating(config, values, as_node))

    def _running(self, payload: Any, config: RunnableConfig) -> Core[Any]:
        thread_id = _thread_of(config)
        what = f"a run of assistant {self._target.assistant_id!r} on thread {thread_id!r}"
        try:
            return (
                yield from request(
                    self._once,
                    what,
                    partial(_run, self._target.assistant_id, payload, config),
                    partial(_arun, self._target.assistant_id, payload, config),
                    thread_id=thread_id,
                )
            )
        except RemoteException as exc:
            raise run_failure(exc) from exc

    def _reading(self, config: RunnableConfig, subgraphs: bool) -> Core[StateSnapshot]:
        thread_id = _thread_of(config)
        state = yield from request(
            self._target.server,
            f"the state of thread {thread_id!r}",
            partial(_get_state, thread_id, subgraphs),
            partial(_get_state, thread_id, subgraphs),
            thread_id=thread_id,
        )
        return snapshot_of(state)

    def _updating(self, config: RunnableConfig, values: Any, as_node: str | None) -> Core[Any]:
        thread_id = _thread_of(config)
        return (
            yield from request(
                self._once,
                f"update_state on thread {thread_id!r}",
                partial(_update_state, thread_id, values, as_node),
                partial(_update_state, thread_id, values, as_node),
                thread_id=thread_id,
            )
        )


def snapshot_of(state: Mapping[str, Any]) -> StateSnapshot:
    """A threads-API state (``ThreadState`` JSON) as LangGraph's ``StateSnapshot``; a
    thread with no checkpoint yet reads as a snapshot with ``created_at=None``."""
    tasks = tuple(
        PregelTask(
            id=task["id"],
            name=task["name"],
            path=(),
            error=Exception(task["error"]) if task.get("error") else None,
            interrupts=tuple(Interrupt(**item) for item in task.get("interrupts") or ()),
            state=snapshot_of(task["state"]) if task.get("state") else None,
            result=task.get("result"),
        )
        for task in state.get("tasks") or ()
    )
    checkpoint = state.get("checkpoint")
    return StateSnapshot(
        values=state.get("values") or {},
        next=tuple(state.get("next") or ()),
        config={"configurable": dict(checkpoint)} if checkpoint else {},
        metadata=state.get("metadata"),
        created_at=state.get("created_at"),
        parent_config=None,
        tasks=tasks,
        interrupts=tuple(item for task in tasks for item in task.interrupts),
    )


def run_failure(exc: RemoteException) -> ServerRunError:
    """The error event a failed run streamed, as a :class:`~lg_eval.errors.ServerRunError`
    subclass named after the type the server reports (``FlakyServiceError: ...`` reads as
    it does locally); a name that is not a Python identifier stays ``ServerRunError``."""
    data = exc.args[0] if exc.args else None
    if not isinstance(data, Mapping):
        return ServerRunError(str(exc))
    name, message = str(data.get("error") or ""), str(data.get("message") or "")
    if not name.isidentifier():
        return ServerRunError(f"{name}: {message}" if name else message)
    return _remote_type(name)(message)


@lru_cache(maxsize=128)  # names come from the server: keep a bounded set of classes
def _remote_type(name: str) -> type[ServerRunError]:
    return type(name, (ServerRunError,), {"remote_type": name, "__module__": "lg_eval.errors"})


def _thread_of(config: RunnableConfig) -> str:
    thread_id = (config.get("configurable") or {}).get("thread_id")
    if not isinstance(thread_id, str) or not thread_id:
        raise InvalidOptionError("config: expected configurable.thread_id, a server thread's id.")
    return thread_id


def _is_uuid(text: str) -> bool:
    try:
        uuid.UUID(text)
    except ValueError:
        return False
    return True


# SDK calls: the sync and async clients share these signatures. RemoteGraph is given the
# one client the call needs, so a blocking run never builds an async client (nor the reverse).
def _run(assistant_id: str, payload: Any, config: RunnableConfig, client: Any) -> Any:
    return RemoteGraph(assistant_id, sync_client=client).invoke(payload, config)


def _arun(assistant_id: str, payload: Any, config: RunnableConfig, client: Any) -> Any:
    return RemoteGraph(assistant_id, client=client).ainvoke(payload, config)


def _get_assistant(assistant_id: str, client: Any) -> Any:
    return client.assistants.get(assistant_id)


def _search_assistants(query: dict[str, Any], client: Any) -> Any:
    return client.assistants.search(**query)


def _create_thread(kwargs: dict[str, Any], client: Any) -> Any:
    return client.threads.create(**kwargs)


def _delete_thread(thread_id: str, client: Any) -> Any:
    return client.threads.delete(thread_id)


def _get_state(thread_id: str, subgraphs: bool, client: Any) -> Any:
    return client.threads.get_state(thread_id, subgraphs=subgraphs)


def _update_state(thread_id: str, values: Any, as_node: str | None, client: Any) -> Any:
    return client.threads.update_state(thread_id, values, as_node=as_node)


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


def _definition(graph: Any) -> Any:
    """The compiled graph extraction reads ``graph``'s breakpoints from (bound to a saver
    of its own when it is built here: it is never run)."""
    if graph is None or isinstance(graph, Pregel):
        return graph
    return resolve_target(graph, InMemorySaver())


__all__ = [
    "ServerGraph",
    "ServerTarget",
    "run_failure",
    "server_target",
    "server_thread_id",
    "snapshot_of",
]
