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
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import threading
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langgraph.errors import GraphBubbleUp
from pydantic import BaseModel

from lg_eval._effects import Effect
from lg_eval.errors import InvalidOptionError, LgEvalError
from lg_eval.evaluator import as_evaluator
from lg_eval.evaluators import get_evaluator
from lg_eval.feedback import ScoreValue
from lg_eval.nodes.state import EvalFeedback


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
    """

    evaluator: Callable[..., Any] | str
    key: str | None = None
    weight: float = 1.0
    threshold: float | None = None
    reference_key: str | None = None

    def __post_init__(self) -> None:
        if not (callable(self.evaluator) or isinstance(self.evaluator, str)):
            raise InvalidOptionError(
                f"EvalSpec needs an evaluator function or a registered name, got "
                f"{self.evaluator!r}."
            )
        if isinstance(self.weight, bool) or not isinstance(self.weight, int | float):
            raise InvalidOptionError(f"EvalSpec weight={self.weight!r} must be a number >= 0.")
        if self.weight < 0:
            raise InvalidOptionError(f"EvalSpec weight={self.weight!r} must be >= 0.")
        if self.reference_key is not None and not (
            isinstance(self.reference_key, str) and self.reference_key
        ):
            raise InvalidOptionError(
                f"EvalSpec reference_key={self.reference_key!r} must be a non-empty string "
                "(a key of the reference dict) or None for the whole reference."
            )


EvaluatorLike = Callable[..., Any] | str | EvalSpec


@dataclass(frozen=True)
class Bound:
    """An :class:`EvalSpec` resolved to what to call from sync and from async code."""

    spec: EvalSpec
    call: Callable[..., Any]
    acall: Callable[..., Any]
    name: str


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
        return Bound(spec, built, built.aevaluate, target)
    evaluator = as_evaluator(target)
    if evaluator is not None:  # one scorer: called from sync code, awaited from async code
        return Bound(spec, evaluator, evaluator.aevaluate, evaluator.key)
    name = getattr(target, "__name__", None)
    return Bound(spec, target, target, str(name or type(target).__name__))


# --------------------------------------------------------------------------- calling


@dataclass(frozen=True)
class Call:
    """One evaluator call: which evaluator and its keyword arguments.

    ``kwargs`` hold the case's whole reference; :meth:`arguments` narrows it to
    the evaluator's ``reference_key`` when its spec has one.
    """

    bound: Bound
    kwargs: dict[str, Any] = field(default_factory=dict)

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


def run_calls(calls: Sequence[Call]) -> Effect[list[Outcome]]:
    """Call every evaluator; each outcome is ``(result, None)`` or ``(None, error)``."""
    return Effect(lambda: [_call(c) for c in calls], lambda: _acall_all(calls))


def _call(call: Call) -> Outcome:
    try:
        result = call.bound.call(**call.arguments())
        return (run_blocking(result) if inspect.isawaitable(result) else result), None
    except GraphBubbleUp:
        raise
    except Exception as exc:
        return None, exc


async def _acall(call: Call) -> Outcome:
    try:
        result = call.bound.acall(**call.arguments())
        return (await result if inspect.isawaitable(result) else result), None
    except GraphBubbleUp:
        raise
    except Exception as exc:
        return None, exc


async def _acall_all(calls: Sequence[Call]) -> list[Outcome]:
    return list(await asyncio.gather(*(_acall(c) for c in calls)))


def run_blocking(awaitable: Awaitable[Any]) -> Any:
    """Run an async evaluator to completion from sync code (even under a running loop)."""

    async def wait() -> Any:
        return await awaitable

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(wait())
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = asyncio.run(wait())
        except BaseException as exc:  # re-raised in the calling thread
            box["error"] = exc

    context = contextvars.copy_context()  # keeps tracing (run tree) context in the worker
    worker = threading.Thread(target=context.run, args=(target,), name="lg-eval-evaluator")
    worker.start()
    worker.join()
    if "error" in box:
        raise box["error"]
    return box["value"]


def raise_first(outcomes: Sequence[Outcome]) -> None:
    """Re-raise the first evaluator error (fail-fast mode)."""
    for _, error in outcomes:
        if error is not None:
            raise error


# --------------------------------------------------------------------------- results


def verdict(score: ScoreValue, threshold: float | None) -> bool | None:
    """Whether ``score`` passes: booleans pass when true, numbers need a threshold."""
    if score is None:
        return None
    if isinstance(score, bool) and threshold is None:
        return score
    if threshold is None:
        return None
    return float(score) >= threshold


def to_feedback(bound: Bound, outcome: Outcome) -> list[EvalFeedback]:
    """The feedback records for one outcome (an evaluator may return several results)."""
    result, error = outcome
    if error is None:
        try:
            return _records(bound, result)
        except Exception as exc:  # an unusable result is this evaluator's error, not ours
            error = exc
    return [error_feedback(bound, error)]


def error_feedback(bound: Bound, error: BaseException) -> EvalFeedback:
    """The feedback standing in for an evaluator that raised (or could not run)."""
    text = f"{type(error).__name__}: {error}"
    return EvalFeedback(
        key=bound.spec.key or bound.name,
        comment=f"Evaluator {bound.name!r} failed: {text}",
        weight=bound.spec.weight,
        error=text,
    )


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
    if isinstance(item, bool | int | float) or item is None:
        item = {"score": item}
    if not isinstance(item, Mapping):
        raise TypeError(
            f"evaluator {bound.name!r} returned a {type(item).__name__}; expected a feedback "
            "dict {'key', 'score', 'comment', 'metadata'} or a bare score"
        )
    key = (bound.spec.key if single else None) or item.get("key") or bound.spec.key or bound.name
    score = item.get("score")
    return EvalFeedback(
        key=key,
        score=score,
        comment=item.get("comment"),
        metadata=item.get("metadata"),
        weight=bound.spec.weight,
        passed=verdict(score, bound.spec.threshold),
    )


__all__ = [
    "Bound",
    "Call",
    "EvalSpec",
    "EvaluatorLike",
    "Outcome",
    "ReferenceKeyError",
    "error_feedback",
    "raise_first",
    "reference_part",
    "resolve",
    "run_blocking",
    "run_calls",
    "to_feedback",
    "verdict",
]
