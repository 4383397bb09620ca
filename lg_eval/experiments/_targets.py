"""Which graph each case of a run is played on.

A case is played on the run's explicit target when one is given, else on its
own ``graph``, else on the dataset's ``graph``. A compiled graph is bound to the
run's checkpointer once and shared by its cases (a graph is reentrant across
threads); a ``StateGraph`` builder or a factory is built anew for every case, so
whatever the factory creates per graph (a model client, a scripted test double,
a cache) belongs to one case and cannot leak into another.
"""

from __future__ import annotations

import threading
from typing import Any

from langgraph.pregel import Pregel

from lg_eval.errors import InvalidOptionError
from lg_eval.experiments._upstream import (
    Case,
    Dataset,
    Graph,
    Saver,
    import_reference,
    resolve_target,
)


class CaseTargets:
    """Resolve each case's target; every reference is imported (and checked) up front."""

    def __init__(self, explicit: Any, dataset: Dataset, saver: Saver) -> None:
        self._explicit = explicit
        self._dataset = dataset
        self._saver = saver
        self._objects: dict[str, Any] = {}
        self._bound: dict[int, Graph] = {}
        self._lock = threading.Lock()
        for case in dataset.cases:
            self._object(case)  # a bad or missing reference fails before any case runs

    def for_case(self, case: Case) -> Graph:
        """The graph ``case`` is played on, bound to the run's checkpointer."""
        target = self._object(case)
        if isinstance(target, Pregel):
            with self._lock:
                graph = self._bound.get(id(target))
                if graph is None:
                    graph = self._bound[id(target)] = resolve_target(target, self._saver)
            return graph
        return resolve_target(target, self._saver)

    def describe(self) -> str:
        """How the run names its target (for the run record)."""
        if self._explicit is not None:
            return _describe(self._explicit)
        names = sorted({self._dataset.target_for(case) or "" for case in self._dataset.cases})
        return ", ".join(names) if names else (self._dataset.graph or "")

    def _object(self, case: Case) -> Any:
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
