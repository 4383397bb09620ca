"""Which evaluators run, how their scores count, and how one is called safely.

Evaluators are given as callables following the lg_eval convention (sync or
async), as registry names (``"tool_order"``, resolved by
:func:`lg_eval.evaluators.get`), or as :class:`EvalSpec` objects that add a
feedback key, a weight, a pass threshold and the part of a multi-field
reference the evaluator is given. :func:`resolve` turns them into
:class:`Bound` evaluators, each with the callable to use from sync code and
the one to await from async code (the async twin when lg_eval can derive it,
so LLM judges do not block an event loop). Other sync functions are called
as they are, from async graphs too: keep them fast, or pass an async function.

:func:`run_calls` is the one place evaluators are called: as an
:class:`~lg_eval._effects.Effect`, sequentially when driven sync and
concurrently when awaited. An evaluator that raises yields an error outcome
instead of an exception; LangGraph's own control flow (``interrupt()`` and
friends, :class:`~langgraph.errors.GraphBubbleUp`) always propagates.

References: one case (or one eval node) has one reference, and every
evaluator is handed all of it. LangSmith-style references holding several
expectations (``{"trajectory": ..., "tool_calls": ..., "output": ...}``) need
no unwrapping for lg_eval's evaluators, which each take their own field from a
dict (:func:`lg_eval.inputs.select_field`). An evaluator that reads the whole
reference (a custom function) is given one part of it with
``EvalSpec(fn, reference_key="output")``; a reference without that key is
that evaluator's error feedback (:class:`ReferenceKeyError`), not a crash.

What an evaluator returns is made safe before it reaches graph state
(:func:`to_feedback`): a score must be None, or a bool or a finite number inside
the evaluator's declared range (0..1 or a bool when it declares none:
:func:`lg_eval.feedback.check_score`); anything else becomes an error feedback
with ``passed=None``; metadata is reduced to plain data (dicts,
lists, strings, finite numbers, bools, None), naming what had to be dropped in
``metadata["dropped"]``. With a timeout, an evaluator runs in a daemon thread
(sync) or under ``asyncio.timeout`` (async) and one that does not finish in
time becomes an :class:`EvaluatorTimeoutError` feedback.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime
import enum
import inspect
import math
import numbers
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import PurePath
from typing import Any

from langgraph.errors import GraphBubbleUp
from pydantic import BaseModel

from lg_eval._effects import Effect
from lg_eval._threads import athread, run_in_daemon
from lg_eval.errors import InvalidOptionError, LgEvalError
from lg_eval.evaluator import Evaluator, as_evaluator, refusal
from lg_eval.evaluators import get_evaluator
from lg_eval.feedback import ScoreRange, ScoreRangeLike, ScoreValue, check_score, unusable_score
from lg_eval.feedback import score_range as as_score_range
from lg_eval.nodes.state import EvalFeedback

DEFAULT_TIMEOUT = 600.0
"""Seconds an eval node's evaluators (or one evaluation-graph evaluator) may take by default."""


