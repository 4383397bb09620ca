"""Which evaluators run and how their scores count.

Evaluators are given as callables following the lg_eval convention (sync or
async), as registry names (``"tool_order"``, resolved by
:func:`lg_eval.evaluators.get`), or as :class:`EvalSpec` objects that add a
feedback key, a weight, a pass threshold, a timeout, a score range and the part
of a multi-field reference the evaluator is given. :func:`resolve` turns them
into :class:`Bound` evaluators, each with the callable to use from sync code and
the one to await from async code (the async twin when lg_eval can derive it,
so LLM judges do not block an event loop). Other sync functions are called
as they are, from async graphs too: keep them fast, or pass an async function.

They are called and their results read by the one scoring step
(:mod:`lg_eval.scoring`, through :meth:`Bound.calling`); what they return is
made safe for graph state by :mod:`lg_eval.nodes._feedback`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any

import pydantic
from annotated_types import Ge
from pydantic import Field, PlainValidator, Strict
from pydantic_core import PydanticCustomError

from lg_eval._arguments import BOUNDARY, Seconds, Text, validated
from lg_eval._evaluator import as_evaluator
from lg_eval._feedback import ScoreRangeLike, Threshold
from lg_eval._feedback import score_range as as_score_range
from lg_eval.errors import InvalidOptionError
from lg_eval.evaluators import resolve_evaluator
from lg_eval.scoring import DeclaredRanges, EvaluatorCall

DEFAULT_TIMEOUT = 600.0
"""Seconds an eval node's evaluators (or one evaluation-graph evaluator) may take by default."""


def _evaluator(value: object) -> object:
    if callable(value) or isinstance(value, str):
        return value
    raise PydanticCustomError("evaluator", "use an evaluator function or a registered name")


@validated
@pydantic.dataclasses.dataclass(frozen=True, config=BOUNDARY)
class EvalSpec:
    """An evaluator and how its feedback counts.

    Args:
        evaluator: a callable ``evaluator(*, outputs, reference_outputs=None,
            inputs=None)`` (sync or async), or a registered evaluator name.
        key: feedback key to report instead of the evaluator's own (for
            evaluators returning one result).
        weight: weight of its score in weighted aggregates (``>= 0``).
        threshold: a numeric score passes when ``score >= threshold`` (None: a
            number gives no verdict); a boolean score is its own verdict, whatever
            the threshold (:func:`lg_eval._feedback.verdict`).
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
            or a :class:`~lg_eval._feedback.ScoreRange`); a score outside it is an
            error feedback. Default: what the evaluator declares (every lg_eval
            evaluator does: bool, 0..1, a judge's scale); a function that declares
            none must score a bool or a number from 0 to 1.
    """

    evaluator: Annotated[Callable[..., Any] | str, PlainValidator(_evaluator)]
    key: str | None = None
    weight: Annotated[float, Strict(), Ge(0), Field(allow_inf_nan=False)] = 1.0
    threshold: Threshold = None
    reference_key: Text | None = None
    timeout: Seconds | None = None
    score_range: Annotated[ScoreRangeLike | None, PlainValidator(as_score_range)] = None


EvaluatorLike = Callable[..., Any] | str | EvalSpec


@dataclass(frozen=True)
class Bound:
    """An :class:`EvalSpec` resolved to what to call from sync and from async code, and
    the score ranges it is held to (the spec's ``score_range``, else what the evaluator
    declares per feedback key)."""

    spec: EvalSpec
    call: Callable[..., Any]
    acall: Callable[..., Any]
    name: str
    declared: DeclaredRanges = field(default_factory=DeclaredRanges)

    def timeout(self, default: float | None) -> float | None:
        """This evaluator's timeout: its spec's own, else ``default``."""
        return self.spec.timeout if self.spec.timeout is not None else default

    def calling(
        self, kwargs: Mapping[str, Any], default_timeout: float | None = None
    ) -> EvaluatorCall:
        """The scoring step's call of this evaluator with ``kwargs`` (the whole reference:
        the spec's ``reference_key`` narrows it), keyed and ranged as the spec says."""
        return EvaluatorCall(
            self.name,
            self.call,
            self.acall,
            kwargs,
            timeout=self.timeout(default_timeout),
            reference_key=self.spec.reference_key,
            key=self.spec.key or self.name,
            rename=self.spec.key is not None,
            declared=self.declared,
        )


def resolve(evaluators: Sequence[EvaluatorLike] | EvaluatorLike) -> list[Bound]:
    """Resolve every evaluator now, so a bad name fails when the node is built.

    One evaluator may be given alone instead of in a list.
    """
    items: Sequence[EvaluatorLike] = (
        [evaluators]
        if isinstance(evaluators, str | EvalSpec) or callable(evaluators)
        else evaluators
    )
    if isinstance(items, Mapping) or not isinstance(items, Sequence):
        raise InvalidOptionError(
            f"evaluators={items!r:.80}: use an evaluator (a function, a registered name or an "
            "EvalSpec) or a list of them."
        )
    if not items:
        raise InvalidOptionError("Give at least one evaluator (a function, a name or EvalSpec).")
    return [_bind(item if isinstance(item, EvalSpec) else EvalSpec(item)) for item in items]


def _bind(spec: EvalSpec) -> Bound:
    target, forced = spec.evaluator, as_score_range(spec.score_range)
    if isinstance(target, str) or as_evaluator(target) is not None:
        # one scorer: called from sync code, awaited from async code
        name, built = resolve_evaluator(target)
        return Bound(spec, built, built.aevaluate, name, DeclaredRanges.of(built, forced))
    # a plain function (sync or async) is called as it is: its scores are checked by the node
    label = getattr(target, "__name__", None)
    name = str(label or type(target).__name__)
    return Bound(spec, target, target, name, DeclaredRanges(forced=forced))
