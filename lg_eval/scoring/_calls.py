"""The scoring step: calling evaluators (each with its own arguments, within its timeout and
the budget) and reading what they returned as scored feedback, with the one range rule.

:func:`call_evaluators` is an :class:`~lg_eval._effects.Effect`: sequential when driven
sync and concurrent when awaited, both through one per-call core
(:func:`~lg_eval._effects.drive` / :func:`~lg_eval._effects.adrive`). An
evaluator that raises yields an error outcome instead of an exception;
LangGraph's own control flow (``interrupt()`` and friends,
:class:`~langgraph.errors.GraphBubbleUp`) always propagates. With a timeout, an
evaluator runs in a daemon thread (sync) or under ``asyncio.timeout`` (async)
and one that does not finish in time becomes an :class:`EvaluatorTimeoutError`.

References: a host gives every evaluator its whole reference. LangSmith-style
references holding several expectations (``{"trajectory": ..., "tool_calls": ...,
"output": ...}``) need no unwrapping for lg_eval's evaluators, which each take
their own field from a dict (:func:`lg_eval._inputs.select_field`). An evaluator
that reads the whole reference (a custom function) is given one part of it with
``reference_key``; a reference without that key is that evaluator's error
outcome (:class:`ReferenceKeyError`), not a crash.

Reading: an evaluator may return a feedback dict, a list of them, LangSmith's
``{"results": [...]}``, a pydantic model of either, or a bare score (a bool, a
number or None). :func:`read_outcome` reads any of them, and anything else (or
an error the evaluator raised) as that evaluator's error, so a host never
crashes on what a stranger's function returned. Each score is held to the range
the evaluator declares for its key (:func:`lg_eval._feedback.check_score`): a
score the :class:`~lg_eval._evaluator.Evaluator` core already refused, or one
refused here, is kept out (``score=None``) with the reason.
"""

from __future__ import annotations

import asyncio
import inspect
import numbers
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langgraph.errors import GraphBubbleUp
from pydantic import BaseModel

from lg_eval._daemons import athread, run_in_daemon
from lg_eval._effects import Core, Effect, adrive, drive
from lg_eval._evaluator import Evaluator
from lg_eval._feedback import (
    ScoreRange,
    ScoreValue,
    check_score,
    describe_error,
    refusal,
    refused_because,
)
from lg_eval.errors import EvaluatorTimeoutError, InvalidScoreError, ReferenceKeyError


@dataclass(frozen=True)
class DeclaredRanges:
    """The score ranges an evaluator declares: one per feedback key (a rubric's dimensions),
    ``default`` for any other key, or ``forced`` for every key (a host's override).

    ``None`` everywhere means it declares none: its scores must then be a bool or a number
    from 0 to 1 (:data:`lg_eval._feedback.DEFAULT_RANGE`).
    """

    by_key: Mapping[str, ScoreRange | None] = field(default_factory=dict)
    default: ScoreRange | None = None
    forced: ScoreRange | None = None

    @classmethod
    def of(cls, evaluator: Evaluator[Any], forced: ScoreRange | None = None) -> DeclaredRanges:
        """What an :class:`~lg_eval._evaluator.Evaluator` declares: its own key's range and
        its other keys' (``key_ranges``); one built by ``make_evaluator`` without
        ``score_range`` declares none."""
        by_key = {evaluator.key: evaluator.score_range, **evaluator.key_ranges}
        return cls(by_key, evaluator.score_range, forced)

    def of_key(self, key: str | None) -> ScoreRange | None:
        """The range declared for feedback ``key`` (None: none declared, so 0..1 or a bool)."""
        if self.forced is not None:
            return self.forced
        if key is not None and key in self.by_key:
            return self.by_key[key]
        return self.default


