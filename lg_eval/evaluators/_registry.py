"""Evaluators by name, so dataset files and configs can say ``"tool_order"`` instead of code.

A name maps to a *factory*: ``factory(**options)`` returns an evaluator.
Every built-in is registered under a stable name (see
:func:`available_evaluators`); other modules and users add their own with
:func:`register_evaluator`, as a decorator or a plain call. Registering a
ready evaluator (an :class:`~lg_eval.Evaluator`, or a function taking
``outputs=``) is accepted too: it becomes a factory with no options.
:func:`get_evaluator` always returns an :class:`~lg_eval.Evaluator`, so what it
gives can be awaited with ``.aevaluate`` whatever was registered.

A registration may declare whether the evaluator, built without options, needs a
reference (``reference_outputs``: expectations a golden case has and a production
thread does not); :func:`needs_reference` reads it, so ``sweep_threads`` can refuse
those up front and name the :func:`reference_free_evaluators`.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any, overload

from rapidfuzz import fuzz, process

from lg_eval._evaluator import Evaluator, as_evaluator, evaluator_of, feedback_dict
from lg_eval._feedback import Feedback
from lg_eval._importing import import_reference
from lg_eval.errors import InvalidOptionError

Factory = Callable[..., Any]

_REGISTRY: dict[str, Factory] = {}
_BUILTIN: dict[str, Any] = {}
_NEEDS_REFERENCE: dict[str, bool] = {}


@overload
def register_evaluator(
    name: str,
    factory: None = None,
    *,
    replace: bool = False,
    needs_reference: bool | None = None,
) -> Callable[[Any], Any]: ...
@overload
def register_evaluator(
    name: str,
    factory: Callable[..., Any],
    *,
    replace: bool = False,
    needs_reference: bool | None = None,
) -> Any: ...


def register_evaluator(
    name: str,
    factory: Callable[..., Any] | None = None,
    *,
    replace: bool = False,
    needs_reference: bool | None = None,
) -> Any:
    """Register an evaluator factory (or a ready evaluator) under ``name``.

    Use as ``register_evaluator("my_metric", create_my_metric)`` or as a
    decorator, ``@register_evaluator("my_metric")``; either way the factory is returned unchanged.
    Registering the same factory again is a no-op; another one under a taken
    name needs ``replace=True``. ``needs_reference``: whether the evaluator, built
    without options, cannot score without ``reference_outputs`` (None: not declared).

    Raises:
        InvalidOptionError: an empty name, a non-callable, or a taken name.
    """
    if factory is None:
        return lambda target: register_evaluator(
            name, target, replace=replace, needs_reference=needs_reference
        )
    if not isinstance(name, str) or not name.strip():
        raise InvalidOptionError(f"An evaluator name must be a non-empty string, not {name!r}.")
    if not callable(factory):
        raise InvalidOptionError(f"register({name!r}, ...) needs a callable, got {factory!r}.")
    entry = _as_factory(factory)
    existing = _REGISTRY.get(name)
    if existing is not None and not replace and _origin(existing) != _origin(entry):
        raise InvalidOptionError(
            f"An evaluator named {name!r} is already registered; choose another name "
            "or pass replace=True to override it."
        )
    if needs_reference is not None and not isinstance(needs_reference, bool):
        raise InvalidOptionError(
            f"register({name!r}, ..., needs_reference={needs_reference!r}): use True, False "
            "or None."
        )
    _REGISTRY[name] = entry
    if needs_reference is None:
        _NEEDS_REFERENCE.pop(name, None)
    else:
        _NEEDS_REFERENCE[name] = needs_reference
    return factory


def get_evaluator(name: str, **options: Any) -> Evaluator:
    """The evaluator registered as ``name``, built with ``options``.

    Raises:
        InvalidOptionError: an unknown name (the message lists the known ones),
            or options the factory does not take.
    """
    if not isinstance(name, str):
        raise InvalidOptionError(
            f"An evaluator name must be a string, not {type(name).__name__}; known evaluators: "
            f"{', '.join(available_evaluators())}."
        )
    factory = _REGISTRY.get(name)
    if factory is None:
        near = near_name(name)
        raise InvalidOptionError(
            f"No evaluator is registered as {name!r}"
            f"{f'; did you mean {near!r}?' if near else '.'} Known evaluators: "
            f"{', '.join(available_evaluators())}."
        )
    try:
        inspect.signature(factory).bind(**options)
    except TypeError as exc:
        accepted = [p for p in inspect.signature(factory).parameters if not p.startswith("_")]
        raise InvalidOptionError(
            f"Evaluator {name!r} does not take these options ({exc}); "
            f"it accepts: {', '.join(accepted) or 'no options'}."
        ) from exc
    built = factory(**options)
    return built if isinstance(built, Evaluator) else _wrapped(name, built)


def resolve_evaluator(
    ref: Any, options: Mapping[str, Any] | None = None, *, allow_code: bool = True
) -> tuple[str, Evaluator[Any]]:
    """``(name in results, evaluator)`` for what a user names as an evaluator.

    ``ref`` is a registry name (built with ``options``), a ``"module:attr"`` reference,
    or the object itself: an :class:`~lg_eval.Evaluator` (or its async twin) or a plain
    evaluator function (wrapped, so its scores keep the one range rule). A reference may
    also name a factory of one (a callable without an ``outputs`` parameter), called
    with ``options``. The name is ``ref`` when it is a string, else the evaluator's key.
    ``allow_code=False`` refuses a ``"module:attr"`` reference before importing it
    (pass a dataset's ``allows_code``).

    Raises:
        InvalidOptionError: an unknown name, options the evaluator does not take, a
            reference that cannot be imported, or an object that is no evaluator.
    """
    given = dict(options or {})
    if isinstance(ref, str) and ":" not in ref:
        return ref, get_evaluator(ref, **given)
    named = isinstance(ref, str)
    target = import_reference(ref, what="evaluator", allow_code=allow_code) if named else ref
    label = ref if named else repr(ref)[:80]
    attr = ref.rpartition(":")[2] if named else None
    ready = as_evaluator(target)
    if ready is None and named and callable(target) and not _takes_outputs(target):
        target = target(**given)  # a factory
        ready = as_evaluator(target)
        if ready is None and not callable(target):
            raise InvalidOptionError(
                f"{label!s}: the factory returned {type(target).__name__}, not an evaluator."
            )
    elif given:
        raise InvalidOptionError(
            f"Evaluator {label!s} is a ready evaluator; it takes no options (got {sorted(given)})."
        )
    built = ready or evaluator_of(target, attr)
    if built is None:
        raise InvalidOptionError(
            f"{label!s} is not an evaluator, a factory of one or a registry name."
        )
    return (ref if named else built.key), built


def _takes_outputs(target: Any) -> bool:
    """Whether ``target`` names an ``outputs`` parameter: an evaluator, not a factory."""
    try:
        return "outputs" in inspect.signature(target).parameters
    except (TypeError, ValueError):
        return False


def register_builtin(
    name: str, factory: Callable[..., Any], *, needs_reference: bool | None
) -> None:
    """Register one of lg_eval's own evaluators (see :func:`is_builtin`), declaring
    whether it needs a reference (None: it depends on its options)."""
    register_evaluator(name, factory, needs_reference=needs_reference)
    _BUILTIN[name] = _origin(_REGISTRY[name])


def needs_reference(name: str) -> bool | None:
    """Whether the evaluator registered as ``name``, built without options, needs
    ``reference_outputs`` to score; None when its registration does not say (or it
    depends on the options)."""
    return _NEEDS_REFERENCE.get(name) if isinstance(name, str) else None


def reference_free_evaluators() -> list[str]:
    """The registered names declared to score without a reference, sorted."""
    return sorted(name for name, needs in _NEEDS_REFERENCE.items() if not needs)


def is_builtin(name: str) -> bool:
    """Whether ``name`` names one of lg_eval's own evaluators (and was not replaced by
    ``register_evaluator(..., replace=True)``): deterministic code that keeps no state."""
    entry = _REGISTRY.get(name)
    return entry is not None and _BUILTIN.get(name) == _origin(entry)


def available_evaluators() -> list[str]:
    """Every registered evaluator name, sorted."""
    return sorted(_REGISTRY)


NEAR = 75.0
"""The rapidfuzz ratio (0-100) from which a registered name is offered as "did you mean"."""


def near_name(name: str) -> str | None:
    """The registered name closest to ``name`` (a typo's likely meaning), if one is near."""
    found = process.extractOne(name, available_evaluators(), scorer=fuzz.ratio, score_cutoff=NEAR)
    return None if found is None else str(found[0])


def _wrapped(name: str, function: Callable[..., Any]) -> Evaluator:
    """A plain evaluator function as an :class:`Evaluator` keyed by its registry name."""
    if not callable(function):
        raise InvalidOptionError(
            f"The factory registered as {name!r} returned {function!r}, not an evaluator."
        )

    def scorer(**call: Any) -> Feedback:
        result = feedback_dict(function(**call), name)
        return Feedback(**result)

    return Evaluator(name, scorer, name=getattr(function, "__name__", name), doc=function.__doc__)


def _as_factory(target: Callable[..., Any]) -> Factory:
    """A ready evaluator (it takes ``outputs``) becomes a factory with no options."""
    if not _takes_outputs(target):
        return target

    def factory() -> Any:
        return target

    factory.__wrapped_evaluator__ = target  # type: ignore[attr-defined]
    return factory


def _origin(factory: Factory) -> Any:
    target = getattr(factory, "__wrapped_evaluator__", factory)
    func = getattr(target, "func", target)  # functools.partial
    return (
        getattr(func, "__module__", None),
        getattr(func, "__qualname__", None),
        getattr(target, "args", None),
        repr(getattr(target, "keywords", None)),
    )
