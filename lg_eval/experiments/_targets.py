"""Which graph each case of a run is played on.

A case is played on the run's explicit target when one is given, else on its
own ``graph``, else on the dataset's ``graph``. A compiled graph is bound to the
run's checkpointer once and shared by its cases (a graph is reentrant across
threads); a ``StateGraph`` builder or a factory is built anew for every case, so
whatever the factory creates per graph (a model client, a scripted test double,
a cache) belongs to one case and cannot leak into another.

A :class:`~lg_eval.server.ServerTarget` (a deployed assistant) plays every case on a
fresh thread of its server, and the thread is read back from there: :meth:`CaseTargets.
thread_for` and :meth:`CaseTargets.extraction` are where a case's thread is made and
read, locally or on the server.
"""

from __future__ import annotations

import threading
from typing import Any, cast

from langchain_core.runnables import RunnableConfig
from langgraph.pregel import Pregel

from lg_eval._effects import Core
from lg_eval.errors import InvalidOptionError
from lg_eval.experiments._upstream import (
    Case,
    Dataset,
    Graph,
    Saver,
    import_reference,
    resolve_target,
)
from lg_eval.extract.thread import extraction
from lg_eval.server import as_server_target
from lg_eval.trajectory import ThreadTrajectory


class CaseTargets:
    """Resolve each case's target; every reference is imported (and checked) up front.

    ``saver`` may be None to check the references only (before anything is opened): such
    targets describe the run but play no case."""

    def __init__(self, explicit: Any, dataset: Dataset, saver: Saver | None) -> None:
        self._explicit = explicit
        self._dataset = dataset
        self._saver = cast(Saver, saver)  # None only for a check: for_case is not called
        self._objects: dict[str, Any] = {}
        self._bound: dict[int, Graph] = {}
        self._lock = threading.Lock()
        server = as_server_target(explicit)  # a ServerTarget, or a RemoteGraph made one
        self._server = None if server is None else server.for_run()
        self._server_graph = None if self._server is None else self._server.player_graph()
        if self._server is not None:
            return  # checked by ready(), which the runner drives before any case
        if isinstance(explicit, str):  # a typo fails here, before any case runs
            self._objects[explicit] = import_reference(explicit, what="target")
            return
        for case in dataset.cases:
            self._object(case)  # a bad or missing reference fails before any case runs

    def ready(self) -> Core[None]:
        """Check what the run plays on before any case: that the server answers and serves
        the assistant, for a server target (local references were checked when made).

        Raises:
            ServerError: the server could not be reached.
            AssistantNotFoundError: it serves no such assistant.
        """
        if self._server is not None:
            yield from self._server.checking()

    def for_case(self, case: Case) -> Graph:
        """The graph ``case`` is played on, bound to the run's checkpointer (or the
        server's assistant)."""
        if self._server_graph is not None:
            return cast(Graph, self._server_graph)
        target = self._object(case)
        if isinstance(target, Pregel):
            with self._lock:
                graph = self._bound.get(id(target))
                if graph is None:
                    graph = self._bound[id(target)] = resolve_target(target, self._saver)
            return graph
        return resolve_target(target, self._saver)

    def thread_for(self, thread_id: str, *, resuming: bool) -> Core[tuple[str, bool]]:
        """The thread to play the run's ``thread_id`` on, and whether the player goes on with
        what a killed run left there. Locally it is ``thread_id``, gone on with when the run
        resumes; on a server it is a new thread (a UUID derived from ``thread_id``), the one
        a killed run left replaced: the server's history does not carry the player's marks
        of finished turns, so a case in flight is played again from its start."""
        if self._server is None:
            return thread_id, resuming
        server_id = yield from self._server.fresh_thread(thread_id, replace_old=resuming)
        return server_id, False

    def extraction(self, graph: Graph, config: RunnableConfig) -> Core[ThreadTrajectory]:
        """Read back the thread ``config`` names, which ``graph`` played (from the server
        for a server target); its warnings are left in the trajectory, for the case to
        sort (:func:`~lg_eval.experiments._case.case_notes`)."""
        if self._server is not None:
            thread_id = str(config["configurable"]["thread_id"])
            return self._server.extraction(thread_id, warn=False)
        return extraction(graph, config, warn=False)

    def describe(self) -> str:
        """How the run names its target (for the run record)."""
        if self._server is not None:
            return self._server.describe()
        if self._explicit is not None:
            return _describe(self._explicit)
        names = sorted({self._dataset.target_for(case) or "" for case in self._dataset.cases})
        return ", ".join(names) if names else (self._dataset.graph or "")

    def _object(self, case: Case) -> Any:
        if isinstance(self._explicit, str):
            return self._objects[self._explicit]
        if self._explicit is not None:
            return self._explicit
        reference = self._dataset.target_for(case)
        if reference is None:
            raise InvalidOptionError(
                f"Case {case.id!r} has no target: pass target= (a compiled graph, a builder, "
                f"a factory or 'module:attr'), or name the graph in dataset "
                f"{self._dataset.name!r} (graph: module:attr) or in the case."
            )
        with self._lock:
            target = self._objects.get(reference)
            if target is None:
                target = self._objects[reference] = import_reference(
                    reference, what="target", allow_code=self._dataset.allows_code
                )
        return target


def _describe(target: Any) -> str:
    if isinstance(target, str):
        return target
    module = getattr(target, "__module__", None)
    name = getattr(target, "__qualname__", None)
    if module and name:
        return f"{module}:{name}"
    graph_name = getattr(target, "name", None)
    return f"{type(target).__name__}({graph_name!r})" if graph_name else type(target).__name__


__all__ = ["CaseTargets"]