@dataclass(frozen=True)
class EvalSpec:
    """An evaluator and how its feedback counts.

    Args:
        evaluator: a callable ``evaluator(*, outputs, reference_outputs=None,
            inputs=None)`` (sync or async), or a registered evaluator name.
        key: feedback key to report instead of the evaluator's own (for
            evaluators returning one result).
        weight: weight of its score in weighted aggregates (``>= 0``).
        threshold: a numeric score passes when ``score >= threshold``; a
            boolean score passes when true (or ``1.0 >= threshold``).
        reference_key: give this evaluator ``reference[reference_key]`` as
            ``reference_outputs`` instead of the whole reference. For
            evaluators that read the whole reference (custom functions) when
            the reference is a dict holding several expectations; lg_eval's
            own evaluators pick their field from such a dict and need none.
            A reference that is not a dict, or lacks the key, gives this
            evaluator an error feedback naming the key and the keys present.
        timeout: seconds this evaluator may take (None: the node's
            ``evaluator_timeout``); past it, its feedback is an
            :class:`EvaluatorTimeoutError` and the graph goes on.
        score_range: the scores this evaluator may give (``"bool"``, ``(low, high)``
            or a :class:`~lg_eval.feedback.ScoreRange`); a score outside it is an
            error feedback. Default: what the evaluator declares (every lg_eval
            evaluator does: bool, 0..1, a judge's scale); a function that declares
            none must score a bool or a number from 0 to 1.
    """

    evaluator: Callable[..., Any] | str
    key: str | None = None
    weight: float = 1.0
    threshold: float | None = None
    reference_key: str | None = None
    timeout: float | None = None
    score_range: ScoreRangeLike | None = None

    def __post_init__(self) -> None:
        if not (callable(self.evaluator) or isinstance(self.evaluator, str)):
            raise InvalidOptionError(
                f"EvalSpec needs an evaluator function or a registered name, got "
                f"{self.evaluator!r}."
            )
        if not _finite(self.weight):
            raise InvalidOptionError(f"EvalSpec weight={self.weight!r} must be a number >= 0.")
        if self.weight < 0:
            raise InvalidOptionError(f"EvalSpec weight={self.weight!r} must be >= 0.")
        if self.threshold is not None and not _finite(self.threshold):
            raise InvalidOptionError(
                f"EvalSpec threshold={self.threshold!r} must be a finite number or None."
            )
        check_timeout(self.timeout, "EvalSpec timeout")
        object.__setattr__(self, "score_range", as_score_range(self.score_range))
        if self.reference_key is not None and not (
            isinstance(self.reference_key, str) and self.reference_key
        ):
            raise InvalidOptionError(
                f"EvalSpec reference_key={self.reference_key!r} must be a non-empty string "
                "(a key of the reference dict) or None for the whole reference."
            )


def _finite(value: Any) -> bool:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def check_timeout(value: Any, name: str) -> float | None:
    """``value`` if it is None or a positive finite number of seconds, else an error."""
    if value is None:
        return None
    if _finite(value) and value > 0:
        return float(value)
    raise InvalidOptionError(f"{name}={value!r} must be a number of seconds > 0, or None.")


EvaluatorLike = Callable[..., Any] | str | EvalSpec


@dataclass(frozen=True)
class Bound:
    """An :class:`EvalSpec` resolved to what to call from sync and from async code.

    ``ranges`` are the score ranges the evaluator declares per feedback key,
    and ``default_range`` the range of any other key (None: any finite number).
    """

    spec: EvalSpec
    call: Callable[..., Any]
    acall: Callable[..., Any]
    name: str
    ranges: Mapping[str, ScoreRange | None] = field(default_factory=dict)
    default_range: ScoreRange | None = None

    def timeout(self, default: float | None) -> float | None:
        """This evaluator's timeout: its spec's own, else ``default``."""
        return self.spec.timeout if self.spec.timeout is not None else default

    def score_range(self, key: str | None) -> ScoreRange | None:
        """The range declared for feedback ``key`` (None: none declared, so 0..1 or a bool)."""
        if self.spec.score_range is not None:
            return as_score_range(self.spec.score_range)
        if key is not None and key in self.ranges:
            return self.ranges[key]
        return self.default_range


def resolve(evaluators: Sequence[EvaluatorLike] | EvaluatorLike) -> list[Bound]:
    """Resolve every evaluator now, so a bad name fails when the node is built.

    One evaluator may be given alone instead of in a list.
    """
    items: Sequence[EvaluatorLike] = (
        [evaluators]
        if isinstance(evaluators, str | EvalSpec) or callable(evaluators)
        else evaluators
    )
    if not items:
        raise InvalidOptionError("Give at least one evaluator (a function, a name or EvalSpec).")
    return [_bind(item if isinstance(item, EvalSpec) else EvalSpec(item)) for item in items]


def _bind(spec: EvalSpec) -> Bound:
    target = spec.evaluator
    if isinstance(target, str):
        built = get_evaluator(target)
        return Bound(spec, built, built.aevaluate, target, *_declared(built))
    evaluator = as_evaluator(target)
    if evaluator is not None:  # one scorer: called from sync code, awaited from async code
        return Bound(spec, evaluator, evaluator.aevaluate, evaluator.key, *_declared(evaluator))
    name = getattr(target, "__name__", None)
    return Bound(spec, target, target, str(name or type(target).__name__))


