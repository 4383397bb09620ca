"""What an evaluator returned, made safe before it reaches graph state.

A score must be None, or a bool or a finite number inside the evaluator's
declared range (0..1 or a bool when it declares none:
:func:`lg_eval.feedback.check_score`); anything else becomes an error feedback
with ``passed=None``. Metadata is reduced to plain data
(:mod:`lg_eval.nodes._plain`), naming what had to be dropped in
``metadata["dropped"]``.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from lg_eval.errors import InvalidScoreError
from lg_eval.feedback import (
    FeedbackDict,
    checked_score,
    describe_error,
    refusal,
    safe_text,
    verdict,
)
from lg_eval.nodes._calls import Outcome
from lg_eval.nodes._plain import plain_metadata
from lg_eval.nodes.spec import Bound
from lg_eval.nodes.state import EvalFeedback


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
    metadata = plain_metadata(item.get("metadata"), dropped)
    raw = item.get("score")
    score, problem = _checked(bound, own_key, raw, metadata)
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


def _checked(
    bound: Bound, own_key: str | None, raw: Any, metadata: dict[str, Any] | None
) -> tuple[Any, str | None]:
    """``(score as plain data, None)``, or ``(the refused score, why)``: the one range
    rule (:func:`lg_eval.feedback.checked_score`) against the range ``bound`` declares
    for the feedback's key, or the Evaluator core's refusal recorded in ``metadata``."""
    given: FeedbackDict = {"key": bound.name, "score": raw, "comment": None, "metadata": None}
    checked = checked_score(given, bound.score_range(own_key or bound.name))
    refused = refusal(checked["metadata"]) or (refusal(metadata) if raw is None else None)
    if refused is None:
        return checked["score"], None
    return (raw if raw is not None else refused[1]), refused[0]


__all__ = [
    "checked_score",
    "error_feedback",
    "to_feedback",
]
