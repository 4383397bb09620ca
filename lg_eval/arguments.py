"""Checks of the option values users pass, shared by every package.

Each check takes the value and the argument's name, returns the value as lg_eval uses it,
and raises :class:`~lg_eval.errors.InvalidOptionError` naming the argument and what it
takes. Options are checked where they are given (a function's entry, an options object
being made), so a bad one fails before anything runs instead of as an untyped error deep
inside the first case. :func:`is_finite_number` is the one finiteness rule: scores,
weights, thresholds, timeouts and fractions are all held to it.

At a public boundary, prefer declaring the contract in the signature: the annotated types
below (:data:`Count`, :data:`Seconds`, :data:`Fraction`, :data:`Flag`, :data:`FiniteFloat`)
with :func:`validated` (pydantic's ``validate_call``), or a pydantic model whose
``ValidationError`` :func:`invalid_option` turns into the one typed error. Code below the
boundary trusts the types it was given.
"""

from __future__ import annotations

import functools
import inspect
import math
import numbers
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any, ParamSpec, TypeVar, cast

from annotated_types import Ge, Gt, Le
from pydantic import ConfigDict, Field, PlainValidator, Strict, ValidationError, validate_call
from pydantic_core import PydanticCustomError

from lg_eval.errors import InvalidOptionError

T = TypeVar("T")
P = ParamSpec("P")

FiniteFloat = Annotated[float, Strict(), Field(allow_inf_nan=False)]
"""A finite real number (an ``int`` is taken as its float; a bool or a text is not one)."""
Count = Annotated[int, Strict(), Ge(1)]
"""An integer (not a bool, not a text) of at least 1."""
Seconds = Annotated[float, Strict(), Gt(0), Field(allow_inf_nan=False)]
"""A finite number of seconds > 0 (``Seconds | None``: ``None`` for no limit)."""
Fraction = Annotated[float, Strict(), Ge(0), Le(1), Field(allow_inf_nan=False)]
"""A finite number in ``[0, 1]``."""
Flag = Annotated[bool, Strict()]
"""``True`` or ``False`` (a truthy text or number is neither)."""

_BOUNDARY = ConfigDict(arbitrary_types_allowed=True)


def invalid_option(exc: ValidationError, names: Sequence[str] = ()) -> InvalidOptionError:
    """The one typed error for a pydantic ``ValidationError`` at a boundary: each problem as
    ``name=value: what is wrong`` (``names`` maps positional locations to parameter names)."""
    problems = []
    for error in exc.errors(include_url=False):
        location = [str(part) for part in error["loc"]]
        if location and location[0].isdigit() and int(location[0]) < len(names):
            location[0] = names[int(location[0])]
        where = ".".join(location) or exc.title
        shown = repr(error.get("input"))
        shown = shown if len(shown) <= 80 else shown[:77] + "..."
        raised = error.get("ctx", {}).get("error") if error["type"] == "value_error" else None
        said = str(raised).rstrip(".") if raised is not None else error["msg"]
        said = said if raised is not None else said[0].lower() + said[1:]
        problems.append(f"{where}={shown}: {said}")
    return InvalidOptionError("; ".join(problems) + ".")