def _declared(
    evaluator: Evaluator[Any],
) -> tuple[Mapping[str, ScoreRange | None], ScoreRange | None]:
    """The ranges an evaluator declares: its own key's, and its other keys' (a rubric's).

    Every lg_eval evaluator declares one; one built by ``make_evaluator`` without
    ``score_range`` (or a function registered with ``register_evaluator``) declares none.
    """
    return {evaluator.key: evaluator.score_range, **evaluator.key_ranges}, evaluator.score_range


# --------------------------------------------------------------------------- calling


@dataclass(frozen=True)
class Call:
    """One evaluator call: which evaluator and its keyword arguments.

    ``kwargs`` hold the case's whole reference; :meth:`arguments` narrows it to
    the evaluator's ``reference_key`` when its spec has one.
    """

    bound: Bound
    kwargs: dict[str, Any] = field(default_factory=dict)
    timeout: float | None = None

    def arguments(self) -> dict[str, Any]:
        """The keyword arguments this evaluator is called with.

        Raises:
            ReferenceKeyError: the spec has a ``reference_key`` the reference
                lacks (or the reference is not a dict).
        """
        key = self.bound.spec.reference_key
        if key is None:
            return self.kwargs
        reference = self.kwargs.get("reference_outputs")
        return {**self.kwargs, "reference_outputs": reference_part(reference, key)}


class ReferenceKeyError(LgEvalError, LookupError):
    """An :class:`EvalSpec`'s ``reference_key`` is not a key of the reference it was given."""


class EvaluatorTimeoutError(LgEvalError, TimeoutError):
    """An evaluator did not finish within its timeout (or the node's)."""


class InvalidScoreError(LgEvalError, ValueError):
    """An evaluator's score is not a bool, None or a finite number inside its range."""


def reference_part(reference: Any, key: str) -> Any:
    """``reference[key]``, or a :class:`ReferenceKeyError` saying what the reference holds."""
    if isinstance(reference, Mapping):
        if key in reference:
            return reference[key]
        present = ", ".join(repr(str(k)) for k in reference) or "none"
        raise ReferenceKeyError(
            f"EvalSpec(reference_key={key!r}): the reference has no {key!r} key (its keys: "
            f"{present}). Add {key!r} to the reference, or change reference_key."
        )
    shown = "no reference" if reference is None else f"a {type(reference).__name__}"
    raise ReferenceKeyError(
        f"EvalSpec(reference_key={key!r}) needs a dict reference holding {key!r}, but the "
        f"evaluator was given {shown}."
    )


Outcome = tuple[Any, Exception | None]


def run_calls(calls: Sequence[Call], timeout: float | None = None) -> Effect[list[Outcome]]:
    """Call every evaluator; each outcome is ``(result, None)`` or ``(None, error)``.

    Each call is bounded by its own ``Call.timeout`` and all of them together by
    ``timeout`` seconds (sync: one after another, so a slow evaluator leaves
    less time to the next; async: concurrently, each bounded by the smaller).
    """
    return Effect(lambda: _call_all(calls, timeout), lambda: _acall_all(calls, timeout))


def _limit(call: Call, budget: float | None, left: float | None) -> tuple[float | None, str]:
    """The seconds this call may take, and whose limit that is (for the error)."""
    own = call.timeout
    if own is None and left is None:
        return None, ""
    if left is None or (own is not None and own <= left):
        return own, f"its timeout of {own:g}s"
    return left, f"the node's timeout of {budget:g}s"


def _timed_out(call: Call, whose: str) -> EvaluatorTimeoutError:
    return EvaluatorTimeoutError(
        f"evaluator {call.bound.name!r} did not finish within {whose}; it was abandoned"
    )


