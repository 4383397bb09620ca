"""The evaluator calling convention shared by every lg_eval evaluator.

An evaluator is called with keywords only,
``evaluator(*, outputs, reference_outputs=None, inputs=None, **kwargs)``, and
returns the LangSmith feedback dict ``{"key", "score", "comment", "metadata"}``
so it drops into ``langsmith.evaluate``, agentevals-style code and our own
runner unchanged.

Scoring logic is written once, as a *scorer*: a function with the same
keywords that returns a :class:`Score`, or a generator that yields
:class:`lg_eval._effects.Effect` requests for I/O (LLM judges) and returns a
:class:`Score`. :func:`make_evaluator` and :func:`make_async_evaluator` turn one
scorer into the sync and the async evaluator; neither holds any logic.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Awaitable, Callable, Generator
from dataclasses import dataclass
from typing import Any, Protocol, TypedDict

from pydantic import BaseModel, ConfigDict

from lg_eval._effects import Effect, adrive, drive
from lg_eval.errors import InvalidOptionError

ScoreValue = bool | float | int | None


class EvaluatorResult(TypedDict):
    """The LangSmith feedback shape every evaluator returns."""

    key: str
    score: ScoreValue
    comment: str | None
    metadata: dict[str, Any] | None


class Feedback(BaseModel):
    """Pydantic form of :class:`EvaluatorResult`, for data that crosses a boundary."""

    model_config = ConfigDict(extra="forbid")

    key: str
    score: ScoreValue = None
    comment: str | None = None
    metadata: dict[str, Any] | None = None


@dataclass(frozen=True)
class Score:
    """What a scorer decides: a value, a human explanation, structured detail."""

    value: ScoreValue
    comment: str | None = None
    metadata: dict[str, Any] | None = None
    key: str | None = None  # overrides the evaluator's key when set


class SyncEvaluator(Protocol):
    def __call__(
        self,
        *,
        outputs: Any,
        reference_outputs: Any = None,
        inputs: Any = None,
        **kwargs: Any,
    ) -> EvaluatorResult: ...


class AsyncEvaluator(Protocol):
    def __call__(
        self,
        *,
        outputs: Any,
        reference_outputs: Any = None,
        inputs: Any = None,
        **kwargs: Any,
    ) -> Awaitable[EvaluatorResult]: ...


Scorer = Callable[..., Score | Generator[Effect[Any], Any, Score]]


def to_result(key: str, score: Score) -> EvaluatorResult:
    """Build the feedback dict; ``score.key`` wins over the evaluator's key."""
    return {
        "key": score.key or key,
        "score": score.value,
        "comment": score.comment,
        "metadata": score.metadata,
    }


def _run_sync(scorer: Scorer, kwargs: dict[str, Any]) -> Score:
    outcome = scorer(**kwargs)
    return drive(outcome) if inspect.isgenerator(outcome) else outcome


async def _run_async(scorer: Scorer, kwargs: dict[str, Any]) -> Score:
    outcome = scorer(**kwargs)
    return await adrive(outcome) if inspect.isgenerator(outcome) else outcome


def make_evaluator(key: str, scorer: Scorer, *, name: str | None = None) -> SyncEvaluator:
    """The sync evaluator for ``scorer``, returning feedback under ``key``."""

    def evaluator(
        *, outputs: Any, reference_outputs: Any = None, inputs: Any = None, **kwargs: Any
    ) -> EvaluatorResult:
        call = {"outputs": outputs, "reference_outputs": reference_outputs, "inputs": inputs}
        return to_result(key, _run_sync(scorer, {**call, **kwargs}))

    _name(evaluator, name or key, scorer, key)
    return evaluator


def make_async_evaluator(key: str, scorer: Scorer, *, name: str | None = None) -> AsyncEvaluator:
    """The async evaluator for ``scorer``; same scoring, awaited I/O."""

    async def evaluator(
        *, outputs: Any, reference_outputs: Any = None, inputs: Any = None, **kwargs: Any
    ) -> EvaluatorResult:
        call = {"outputs": outputs, "reference_outputs": reference_outputs, "inputs": inputs}
        return to_result(key, await _run_async(scorer, {**call, **kwargs}))

    _name(evaluator, name or key, scorer, key)
    return evaluator


def _name(evaluator: Callable[..., Any], name: str, scorer: Scorer, key: str) -> None:
    evaluator.__name__ = name
    evaluator.__qualname__ = name
    evaluator.__doc__ = scorer.__doc__
    evaluator.__wrapped_scorer__ = scorer  # type: ignore[attr-defined]
    evaluator.__evaluator_key__ = key  # type: ignore[attr-defined]


def to_async(evaluator: SyncEvaluator) -> AsyncEvaluator:
    """The async twin of a sync evaluator built by :func:`make_evaluator`.

    Same scorer, same feedback key; only I/O is awaited. Lets every factory
    define its sync evaluator once and derive the async one.
    """
    scorer = getattr(evaluator, "__wrapped_scorer__", None)
    key = getattr(evaluator, "__evaluator_key__", None)
    if scorer is None or key is None:
        raise InvalidOptionError(
            f"{evaluator!r} was not built by make_evaluator, so it has no scorer to reuse; "
            "build it with lg_eval.evaluators.make_evaluator(key, scorer)."
        )
    name = getattr(evaluator, "__name__", key)
    return make_async_evaluator(key, scorer, name=f"{name}_async")


def async_factory(factory: Callable[..., SyncEvaluator]) -> Callable[..., AsyncEvaluator]:
    """Derive ``create_async_x`` from a factory ``create_x`` of sync evaluators.

    The twin takes the same options (its signature is the factory's) and
    returns :func:`to_async` of what the factory builds.
    """

    @functools.wraps(factory)
    def create_async(*args: Any, **kwargs: Any) -> AsyncEvaluator:
        return to_async(factory(*args, **kwargs))

    name = factory.__name__.replace("create_", "create_async_", 1)
    create_async.__name__ = create_async.__qualname__ = name
    create_async.__doc__ = (
        f"Async twin of ``{factory.__name__}``: same options and scores, awaitable.\n\n"
        + (factory.__doc__ or "")
    )
    return create_async


def evaluator_pair(key: str, scorer: Scorer) -> tuple[SyncEvaluator, AsyncEvaluator]:
    """Both entry points for one scorer."""
    return make_evaluator(key, scorer), make_async_evaluator(key, scorer)


__all__ = [
    "AsyncEvaluator",
    "EvaluatorResult",
    "Feedback",
    "Score",
    "ScoreValue",
    "Scorer",
    "SyncEvaluator",
    "async_factory",
    "evaluator_pair",
    "make_async_evaluator",
    "make_evaluator",
    "to_async",
    "to_result",
]
