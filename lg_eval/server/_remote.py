"""What the one turn player drives for a deployed assistant: :class:`ServerGraph`.

It has the methods the player calls on a graph (``invoke``, ``get_state``, ``update_state``
and their async twins) and does each on the server: runs through LangGraph's
``RemoteGraph``, state reads and edits through the threads API, every failure as a typed
error (a graph that raised on the server as :func:`run_failure`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from functools import lru_cache, partial
from typing import Any, cast

from langchain_core.runnables import RunnableConfig
from langgraph.pregel.remote import RemoteException, RemoteGraph
from langgraph.types import Interrupt, PregelTask, StateSnapshot

from lg_eval._describe import safe_text
from lg_eval._effects import Core, adrive, drive
from lg_eval.errors import InvalidOptionError, ServerRunError
from lg_eval.server._connection import ServerConnection, request


class ServerGraph:
    """What the turn player calls, done on the server: runs through ``RemoteGraph``,
    state reads and edits through the threads API, failures as typed errors.

    A run is not retried (a second attempt could run the graph twice); a state read is.
    """

    def __init__(
        self, server: ServerConnection, assistant_id: str, config: Mapping[str, Any] | None
    ) -> None:
        self._server = server
        self._once = replace(server, retries=1)
        self._assistant_id = assistant_id
        self._config = cast(RunnableConfig | None, config)

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
        what = f"a run of assistant {self._assistant_id!r} on thread {thread_id!r}"
        run = (self._assistant_id, self._config, payload, config)
        try:
            return (
                yield from request(
                    self._once,
                    what,
                    partial(_run, *run, blocking=True),
                    partial(_run, *run, blocking=False),
                    thread_id=thread_id,
                )
            )
        except RemoteException as exc:
            raise run_failure(exc) from exc

    def _reading(self, config: RunnableConfig, subgraphs: bool) -> Core[StateSnapshot]:
        thread_id = _thread_of(config)
        state = yield from request(
            self._server,
            f"the state of thread {thread_id!r}",
            partial(_get_state, thread_id, subgraphs),
            partial(_get_state, thread_id, subgraphs),
            thread_id=thread_id,
            shape="object",
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
        return ServerRunError(safe_text(exc))
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


# SDK calls: the sync and async clients share these signatures. RemoteGraph is given the
# one client the call needs, so a blocking run never builds an async client (nor the reverse).
def _run(
    assistant_id: str,
    base: RunnableConfig | None,
    payload: Any,
    config: RunnableConfig,
    client: Any,
    *,
    blocking: bool,
) -> Any:
    if blocking:
        return RemoteGraph(assistant_id, sync_client=client, config=base).invoke(payload, config)
    return RemoteGraph(assistant_id, client=client, config=base).ainvoke(payload, config)


def _get_state(thread_id: str, subgraphs: bool, client: Any) -> Any:
    return client.threads.get_state(thread_id, subgraphs=subgraphs)


def _update_state(thread_id: str, values: Any, as_node: str | None, client: Any) -> Any:
    return client.threads.update_state(thread_id, values, as_node=as_node)