def _call_all(calls: Sequence[Call], budget: float | None) -> list[Outcome]:
    deadline = None if budget is None else time.monotonic() + budget
    outcomes: list[Outcome] = []
    for call in calls:
        left = None if deadline is None else deadline - time.monotonic()
        if left is not None and left <= 0:
            error = EvaluatorTimeoutError(
                f"evaluator {call.bound.name!r} was not run: the node's timeout of "
                f"{budget:g}s was used up by the evaluators before it"
            )
            outcomes.append((None, error))
            continue
        outcomes.append(_call(call, *_limit(call, budget, left)))
    return outcomes


def _invoke(call: Call) -> Any:
    result = call.bound.call(**call.arguments())
    return run_blocking(result) if inspect.isawaitable(result) else result


def _call(call: Call, limit: float | None = None, whose: str = "") -> Outcome:
    try:
        if limit is None:
            return _invoke(call), None
        value = run_in_daemon(
            lambda: _invoke(call),
            limit,
            name="lg-eval-evaluator",
            on_timeout=lambda: _timed_out(call, whose),
        )
        return value, None
    except GraphBubbleUp:
        raise
    except Exception as exc:
        return None, exc


async def _ainvoke(call: Call, off_loop: bool) -> Any:
    function = call.bound.acall
    if off_loop and not _is_async(function):  # a sync function: in a thread, so it can time out
        result = await athread(lambda: function(**call.arguments()), name="lg-eval-evaluator")
    else:
        result = function(**call.arguments())
    return await result if inspect.isawaitable(result) else result


def _is_async(function: Any) -> bool:
    return inspect.iscoroutinefunction(function) or inspect.iscoroutinefunction(
        getattr(function, "__call__", None)  # noqa: B004 - an async __call__
    )


async def _acall(call: Call, limit: float | None = None, whose: str = "") -> Outcome:
    scope = asyncio.timeout(limit)
    try:
        async with scope:
            return await _ainvoke(call, off_loop=limit is not None), None
    except GraphBubbleUp:
        raise
    except Exception as exc:
        if limit is not None and scope.expired():
            return None, _timed_out(call, whose)
        return None, exc


async def _acall_all(calls: Sequence[Call], budget: float | None) -> list[Outcome]:
    return list(await asyncio.gather(*(_acall(c, *_limit(c, budget, budget)) for c in calls)))


def run_blocking(awaitable: Awaitable[Any]) -> Any:
    """Run an async evaluator to completion from sync code (even under a running loop)."""

    async def wait() -> Any:
        return await awaitable

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(wait())
    # a loop runs in this thread: run on a fresh one in a daemon worker (tracing context kept)
    return run_in_daemon(lambda: asyncio.run(wait()), None, name="lg-eval-evaluator")


def raise_first(outcomes: Sequence[Outcome]) -> None:
    """Re-raise the first evaluator error (fail-fast mode)."""
    for _, error in outcomes:
        if error is not None:
            raise error


# --------------------------------------------------------------------------- results


def verdict(score: ScoreValue, threshold: float | None) -> bool | None:
    """Whether ``score`` passes: booleans pass when true, numbers need a threshold.

    A score that is not a bool or a finite number never passes (None: no verdict).
    """
    if score is None or unusable_score(score) is not None:
        return None
    if isinstance(score, bool) and threshold is None:
        return score
    if threshold is None:
        return None
    return float(score) >= threshold


def to_feedback(bound: Bound, outcome: Outcome) -> list[EvalFeedback]:
    """The feedback records for one outcome (an evaluator may return several results).

    Never raises: whatever the evaluator returned or raised becomes plain,
    serializable feedback (an error feedback when it is unusable).
    """
    result, error = outcome
    if error is None:
        try:
            return _records(bound, result)
        except Exception as exc:  # an unusable result is this evaluator's error, not ours
            error = exc
    return [error_feedback(bound, error)]


def error_feedback(bound: Bound, error: BaseException) -> EvalFeedback:
    """The feedback standing in for an evaluator that raised (or could not run)."""
    text = describe_error(error)
    return EvalFeedback(
        key=bound.spec.key or bound.name,
        comment=f"Evaluator {bound.name!r} failed: {text}",
        weight=bound.spec.weight,
        error=text,
    )


