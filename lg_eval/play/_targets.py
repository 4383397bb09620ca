"""What a case is played on: a graph named by reference or given as an object.

Three forms, as a ``"module:attr"`` string or as the Python object itself:

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

from typing import Any

from langgraph.graph import StateGraph
from langgraph.pregel import Pregel

from lg_eval._importing import import_reference as import_reference
from lg_eval.errors import InvalidOptionError
from lg_eval.play._types import Graph, Saver


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
