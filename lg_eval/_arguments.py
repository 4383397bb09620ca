"""How lg_eval checks the values users pass: once, where they enter.

A public function declares its contract in its signature, with the annotated types below
(:data:`Count`, :data:`Seconds`, :data:`Fraction`, ...) and :func:`validated` (pydantic's
``validate_call``); a public options object is a pydantic model or dataclass decorated
with :func:`validated`. Either way a bad value raises the one typed error,
:class:`~lg_eval.errors.InvalidOptionError`, naming the argument (``limit=-1: input
should be greater than or equal to 0.``) before anything runs, instead of an untyped
error deep inside the first case. Below the boundary, code trusts the types it was
given. :func:`is_finite_number` is the one finiteness rule: scores, weights,
thresholds, timeouts and fractions are all held to it.
"""

from __future__ import annotations

import functools
import inspect
import math
import numbers
import os
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Annotated, Any, ParamSpec, TypeAlias, TypeVar, overload

from annotated_types import Ge, Gt, Le
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PlainValidator,
    Strict,
    ValidationError,
    validate_call,
)
from pydantic_core import PydanticCustomError

from lg_eval.errors import InvalidOptionError

T = TypeVar("T")
C = TypeVar("C")
M = TypeVar("M", bound=BaseModel)
P = ParamSpec("P")

FiniteFloat = Annotated[float, Strict(), Field(allow_inf_nan=False)]
"""A finite real number (an ``int`` is taken as its float; a bool or a text is not one)."""
Count = Annotated[int, Strict(), Ge(1)]
"""An integer (not a bool, not a text) of at least 1."""
Size = Annotated[int, Strict(), Ge(0)]
"""An integer (not a bool, not a text) of at least 0."""
Seconds = Annotated[float, Strict(), Gt(0), Field(allow_inf_nan=False)]
"""A finite number of seconds > 0 (``Seconds | None``: ``None`` for no limit)."""
Delay = Annotated[float, Strict(), Ge(0), Field(allow_inf_nan=False)]
"""A finite number of seconds >= 0 (a wait that may be none)."""
Fraction = Annotated[float, Strict(), Ge(0), Le(1), Field(allow_inf_nan=False)]
"""A finite number in ``[0, 1]``."""
Share = Annotated[float, Strict(), Gt(0), Le(1), Field(allow_inf_nan=False)]
"""A finite number in ``(0, 1]``: the part of something that is kept."""
Flag = Annotated[bool, Strict()]
"""``True`` or ``False`` (a truthy text or number is neither)."""

if TYPE_CHECKING:
    ModelLike: TypeAlias = M | Mapping[str, Any]
else:

    class ModelLike:
        """``ModelLike[Model]``: a pydantic model, or a mapping of its fields, which the
        boundary validates into the model (errors name the item and field)."""

        def __class_getitem__(cls, model: type) -> type:
            return model


BOUNDARY = ConfigDict(arbitrary_types_allowed=True)
"""The pydantic config of a boundary: any class may be a field's type (an isinstance check)."""


def _text(value: object) -> str:
    if isinstance(value, str) and value.strip():
        return value
    raise PydanticCustomError("text", "use a non-blank text")


Text = Annotated[str, PlainValidator(_text)]
"""A text with something in it besides white space."""


def _file(value: object) -> object:
    if isinstance(value, str | os.PathLike) and str(value).strip():
        return value
    raise PydanticCustomError("file", "use a file path (a non-blank text or a Path)")


FilePath = Annotated[str | os.PathLike[str], PlainValidator(_file)]
"""A file's path: a non-blank text or an ``os.PathLike`` (``123`` would otherwise become a
file named ``123``)."""


def instance_of(*kinds: type, what: str) -> PlainValidator:
    """The contract of a value that must be one of ``kinds`` (``isinstance``), refused as
    ``name=value: use <what>.``: for arguments whose type is a union of classes, whose
    pydantic errors would list each member."""

    def check(value: object) -> object:
        if isinstance(value, kinds):
            return value
        raise PydanticCustomError("instance_of", "use {what}", {"what": what})

    return PlainValidator(check)