def describe_error(error: BaseException) -> str:
    """``'ErrorType: message'``, even for an exception whose ``__str__`` raises."""
    return f"{type(error).__name__}: {safe_text(error)}"


def safe_text(value: Any, limit: int = 2000) -> str:
    """``str(value)`` (else its ``repr``, else a placeholder), at most ``limit`` characters."""
    for render in (str, repr):
        try:
            text = render(value)
        except Exception:
            continue
        if isinstance(text, str):
            return text if len(text) <= limit else text[:limit] + "…"
    return f"<{type(value).__name__} that cannot be shown>"


def _records(bound: Bound, result: Any) -> list[EvalFeedback]:
    if isinstance(result, BaseModel):
        result = result.model_dump()
    if isinstance(result, Mapping) and isinstance(result.get("results"), list | tuple):
        result = list(result["results"])
    items = result if isinstance(result, list) else [result]
    if not items:
        raise TypeError(f"evaluator {bound.name!r} returned no results")
    single = len(items) == 1
    return [_record(bound, item, single) for item in items]


def _record(bound: Bound, item: Any, single: bool) -> EvalFeedback:
    if isinstance(item, BaseModel):
        item = item.model_dump()
    if isinstance(item, bool | numbers.Number) or item is None:
        item = {"score": item}
    if not isinstance(item, Mapping):
        raise TypeError(
            f"evaluator {bound.name!r} returned a {type(item).__name__}; expected a feedback "
            "dict {'key', 'score', 'comment', 'metadata'} or a bare score"
        )
    own_key = item.get("key")
    key = (bound.spec.key if single else None) or own_key or bound.spec.key or bound.name
    dropped: list[str] = []
    metadata = _plain_metadata(item.get("metadata"), dropped)
    raw = item.get("score")
    score, problem = checked_score(bound, own_key or bound.name, raw)
    rejected = refusal(metadata)
    if problem is None and raw is None and rejected is not None:  # the Evaluator core refused it
        problem, raw = rejected
    if problem is not None:
        text = f"{InvalidScoreError.__name__}: {problem}"
        metadata = {**(metadata or {}), "rejected_score": safe_text(raw, 200)}
        if dropped:
            metadata["dropped"] = dropped
        return EvalFeedback(
            key=key,
            comment=f"Not scored: {problem}.",
            metadata=metadata,
            weight=bound.spec.weight,
            error=text,
        )
    if dropped:
        metadata = {**(metadata or {}), "dropped": dropped}
    return EvalFeedback(
        key=key,
        score=score,
        comment=item.get("comment"),
        metadata=metadata,
        weight=bound.spec.weight,
        passed=verdict(score, bound.spec.threshold),
    )


def checked_score(bound: Bound, key: str | None, score: Any) -> tuple[ScoreValue, str | None]:
    """``(score as plain data, None)``, or ``(None, why it cannot be stored)``: the one
    range rule (:func:`lg_eval.feedback.check_score`) against the range ``bound`` declares
    for feedback ``key`` (0..1 or a bool when it declares none)."""
    value, problem = check_score(score, bound.score_range(key))
    return value, None if problem is None else f"evaluator {bound.name!r} produced {problem}"


# --- plain data ------------------------------------------------------------------------------

MAX_DEPTH = 32
MAX_DROPPED = 20
_INT_RANGE = (-(2**63), 2**64 - 1)  # what msgpack (LangGraph's serializer) can write


def _plain_metadata(metadata: Any, dropped: list[str]) -> dict[str, Any] | None:
    if metadata is None:
        return None
    value = plain(metadata, "metadata", dropped)
    if isinstance(value, dict):
        return value
    if value is not _DROP:
        _note(dropped, "metadata", f"a {type(metadata).__name__}, not a dict")
    return None


class _Dropped:
    def __repr__(self) -> str:
        return "<dropped>"


_DROP: Any = _Dropped()