@dataclass(frozen=True)
class EvaluatorCall:
    """One evaluator call: what to call, with which arguments, and how its feedback is read.

    Args:
        name: the evaluator's name in errors and records.
        call: what sync code calls; ``acall``: what async code awaits (the evaluator's
            async twin when it has one, else ``call`` again).
        kwargs: ``outputs``, ``reference_outputs`` and ``inputs``, the reference whole.
        timeout: seconds this call may take (None: only the budget bounds it).
        reference_key: give the evaluator ``reference_outputs[reference_key]`` instead.
        key: the key of feedback that names none, and of the evaluator's errors.
        rename: ``key`` replaces the key of a single feedback the evaluator returns.
        declared: the score ranges the evaluator declares (None: it declares none).
    """

    name: str
    call: Callable[..., Any]
    acall: Callable[..., Any]
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    timeout: float | None = None
    reference_key: str | None = None
    key: str = ""
    rename: bool = False
    declared: DeclaredRanges = field(default_factory=DeclaredRanges)

    def __post_init__(self) -> None:
        if not self.key:
            object.__setattr__(self, "key", self.name)

    @classmethod
    def of(
        cls, evaluator: Evaluator[Any], kwargs: Mapping[str, Any], name: str | None = None
    ) -> EvaluatorCall:
        """A call of an :class:`~lg_eval._evaluator.Evaluator`: called from sync code,
        awaited (``aevaluate``) from async code, held to the ranges it declares."""
        return cls(
            name or evaluator.key,
            evaluator,
            evaluator.aevaluate,
            kwargs,
            key=evaluator.key,
            declared=DeclaredRanges.of(evaluator),
        )

    def arguments(self) -> dict[str, Any]:
        """The keyword arguments this evaluator is called with.

        Raises:
            ReferenceKeyError: there is a ``reference_key`` the reference lacks (or the
                reference is not a dict).
        """
        if self.reference_key is None:
            return dict(self.kwargs)
        reference = self.kwargs.get("reference_outputs")
        return {**self.kwargs, "reference_outputs": reference_part(reference, self.reference_key)}


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


def call_evaluators(
    calls: Sequence[EvaluatorCall], timeout: float | None = None
) -> Effect[list[Outcome]]:
    """Call every evaluator; each outcome is ``(result, None)`` or ``(None, error)``.

    Each call is bounded by its own ``EvaluatorCall.timeout`` and all of them together by
    ``timeout`` seconds (sync: one after another, so a slow evaluator leaves
    less time to the next; async: concurrently, each bounded by the smaller).
    Both ways run the one per-call core, :func:`_outcome`.
    """

    async def together() -> list[Outcome]:
        cores = (adrive(_outcome(c, *_limit(c, timeout, timeout))) for c in calls)
        return list(await asyncio.gather(*cores))

    return Effect(lambda: drive(_in_turn(calls, timeout)), together)


def _in_turn(calls: Sequence[EvaluatorCall], budget: float | None) -> Core[list[Outcome]]:
    """The calls one after another, each given what is left of ``budget``."""
    deadline = None if budget is None else time.monotonic() + budget
    outcomes: list[Outcome] = []
    for call in calls:
        left = None if deadline is None else deadline - time.monotonic()
        if left is not None and left <= 0:
            error = EvaluatorTimeoutError(
                f"evaluator {call.name!r} was not run: the node's timeout of "
                f"{budget:g}s was used up by the evaluators before it"
            )
            outcomes.append((None, error))
            continue
        outcomes.append((yield from _outcome(call, *_limit(call, budget, left))))
    return outcomes


def _limit(
    call: EvaluatorCall, budget: float | None, left: float | None
) -> tuple[float | None, str]:
    """The seconds this call may take, and whose limit that is (for the error)."""
    own = call.timeout
    if own is None and left is None:
        return None, ""
    if left is None or (own is not None and own <= left):
        return own, f"its timeout of {own:g}s"
    return left, f"the node's timeout of {budget:g}s"


def _outcome(call: EvaluatorCall, limit: float | None, whose: str) -> Core[Outcome]:
    """One evaluator call as an outcome: what it raised is its error (a timeout included),
    except LangGraph's control flow (``interrupt()``: :class:`GraphBubbleUp`), which
    propagates."""
    try:
        return (yield _invocation(call, limit, whose)), None
    except GraphBubbleUp:
        raise
    except Exception as exc:
        return None, exc


def _invocation(call: EvaluatorCall, limit: float | None, whose: str) -> Effect[Any]:
    """Calling the evaluator within ``limit`` seconds: in a daemon thread when sync (so it can
    be abandoned), under ``asyncio.timeout`` when async; past the limit it raises
    :class:`EvaluatorTimeoutError`."""

    def run() -> Any:
        if limit is None:
            return _invoke(call)
        return run_in_daemon(
            lambda: _invoke(call),
            limit,
            name="lg-eval-evaluator",
            on_timeout=lambda: _timed_out(call, whose),
        )

    async def arun() -> Any:
        scope = asyncio.timeout(limit)
        try:
            async with scope:
                return await _ainvoke(call, off_loop=limit is not None)
        except GraphBubbleUp:
            raise
        except Exception:
            if limit is not None and scope.expired():
                raise _timed_out(call, whose) from None
            raise

    return Effect(run, arun)


