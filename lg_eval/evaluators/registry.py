"""Evaluators by name, so dataset files and configs can say ``"tool_order"`` instead of code.

A name maps to a *factory*: ``factory(**options)`` returns a sync evaluator.
Every built-in is registered under a stable name (see ``available()``);
other modules and users add their own with :func:`register`, as a decorator
or a plain call. Registering a ready evaluator (a function taking
``outputs=``) is accepted too: it becomes a factory with no options.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, overload

from lg_eval.errors import InvalidOptionError
from lg_eval.evaluators._base import AsyncEvaluator, SyncEvaluator, to_async

Factory = Callable[..., SyncEvaluator]

_REGISTRY: dict[str, Factory] = {}


@overload
def register(name: str, factory: None = None, *, replace: bool = False) -> Callable[[Any], Any]: ...
@overload
def register(name: str, factory: Callable[..., Any], *, replace: bool = False) -> Any: ...


def register(name: str, factory: Callable[..., Any] | None = None, *, replace: bool = False) -> Any:
    """Register an evaluator factory (or a ready evaluator) under ``name``.

    Use as ``register("my_metric", create_my_metric)`` or as a decorator,
    ``@register("my_metric")``; either way the factory is returned unchanged.
    Registering the same factory again is a no-op; another one under a taken
    name needs ``replace=True``.

    Raises:
        InvalidOptionError: an empty name, a non-callable, or a taken name.
    """
    if factory is None:
        return lambda target: register(name, target, replace=replace)
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
    _REGISTRY[name] = entry
    return factory


def get(name: str, **options: Any) -> SyncEvaluator:
    """The sync evaluator registered as ``name``, built with ``options``.

    Raises:
        InvalidOptionError: an unknown name (the message lists the known ones),
            or options the factory does not take.
    """
    factory = _REGISTRY.get(name)
    if factory is None:
        raise InvalidOptionError(
            f"No evaluator is registered as {name!r}. Known evaluators: {', '.join(available())}."
        )
    try:
        inspect.signature(factory).bind(**options)
    except TypeError as exc:
        accepted = [p for p in inspect.signature(factory).parameters if not p.startswith("_")]
        raise InvalidOptionError(
            f"Evaluator {name!r} does not take these options ({exc}); "
            f"it accepts: {', '.join(accepted) or 'no options'}."
        ) from exc
    return factory(**options)


def get_async(name: str, **options: Any) -> AsyncEvaluator:
    """The async twin of :func:`get` (same scoring, awaitable)."""
    return to_async(get(name, **options))


def available() -> list[str]:
    """Every registered evaluator name, sorted."""
    return sorted(_REGISTRY)


def _as_factory(target: Callable[..., Any]) -> Factory:
    """A ready evaluator (it takes ``outputs``) becomes a factory with no options."""
    try:
        parameters = inspect.signature(target).parameters
    except (TypeError, ValueError):
        return target
    if "outputs" not in parameters:
        return target

    def factory() -> SyncEvaluator:
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


__all__ = ["available", "get", "get_async", "register"]