def invalid_option(
    exc: ValidationError, names: Sequence[str] = (), owner: str | None = None
) -> InvalidOptionError:
    """The one typed error for a pydantic ``ValidationError`` at a boundary: each problem as
    ``name=value: what is wrong``, where ``name`` is written as Python reads it
    (``thresholds['k']``, ``pairs[1]``); ``names`` maps positional locations to parameter
    names, ``owner`` (a class) goes first. The members of a union a value matched none of
    make one problem. A validator that raised an :class:`InvalidOptionError` of its own
    has it returned as it is."""
    problems = []
    for location, value, messages in _problems(exc.errors(include_url=False)):
        if isinstance(value, InvalidOptionError):
            return value  # a validator's own typed error already says what is wrong
        if location and isinstance(location[0], int) and location[0] < len(names):
            location[0] = names[location[0]]
        shown = "" if value is _MISSING else "=" + _shown(value)
        if location and location[-1] == "[key]":  # a mapping's key, not its value
            where, shown = _where(location[:-2]) + f" key {_shown(location[-2])}", ""
        else:
            where = _where(location) or exc.title
        problems.append(f"{where}{shown}: {_either(messages)}")
    prefix = f"{owner} " if owner else ""
    return InvalidOptionError(prefix + "; ".join(problems) + ".")


_MISSING = object()


def _problems(errors: Sequence[Any]) -> list[tuple[list[Any], Any, list[str]]]:
    """``(location, value, messages)`` of each problem: pydantic reports a value that no
    member of a union accepts once per member, one after the other, their locations
    apart only by the member's name; those are one problem."""
    found: list[tuple[list[Any], Any, list[str]]] = []
    previous: list[Any] = []
    for error in errors:
        cause = error.get("ctx", {}).get("error")
        value = cause if isinstance(cause, InvalidOptionError) else error.get("input")
        if error["type"] == "missing":
            value = _MISSING
        location, message = list(error["loc"]), str(error["msg"])
        apart = [i for i, (a, b) in enumerate(zip(previous, location, strict=False)) if a != b]
        if (
            found
            and found[-1][1] is value
            and len(previous) == len(location)
            and len(apart) == 1
            and isinstance(location[apart[0]], str)
            and message not in found[-1][2]  # members say different things; keys the same
        ):
            member = apart[0]
            found[-1] = (location[:member] + location[member + 1 :], value, found[-1][2])
            found[-1][2].append(message)
        else:
            found.append((location, value, [message]))
        previous = location
    return found


def _either(messages: Sequence[str]) -> str:
    """``input should be a valid integer or a valid string`` from one message a member."""
    lead = "Input should be "
    wanted = list(dict.fromkeys(m.removeprefix(lead) for m in messages))
    if len(wanted) > 1 and all(m.startswith(lead) for m in messages):
        text = lead + ", ".join(wanted[:-1]) + " or " + wanted[-1]
    else:
        text = "; ".join(dict.fromkeys(messages))
    return text[0].lower() + text[1:]


def _where(location: Sequence[Any]) -> str:
    if not location:
        return ""
    head, *rest = location
    return str(head) + "".join(f"[{part!r}]" for part in rest)


def _shown(value: object) -> str:
    shown = repr(value)
    return shown if len(shown) <= 80 else shown[:77] + "..."


@overload
def validated(target: type[C]) -> type[C]: ...
@overload
def validated(target: Callable[P, T]) -> Callable[P, T]: ...
def validated(target: Any) -> Any:
    """``target`` with its annotated arguments validated when it is called (pydantic's
    ``validate_call``); a bad argument raises :class:`InvalidOptionError` naming it, before
    the function's body runs. Given a pydantic model or dataclass, its constructor raises
    the same error (``ClassName field=value: ...``). Use it on public entry points only:
    it costs microseconds a call."""
    if isinstance(target, type):
        return _validated_class(target)
    names = tuple(inspect.signature(target).parameters)
    checked: list[Callable[..., Any]] = []  # made on the first call: the hints then resolve

    @functools.wraps(target)
    def call(*args: Any, **kwargs: Any) -> Any:
        if not checked:
            checked.append(validate_call(config=BOUNDARY)(target))
        try:
            return checked[0](*args, **kwargs)
        except ValidationError as exc:
            if exc.title not in (target.__name__, target.__qualname__):
                raise  # raised inside the body, not by the boundary's check
            raise invalid_option(exc, names) from None

    if not inspect.iscoroutinefunction(target):
        return call

    @functools.wraps(target)
    async def acall(*args: Any, **kwargs: Any) -> Any:
        return await call(*args, **kwargs)

    return acall


def _validated_class(cls: type[C]) -> type[C]:
    build = cls.__init__
    names = tuple(inspect.signature(cls).parameters)

    @functools.wraps(build)
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        try:
            build(self, *args, **kwargs)
        except ValidationError as exc:
            if exc.title != type(self).__name__:
                raise  # raised by a validator's own code, not by a field's contract
            raise invalid_option(exc, names, type(self).__name__) from None

    cls.__init__ = __init__  # type: ignore[method-assign]
    return cls


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
