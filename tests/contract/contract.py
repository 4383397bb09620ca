"""The contract every public evaluator and helper keeps, as assertions.

* Input that cannot be evaluated raises a typed :class:`lg_eval.errors.LgEvalError`
  whose message names the argument, or gives ``score=None`` with the reason;
  never another exception from inside, never a score.
* Every score is ``None``, or finite and inside the evaluator's declared range.
* The same input twice gives the same result; sync and async agree.
"""

from __future__ import annotations

import asyncio
import math
import os
from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, settings

from lg_eval import Evaluator
from lg_eval.errors import LgEvalError

ARGUMENTS = ("outputs", "reference_outputs", "inputs", "messages", "expected", "where")

_LOOP = asyncio.new_event_loop()

SCALE = float(os.environ.get("LG_EVAL_CONTRACT_SCALE", "1"))
"""Multiplies every contract test's example count (``LG_EVAL_CONTRACT_SCALE=20`` for a long
hunt); at 1 all contract tests together take about 20 s."""


def fuzz(examples: int) -> settings:
    """Hypothesis settings for a contract test: ``examples`` (times :data:`SCALE`), no
    deadline (a loaded CI machine is slow, the budget is the example count), no database."""
    return settings(
        max_examples=max(1, int(examples * SCALE)),
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        database=None,
    )


def outcome(call: Callable[[], Any]) -> tuple[str, Any]:
    """``("ok", result)`` or ``("error", exception)``; any exception but a typed one fails."""
    try:
        return "ok", call()
    except LgEvalError as exc:
        assert str(exc), f"{type(exc).__name__} without a message"
        return "error", exc
    except RecursionError as exc:  # pragma: no cover - the assertion explains it
        raise AssertionError(f"RecursionError escaped: {exc}") from exc


def same(first: tuple[str, Any], second: tuple[str, Any]) -> bool:
    """Two outcomes are the same: equal results (by repr, so NaN inside metadata compares), or
    errors of one type with one message."""
    if first[0] != second[0]:
        return False
    if first[0] == "error":
        return type(first[1]) is type(second[1]) and str(first[1]) == str(second[1])
    try:
        return repr(first[1]) == repr(second[1])
    except RecursionError:  # a reader handing back a deeply nested value it was given
        return first[1] is second[1] or type(first[1]) is type(second[1])


def check_score(evaluator: Evaluator[Any], result: Any, *, builtin: bool = True) -> None:
    """The result is feedback whose score fits the evaluator's declared range (a built-in
    declares one and gives the reason for every ``score=None``)."""
    feedbacks = result if isinstance(result, list) else [result]
    for feedback in feedbacks:
        assert isinstance(feedback, dict), feedback
        assert set(feedback) == {"key", "score", "comment", "metadata"}, feedback
        score = feedback["score"]
        if score is None and not builtin:
            continue
        if score is None:
            reason = feedback["comment"] or (feedback["metadata"] or {}).get("error")
            assert reason, f"score=None without a reason: {feedback}"
            continue
        assert isinstance(score, bool | int | float), feedback
        assert math.isfinite(score), feedback
        if evaluator.score_range is None:
            assert not builtin, f"{evaluator!r} declares no score range"
            continue
        assert evaluator.score_range.accepts(score), (evaluator.score_range, feedback)


def check_evaluator(
    evaluator: Evaluator[Any], *, builtin: bool = True, **call: Any
) -> tuple[str, Any]:
    """Call ``evaluator`` twice and await it once; all three agree and keep the contract."""
    first = outcome(lambda: evaluator(**call))
    second = outcome(lambda: evaluator(**call))
    awaited = outcome(lambda: _LOOP.run_until_complete(evaluator.aevaluate(**call)))
    assert same(first, second), (first, second)
    assert same(first, awaited), (first, awaited)
    if first[0] == "ok":
        check_score(evaluator, first[1], builtin=builtin)
    elif call.get("outputs") is None:
        assert "outputs" in str(first[1])
    return first


def check_helper(helper: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[str, Any]:
    """A helper returns, or raises a typed error; twice the same."""
    first = outcome(lambda: helper(*args, **kwargs))
    second = outcome(lambda: helper(*args, **kwargs))
    assert same(first, second), (first, second)
    return first
