"""Route a graph on its own evaluation: conditional-edge helpers for EvalNode results.

::

    builder.add_conditional_edges(
        "check", route_on_score(0.8, passed="respond", failed="revise",
                                max_failures=2, exhausted="human")
    )

The router reads the *latest evaluation*: the trailing feedback records that
one eval node produced in one superstep (filtered by ``node`` / ``key`` when
given), so older turns' results never decide today's route.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Annotated, Any, Literal

from pydantic import PlainValidator
from pydantic_core import PydanticCustomError

from lg_eval._arguments import Size, validated
from lg_eval._feedback import Threshold
from lg_eval.errors import InvalidOptionError, LgEvalError
from lg_eval.nodes._state import DEFAULT_KEY, EvalFeedback


def _node(value: object) -> str:
    if isinstance(value, str) and value:
        return value
    raise PydanticCustomError("node", "use the name of a node")


Node = Annotated[str, PlainValidator(_node)]


def evaluations_of(
    state: Any, *, state_key: str = DEFAULT_KEY, node: str | None = None, key: str | None = None
) -> list[EvalFeedback]:
    """Every feedback record in ``state[state_key]``, oldest first, optionally filtered."""
    raw = state.get(state_key) if isinstance(state, Mapping) else getattr(state, state_key, None)
    records = [EvalFeedback.model_validate(r) for r in raw or []]
    return [r for r in records if node in (None, r.node) and key in (None, r.key)]


def batches(records: list[EvalFeedback]) -> list[list[EvalFeedback]]:
    """Records grouped into evaluations (one node, one superstep), oldest first."""
    groups: list[list[EvalFeedback]] = []
    for record in records:
        if groups and _batch_id(groups[-1][-1]) == _batch_id(record):
            groups[-1].append(record)
        else:
            groups.append([record])
    return groups


def latest_evaluation(
    state: Any, *, state_key: str = DEFAULT_KEY, node: str | None = None, key: str | None = None
) -> list[EvalFeedback]:
    """The records of the most recent evaluation ([] when there is none)."""
    groups = batches(evaluations_of(state, state_key=state_key, node=node, key=key))
    return groups[-1] if groups else []


@validated
def evaluation_passed(records: list[EvalFeedback], threshold: Threshold = None) -> bool:
    """Whether one evaluation passed.

    Any evaluator error fails it. With ``threshold``, the weighted mean score
    (booleans count 1 or 0) must reach it; without, every record must have
    passed its own :class:`~lg_eval.nodes.EvalSpec` threshold (a record with
    no verdict fails).
    """
    return _passed(records, threshold)


@validated
def weighted_score(records: list[EvalFeedback]) -> float | None:
    """Weighted mean of the numeric and boolean scores (None when none has a score)."""
    return _weighted(records)


def _passed(records: list[EvalFeedback], threshold: float | None) -> bool:
    if not records or any(r.error is not None for r in records):
        return False
    if threshold is None:
        return all(r.passed is True for r in records)
    score = _weighted(records)
    return score is not None and score >= threshold


def _weighted(records: list[EvalFeedback]) -> float | None:
    scored = [(float(r.score), r.weight) for r in records if r.score is not None and not r.error]
    total = sum(weight for _, weight in scored)
    if not scored:
        return None
    if total == 0:
        return sum(score for score, _ in scored) / len(scored)
    return sum(score * weight for score, weight in scored) / total


@validated
def route_on_score(
    threshold: Threshold = None,
    *,
    passed: Node,
    failed: Node,
    node: str | None = None,
    key: str | None = None,
    state_key: str = DEFAULT_KEY,
    max_failures: Size | None = None,
    exhausted: Node | None = None,
) -> Callable[[Any], str]:
    """A conditional-edge function: ``passed`` or ``failed`` after the latest evaluation.

    See :func:`evaluation_passed` for what passing means with and without
    ``threshold``. ``node`` / ``key`` restrict which records count. With
    ``max_failures=n`` and ``exhausted``, the route goes to ``exhausted`` once
    more than ``n`` evaluations in a row have failed (a revise loop that gives
    up, or escalates to a human). The returned function declares its
    destinations, so ``add_conditional_edges`` needs no path map.

    Raises:
        InvalidOptionError: ``max_failures`` without ``exhausted`` or vice versa.
        LgEvalError: at routing time, when the state holds no evaluation yet.
    """
    if (max_failures is None) != (exhausted is None):
        raise InvalidOptionError("Give max_failures and exhausted together (or neither).")

    def route(state: Any) -> str:
        groups = batches(evaluations_of(state, state_key=state_key, node=node, key=key))
        if not groups:
            raise LgEvalError(
                f"route_on_score found no evaluation under {state_key!r}"
                + (f" for node={node!r}" if node else "")
                + (f" and key={key!r}" if key else "")
                + "; put it on the conditional edge right after an EvalNode."
            )
        if _passed(groups[-1], threshold):
            return passed
        if max_failures is not None and exhausted is not None:
            streak = 0
            for group in reversed(groups):
                if _passed(group, threshold):
                    break
                streak += 1
            if streak > max_failures:
                return exhausted
        return failed

    destinations = tuple(dict.fromkeys(d for d in (passed, failed, exhausted) if d is not None))
    route.__annotations__ = {"state": Any, "return": Literal[destinations]}
    route.__name__ = route.__qualname__ = f"route_on_score_{passed}_or_{failed}"
    return route


def _batch_id(record: EvalFeedback) -> tuple[Any, ...]:
    return (record.node, record.step, record.checkpoint_id)
