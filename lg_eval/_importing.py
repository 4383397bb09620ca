"""Importing code named by data: ``"module:attr"`` references.

:func:`import_reference` is the one place lg_eval imports code named by data (targets,
``resume_fn``, evaluator ``module:attr`` names), and the one place that refuses to when
the data did not come from a trusted local file. A root module, so that the evaluator
registry and the player can both use it without importing each other.
"""

from __future__ import annotations

import difflib
import importlib
from typing import Any

from lg_eval._describe import describe_error
from lg_eval.errors import InvalidOptionError


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
    if not isinstance(reference, str):
        raise InvalidOptionError(f"{what}={reference!r:.80}: use 'module:attr' as text.")
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
            f"{describe_error(exc)}{hint}."
        ) from exc
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise InvalidOptionError(
                f"{what} {reference!r}: module {module_name!r} has no attribute {attr!r}"
                f"{_near(part, obj)}."
            ) from None
    return obj


def _near(name: str, holder: Any) -> str:
    """``" (did you mean 'build'?)"`` for a public attribute of ``holder`` close to ``name``."""
    try:
        names = [n for n in dir(holder) if not n.startswith("_")]
    except Exception:  # a stranger's __dir__
        return ""
    found = difflib.get_close_matches(name, names, n=1, cutoff=0.75)
    return f" (did you mean {found[0]!r}?)" if found else ""