def _timed_out(call: EvaluatorCall, whose: str) -> EvaluatorTimeoutError:
    return EvaluatorTimeoutError(
        f"evaluator {call.name!r} did not finish within {whose}; it was abandoned"
    )


def _invoke(call: EvaluatorCall) -> Any:
    result = call.call(**call.arguments())
    return run_blocking(result) if inspect.isawaitable(result) else result


async def _ainvoke(call: EvaluatorCall, off_loop: bool) -> Any:
    function = call.acall
    if off_loop and not _is_async(function):  # a sync function: in a thread, so it can time out
        result = await athread(lambda: function(**call.arguments()), name="lg-eval-evaluator")
    else:
        result = function(**call.arguments())
    return await result if inspect.isawaitable(result) else result


def _is_async(function: Any) -> bool:
    return inspect.iscoroutinefunction(function) or inspect.iscoroutinefunction(
        getattr(function, "__call__", None)  # noqa: B004 - an async __call__
    )


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


@dataclass(frozen=True)
class Scored:
    """One feedback as the scoring step read it.

    ``score`` is plain data (a bool, an int, a float or None); ``comment`` and
    ``metadata`` are what the evaluator returned. ``error`` is ``'ErrorType: message'``
    when the evaluator raised, returned something that is no feedback, or gave a score
    outside its range; for the last, ``refused`` says why and ``rejected`` is the score
    refused (as text when the Evaluator core refused it).
    """

    key: str
    score: ScoreValue = None
    comment: str | None = None
    metadata: Any = None
    error: str | None = None
    refused: str | None = None
    rejected: Any = None


def read_outcome(call: EvaluatorCall, outcome: Outcome) -> list[Scored]:
    """The feedback of one evaluator call (an evaluator may return several results).

    Never raises: whatever the evaluator returned or raised becomes :class:`Scored`
    feedback (one error feedback, keyed ``call.key``, when it is unusable).
    """
    result, error = outcome
    if error is None:
        try:
            return _read(call, result)
        except Exception as exc:  # an unusable result is this evaluator's error, not ours
            error = exc
    return [Scored(key=call.key, error=describe_error(error))]


def _read(call: EvaluatorCall, result: Any) -> list[Scored]:
    if isinstance(result, BaseModel):
        result = result.model_dump()
    if isinstance(result, Mapping) and isinstance(result.get("results"), list | tuple):
        result = list(result["results"])
    items = result if isinstance(result, list) else [result]
    if not items:
        raise TypeError(f"evaluator {call.name!r} returned no results")
    single = len(items) == 1
    return [_one(call, item, single) for item in items]


def _one(call: EvaluatorCall, item: Any, single: bool) -> Scored:
    if isinstance(item, BaseModel):
        item = item.model_dump()
    if isinstance(item, bool | numbers.Number) or item is None:
        item = {"score": item}
    if not isinstance(item, Mapping):
        raise TypeError(
            f"evaluator {call.name!r} returned a {type(item).__name__}; expected a feedback "
            "dict {'key', 'score', 'comment', 'metadata'} or a bare score"
        )
    own_key, comment = _text(call, item, "key"), _text(call, item, "comment")
    key = (call.key if single and call.rename else None) or own_key or call.key
    raw, metadata = item.get("score"), item.get("metadata")
    score, problem = check_score(raw, call.declared.of_key(own_key or call.name))
    if problem is not None:
        why, shown = refused_because(call.name, problem), None
    elif raw is None and (refused := refusal(metadata)) is not None:  # the Evaluator core's
        why, shown = refused
    else:
        return Scored(key, score, comment, metadata)
    return Scored(
        key,
        None,
        comment,
        metadata,
        error=f"{InvalidScoreError.__name__}: {why}",
        refused=why,
        rejected=raw if raw is not None else shown,
    )


def _text(call: EvaluatorCall, item: Mapping[str, Any], field: str) -> str | None:
    """``item[field]`` when it is text (or missing); anything else is no feedback."""
    value = item.get(field)
    if value is None or isinstance(value, str):
        return value
    raise TypeError(
        f"evaluator {call.name!r} returned a feedback whose {field} is a "
        f"{type(value).__name__}; expected text or None"
    )
