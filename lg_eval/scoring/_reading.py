"""Reading what an evaluator returned as scored feedback, with the one range rule.

An evaluator may return a feedback dict, a list of them, LangSmith's
``{"results": [...]}``, a pydantic model of either, or a bare score (a bool, a
number or None). :func:`read_outcome` reads any of them, and anything else (or
an error the evaluator raised) as that evaluator's error, so a host never
crashes on what a stranger's function returned. Each score is held to the range
the evaluator declares for its key (:func:`lg_eval._feedback.check_score`): a
score the :class:`~lg_eval._evaluator.Evaluator` core already refused, or one
refused here, is kept out (``score=None``) with the reason.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from lg_eval._evaluator import Evaluator
from lg_eval._feedback import (
    ScoreRange,
    ScoreValue,
    check_score,
    describe_error,
    refusal,
    refused_because,
)
from lg_eval.errors import InvalidScoreError

if TYPE_CHECKING:
    from lg_eval.scoring._calls import EvaluatorCall, Outcome


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
