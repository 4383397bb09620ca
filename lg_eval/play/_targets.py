"""What a case is played on: a graph named by reference or given as an object.

Three forms, as a ``"module:attr"`` string or as the Python object itself:

* a compiled graph (``Pregel``): rebound to the player's checkpointer with
  ``graph.copy(update={"checkpointer": saver})``, so the original is untouched;
* an uncompiled ``StateGraph`` builder: compiled with the checkpointer;
* a factory: called as ``factory(checkpointer=saver)``, returning either of the
  above (the example graphs' ``build`` functions are factories).

:func:`import_reference` is the one place lg_eval imports code named by data
(targets, ``resume_fn``, evaluator ``module:attr`` names), and the one place that
refuses to when the data did not come from a trusted local file.
"""

from __future__ import annotations

import importlib
from typing import Any

from langgraph.graph import StateGraph
from langgraph.pregel import Pregel

from lg_eval.errors import InvalidOptionError
from lg_eval.play._types import Graph, Saver


def import_reference(reference: str, *, what: str = "reference", allow_code: bool = True) -> Any:
    """The object ``"module:attr"`` names (``attr`` may be dotted).

    ``allow_code=False`` refuses before importing anything: pass the dataset's
    ``allows_code`` so that data from a remote source cannot run code.
    """
    if not allow_code:
        raise InvalidOptionError(
            f"{what} {reference!r} names code, and this dataset does not allow code (it was not "
            "loaded from a local file). Pass allow_code=True if you trust where it came from."
        )
    module_name, sep, attr = reference.partition(":")
    if not (sep and module_name and attr):
        raise InvalidOptionError(
            f"{what} {reference!r} is not a 'module:attr' reference (e.g. 'graphs.weather:build')."
        )
    try:
        obj: Any = importlib.import_module(module_name)
    except Exception as exc:
        hint = (
            " (is the directory holding it on sys.path? run from the project root)"
            if isinstance(exc, ModuleNotFoundError) and exc.name == module_name.split(".")[0]
            else ""
        )
        raise InvalidOptionError(
            f"{what} {reference!r}: importing module {module_name!r} failed with "
            f"{type(exc).__name__}: {exc}{hint}."
        ) from exc
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise InvalidOptionError(
                f"{what} {reference!r}: module {module_name!r} has no attribute {attr!r}."
            ) from None
    return obj


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


__all__ = ["import_reference", "resolve_target"]