def validated(function: Callable[P, T]) -> Callable[P, T]:
    """``function`` with its annotated arguments validated when it is called (pydantic's
    ``validate_call``); a bad argument raises :class:`InvalidOptionError` naming it, before
    the function's body runs. Use it on public entry points only."""
    checked = validate_call(config=_BOUNDARY)(function)
    names = tuple(inspect.signature(function).parameters)

    @functools.wraps(function)
    def call(*args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return checked(*args, **kwargs)
        except ValidationError as exc:
            if exc.title != checked.__name__ and exc.title != function.__name__:
                raise  # raised inside the body, not by the boundary's check
            raise invalid_option(exc, names) from None

    return call


def kind(accepts: Callable[[Any], bool], what: str) -> Any:
    """A validator for ``Annotated[A | B, kind(accepts, "an A or a B")]``: a value ``accepts``
    takes is kept as it is, anything else is refused with one problem, ``use {what}``
    (where pydantic would list one per member of a union of classes it cannot inspect)."""

    def check(value: Any) -> Any:
        if accepts(value):
            return value
        raise PydanticCustomError("kind", "use {what}", {"what": what})

    return PlainValidator(check)


def is_finite_number(value: object) -> bool:
    """The one finiteness rule: a real number (a bool is not one) whose value is finite
    as a float (NaN, infinity and an int too large for a float are not)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # an int too large for a float
        return False


def checked_seconds(value: object, name: str) -> float | None:
    """``value`` as a time limit: ``None`` (no limit) or a finite number of seconds > 0."""
    if value is None:
        return None
    if is_finite_number(value) and cast(float, value) > 0:
        return float(cast(float, value))
    raise InvalidOptionError(f"{name}={value!r:.80} must be a number of seconds > 0, or None.")


def checked_count(value: object, name: str, minimum: int) -> int:
    """``value`` as a count: an integer (not a bool) of at least ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise InvalidOptionError(f"{name}={value!r:.80}: use an integer >= {minimum}.")
    return int(value)


def checked_number(value: object, name: str, *, at_least: float, what: str) -> float:
    """``value`` as a finite number of at least ``at_least`` (``what`` names its unit)."""
    if is_finite_number(value) and cast(float, value) >= at_least:
        return float(cast(float, value))
    raise InvalidOptionError(f"{name}={value!r:.80}: use {what} >= {at_least:g}.")


def checked_fraction(value: object, name: str, *, zero: bool) -> float:
    """``value`` as a fraction: a finite number in ``[0, 1]`` (``(0, 1]`` without ``zero``)."""
    if is_finite_number(value):
        number = float(cast(float, value))
        if (number >= 0 if zero else number > 0) and number <= 1:
            return number
    span = "[0, 1]" if zero else "(0, 1]"
    raise InvalidOptionError(f"{name}={value!r:.80}: use a number in {span}.")


def checked_instance(value: object, kind: type[T], name: str, what: str) -> T:
    """``value`` if it is a ``kind``, else an error saying ``what`` ``name`` takes."""
    if not isinstance(value, kind):
        raise InvalidOptionError(f"{name}={value!r:.80}: use {what}.")
    return value


def checked_sequence(value: object, name: str, what: str) -> Sequence[Any]:
    """``value`` if it is a list-like sequence (text, bytes and mappings are not), else an
    error saying ``name`` takes ``what``. A list or tuple passes without the abstract-class
    check, which costs a microsecond: a comparison checks one sample per case."""
    if type(value) in (list, tuple):
        return cast(Sequence[Any], value)
    if isinstance(value, str | bytes | Mapping) or not isinstance(value, Sequence):
        raise InvalidOptionError(f"{name}={value!r:.80}: use {what}.")
    return value


def checked_path(value: object, name: str, what: str) -> str | os.PathLike[str]:
    """``value`` if it is a non-blank text or path, else an error saying ``name`` takes
    ``what`` (``123`` would otherwise become a file named ``123``)."""
    if isinstance(value, str | os.PathLike) and str(value).strip():
        return cast(str | os.PathLike[str], value)
    raise InvalidOptionError(f"{name}={value!r:.80}: use {what}.")


def checked_flag(value: object, name: str) -> bool:
    """``value`` as a switch: ``True`` or ``False`` (a truthy string is neither)."""
    if not isinstance(value, bool):
        raise InvalidOptionError(f"{name}={value!r:.80}: use True or False.")
    return value


__all__ = [
    "Count",
    "FiniteFloat",
    "Flag",
    "Fraction",
    "Seconds",
    "checked_count",
    "checked_flag",
    "checked_fraction",
    "checked_instance",
    "checked_number",
    "checked_path",
    "checked_seconds",
    "checked_sequence",
    "invalid_option",
    "is_finite_number",
    "kind",
    "validated",
]