def plain(value: Any, path: str, dropped: list[str]) -> Any:
    """``value`` as plain data (dicts with string keys, lists, str, finite numbers, bools,
    None); what cannot be kept is left out and noted in ``dropped`` as ``'path: why'``.

    Pydantic models and dataclasses become dicts, enums their value, dates ISO
    text, UUIDs and paths text. Returns ``_DROP`` when ``value`` itself is dropped.
    """
    return _plain(value, path, dropped, set(), 0)


def _note(dropped: list[str], path: str, why: str) -> None:
    if len(dropped) < MAX_DROPPED:
        dropped.append(f"{path}: {why}")
    elif len(dropped) == MAX_DROPPED:
        dropped.append("… (more dropped values not listed)")


def _plain(value: Any, path: str, dropped: list[str], active: set[int], depth: int) -> Any:
    try:
        return _convert(value, path, dropped, active, depth)
    except Exception as exc:  # a container whose iteration or conversion raises
        _note(dropped, path, f"could not be read ({describe_error(exc)[:200]})")
        return _DROP


def _convert(value: Any, path: str, dropped: list[str], active: set[int], depth: int) -> Any:
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        return str(value)
    if isinstance(value, enum.Enum):
        return _plain(value.value, path, dropped, active, depth)
    if isinstance(value, int):
        if _INT_RANGE[0] <= value <= _INT_RANGE[1]:
            return int(value)
        _note(dropped, path, "an integer too large to store")
        return _DROP
    if isinstance(value, float):
        if math.isfinite(value):
            return float(value)
        _note(dropped, path, f"the non-finite number {value!r}")
        return _DROP
    if isinstance(value, datetime.date | datetime.time):
        return value.isoformat()
    if isinstance(value, uuid.UUID | PurePath):
        return str(value)
    if isinstance(value, Decimal | numbers.Real):
        return _plain(float(value), path, dropped, active, depth)
    if depth >= MAX_DEPTH:
        _note(dropped, path, f"nested more than {MAX_DEPTH} levels deep")
        return _DROP
    if isinstance(value, BaseModel):
        return _plain(value.model_dump(mode="json"), path, dropped, active, depth + 1)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
        return _plain(fields, path, dropped, active, depth + 1)
    if isinstance(value, Mapping | list | tuple | set | frozenset):
        if id(value) in active:
            _note(dropped, path, "a reference to a containing value (a cycle)")
            return _DROP
        active.add(id(value))
        try:
            return _container(value, path, dropped, active, depth)
        finally:
            active.discard(id(value))
    _note(dropped, path, f"a {type(value).__name__}, which is not plain data")
    return _DROP


def _container(value: Any, path: str, dropped: list[str], active: set[int], depth: int) -> Any:
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for raw_key, item in list(value.items()):
            name = _key(raw_key)
            where = f"{path}.{name if name is not None else safe_text(raw_key, 50)}"
            if name is None:
                _note(dropped, where, f"a key of type {type(raw_key).__name__}")
                continue
            converted = _plain(item, where, dropped, active, depth + 1)
            if converted is not _DROP:
                out[name] = converted
        return out
    items = []
    for index, item in enumerate(list(value)):
        converted = _plain(item, f"{path}[{index}]", dropped, active, depth + 1)
        if converted is not _DROP:
            items.append(converted)
    return items


def _key(key: Any) -> str | None:
    if isinstance(key, str):
        return str(key)
    if (
        key is None
        or isinstance(key, bool | int)
        or (isinstance(key, float) and math.isfinite(key))
    ):
        return str(key)
    if isinstance(key, enum.Enum):
        return _key(key.value)
    return None


__all__ = [
    "DEFAULT_TIMEOUT",
    "Bound",
    "Call",
    "EvalSpec",
    "EvaluatorLike",
    "EvaluatorTimeoutError",
    "InvalidScoreError",
    "Outcome",
    "ReferenceKeyError",
    "check_timeout",
    "checked_score",
    "describe_error",
    "error_feedback",
    "plain",
    "raise_first",
    "reference_part",
    "resolve",
    "run_blocking",
    "run_calls",
    "safe_text",
    "to_feedback",
    "verdict",
]
