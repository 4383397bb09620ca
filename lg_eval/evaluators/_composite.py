"""A weighted composite of other evaluators: one score, with every part kept in the metadata.

Its parts are called through the one scoring step (:mod:`lg_eval.scoring`), so one
core serves both entry points: the sync composite calls each part's sync evaluator
in turn, the async one awaits the parts' async twins together (LLM judges then run
without blocking).
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lg_eval._effects import Core
from lg_eval._evaluator import Evaluator, as_evaluator, make_evaluator
from lg_eval._feedback import UNIT, Feedback, ScoreRange, is_finite_number
from lg_eval.errors import InvalidOptionError
from lg_eval.evaluators._registry import get_evaluator as get
from lg_eval.scoring import EvaluatorCall, call_evaluators, raise_first


@dataclass(frozen=True)
class _Part:
    name: str
    weight: float
    run: Callable[..., Any]
    arun: Callable[..., Any]
    scores: ScoreRange = UNIT  # the part's declared range; 0..1 when it declares none


def create_composite_evaluator(
    evaluators: Mapping[str, Callable[..., Any] | str] | Sequence[Callable[..., Any] | str],
    weights: Mapping[str, float] | None = None,
    *,
    key: str = "composite",
) -> Evaluator:
    """One score from several evaluators: the weighted mean of their scores.

    ``evaluators`` maps a name to an evaluator or a registered evaluator name
    (or is a list, each part named by its ``__name__`` or registry name);
    ``weights`` maps names to non-negative weights (default: all equal; a
    name left out weighs 0). Bool scores count as 1.0 /
    0.0; a part that returns ``None`` is left out and the remaining weights are
    renormalized. Every part gets the same ``outputs``, ``reference_outputs``,
    ``inputs`` and extra keywords. ``metadata["parts"]`` holds each part's
    score, weight and comment; the comment names the parts that scored below 1.

    A part's score must fit the range it declares (``evaluator.score_range``;
    a part declaring none, such as a plain function, must score from 0 to 1).
    A part scoring NaN, infinity or outside its range makes the composite
    ``score=None`` with ``metadata["error"]`` naming the part: a broken part is
    never averaged in. The composite's own range spans its parts' (0 to 1 for
    the built-ins).

    Awaited (``await composite.aevaluate(...)``), lg_eval evaluators among the
    parts are awaited too (LLM judges then run without blocking) and plain
    functions run in a worker thread; a coroutine function can only be a part
    of the awaited composite.

    Raises:
        InvalidOptionError: no parts, a weight for an unknown part, a negative
            or non-finite weight, or all weights zero.
    """
    named = _named(evaluators)
    weight_of = _weights(named, weights)
    parts = [_part(name, weight_of[name], evaluator) for name, evaluator in named.items()]

    def scorer(**call: Any) -> Core[Feedback]:
        calls = [EvaluatorCall(part.name, part.run, part.arun, call) for part in parts]
        outcomes = yield call_evaluators(calls)
        raise_first(outcomes)  # a part that raises fails the composite
        results = {part.name: result for part, (result, _) in zip(parts, outcomes, strict=True)}
        return _combine(parts, results)

    scorer.__doc__ = create_composite_evaluator.__doc__
    low = min(part.scores.low for part in parts)
    high = max(part.scores.high for part in parts)
    return make_evaluator(key, scorer, score_range=ScoreRange.between(low, high))


def _named(evaluators: Any) -> dict[str, Callable[..., Any]]:
    if isinstance(evaluators, Mapping):
        named = {name: get(e) if isinstance(e, str) else e for name, e in evaluators.items()}
    elif isinstance(evaluators, Sequence) and not isinstance(evaluators, str):
        named = {}
        for evaluator in evaluators:
            name = evaluator if isinstance(evaluator, str) else getattr(evaluator, "__name__", "")
            evaluator = get(evaluator) if isinstance(evaluator, str) else evaluator
            if name in named:
                raise InvalidOptionError(
                    f"Two parts are named {name!r}; pass a dict of name -> evaluator instead."
                )
            named[name] = evaluator
    else:
        named = {}
    if not named or not all(callable(e) for e in named.values()):
        raise InvalidOptionError(
            "evaluators must be a non-empty dict of name -> evaluator (or a list of evaluators)."
        )
    return named


def _weights(named: dict[str, Any], weights: Mapping[str, float] | None) -> dict[str, float]:
    if weights is None:
        return dict.fromkeys(named, 1.0)
    unknown = sorted(set(weights) - set(named))
    if unknown:
        raise InvalidOptionError(
            f"weights name unknown parts {unknown}; the parts are {sorted(named)}."
        )
    resolved = {name: weights.get(name, 0.0) for name in named}
    for name, weight in resolved.items():
        if not is_finite_number(weight) or weight < 0:
            raise InvalidOptionError(f"weights[{name!r}]={weight!r} must be a number >= 0.")
    if not sum(resolved.values()):
        raise InvalidOptionError("At least one weight must be above 0.")
    return {name: float(weight) for name, weight in resolved.items()}


def _part(name: str, weight: float, evaluator: Callable[..., Any]) -> _Part:
    built = as_evaluator(evaluator)
    if built is not None:
        declared = built.score_range or UNIT
        scores = ScoreRange.between(0, 1) if declared.kind == "bool" else declared
        return _Part(name, weight, built, built.aevaluate, scores)
    if inspect.iscoroutinefunction(evaluator):

        def refuse(**_: Any) -> Any:
            raise InvalidOptionError(
                f"Part {name!r} is async; await the composite (its .aevaluate) to run it."
            )

        return _Part(name, weight, refuse, evaluator)

    async def in_thread(**call: Any) -> Any:
        return await asyncio.to_thread(evaluator, **call)

    return _Part(name, weight, evaluator, in_thread)


def _value(result: Any) -> float | None:
    if isinstance(result, list):  # some evaluators return a list of results: take the first
        result = result[0] if result else None
    score = result.get("score") if isinstance(result, Mapping) else result
    if score is None:
        return None
    if isinstance(score, bool | int | float):
        return float(score)
    raise InvalidOptionError(f"A part returned a score of {score!r}; expected a number or bool.")


def _combine(parts: list[_Part], results: dict[str, Any]) -> Feedback:
    rows: dict[str, dict[str, Any]] = {}
    counted: dict[str, tuple[float, float]] = {}  # name -> (score, weight) of the parts that count
    broken: list[str] = []
    for part in parts:
        result = results[part.name]
        comment = result.get("comment") if isinstance(result, Mapping) else None
        score = _value(result)
        if score is not None and not part.scores.accepts(score):
            broken.append(f"{part.name} scored {score!r}, not {part.scores.describe()}")
            rows[part.name] = {"score": None, "weight": part.weight, "comment": comment}
            rows[part.name]["error"] = f"invalid score {score!r}"
            continue
        rows[part.name] = {"score": score, "weight": part.weight, "comment": comment}
        if score is not None and part.weight > 0:
            counted[part.name] = (score, part.weight)
    if broken:  # a broken part is never averaged in, nor silently left out
        message = f"a part gave an invalid score: {'; '.join(broken)}"
        return Feedback(
            score=None,
            comment=f"Not scored: {message}.",
            metadata={"parts": rows, "error": {"type": "invalid_part_score", "message": message}},
        )
    total = sum(weight for _, weight in counted.values())
    value = sum(score * weight for score, weight in counted.values()) / total if total else None
    low = [f"{n} {score:.2f}" for n, (score, _) in counted.items() if score < 1.0]
    comment = f"Below 1.0: {', '.join(low)}." if low else None
    skipped = sorted(n for n, r in rows.items() if r["score"] is None)
    if skipped:
        comment = (comment + " " if comment else "") + f"No score from: {', '.join(skipped)}."
    return Feedback(score=value, comment=comment, metadata={"parts": rows})
