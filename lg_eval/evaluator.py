"""The evaluator: one object, called synchronously or awaited, built from one scorer.

An :class:`Evaluator` is called with keywords only,
``evaluator(*, outputs, reference_outputs=None, inputs=None, **kwargs)``, and
returns the LangSmith feedback dict (:class:`~lg_eval.feedback.FeedbackDict`),
so it drops into ``langsmith.evaluate``, agentevals-style code and lg_eval's own
nodes unchanged. ``await evaluator.aevaluate(...)`` gives the same feedback with
its I/O (an LLM judge's model calls) awaited.

Scoring logic is written once, as a *scorer*: a function taking the same
keywords that returns a :class:`~lg_eval.feedback.Feedback`, or a generator
that yields :class:`lg_eval._effects.Effect` requests for I/O and returns one.
The evaluator declares the field it reads (:data:`lg_eval.inputs.Field`) and
hands its scorer that field of ``outputs`` and ``reference_outputs``
(:func:`lg_eval.inputs.select_field`), so multi-field target outputs and
references need no wrapper.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Awaitable, Callable, Generator, Mapping
from typing import Any, Generic, ParamSpec, Protocol, cast, overload

from typing_extensions import TypeVar

from lg_eval._effects import Core, Effect, adrive, drive
from lg_eval.errors import InvalidOptionError, TrajectoryFormatError
from lg_eval.feedback import Feedback, FeedbackDict
from lg_eval.inputs import Field, lookup_hint, select_field

Scorer = Callable[..., Feedback | Generator[Effect[Any], Any, Feedback]]
"""A scoring function: keywords ``outputs``, ``reference_outputs``, ``inputs`` (and any
extras) in, a :class:`Feedback` out, directly or after yielding I/O effects."""

P = ParamSpec("P")
R = TypeVar("R", default=FeedbackDict)


class Evaluator(Generic[R]):
    """A scorer with a feedback key and the field it reads; call it or await it.

    Args:
        key: the feedback key (a :class:`Feedback` from the scorer may override it).
        scorer: the scoring function (see :data:`Scorer`).
        reads: the field taken from dict-shaped ``outputs`` / ``reference_outputs``
            before the scorer sees them; ``None`` hands both over as given.
        name: the evaluator's ``__name__`` (LangSmith names feedback runs after
            it); defaults to ``key``.
        doc: its docstring; defaults to the scorer's.
        expand: turns the feedback into what the evaluator returns, for evaluators
            whose one judgment yields several feedbacks (the rubric judge returns
            ``[overall, *per_dimension]``); by default the feedback dict itself.
    """

    @overload
    def __init__(
        self: Evaluator[FeedbackDict],
        key: str,
        scorer: Scorer,
        *,
        reads: Field | None = None,
        name: str | None = None,
        doc: str | None = None,
        expand: None = None,
    ) -> None: ...
    @overload
    def __init__(
        self: Evaluator[R],
        key: str,
        scorer: Scorer,
        *,
        reads: Field | None = None,
        name: str | None = None,
        doc: str | None = None,
        expand: Callable[[FeedbackDict], R],
    ) -> None: ...
    def __init__(
        self,
        key: str,
        scorer: Scorer,
        *,
        reads: Field | None = None,
        name: str | None = None,
        doc: str | None = None,
        expand: Callable[[FeedbackDict], Any] | None = None,
    ) -> None:
        if not isinstance(key, str) or not key:
            raise InvalidOptionError(f"An evaluator's key must be a non-empty string, not {key!r}.")
        if not callable(scorer):
            raise InvalidOptionError(f"An evaluator needs a callable scorer, got {scorer!r}.")
        self.key = key
        self.scorer = scorer
        self.reads = reads
        self.expand = expand
        self.__name__ = self.__qualname__ = name or key
        self.__doc__ = doc if doc is not None else scorer.__doc__

    def __call__(
        self, *, outputs: Any, reference_outputs: Any = None, inputs: Any = None, **kwargs: Any
    ) -> R:
        """Score ``outputs`` against ``reference_outputs``; blocking I/O."""
        return drive(self._core(outputs, reference_outputs, inputs, kwargs))

    async def aevaluate(
        self, *, outputs: Any, reference_outputs: Any = None, inputs: Any = None, **kwargs: Any
    ) -> R:
        """The same scoring as calling the evaluator, with its I/O awaited."""
        return await adrive(self._core(outputs, reference_outputs, inputs, kwargs))

    def as_async(self) -> AsyncEvaluator[R]:
        """This evaluator as a coroutine function, for code that awaits evaluators.

        ``langsmith.aevaluate`` and agentevals-style callers test
        ``inspect.iscoroutinefunction``; the returned function passes that test
        and awaits :meth:`aevaluate`.
        """
        return _async_function(self)

    def __repr__(self) -> str:
        reads = f", reads={self.reads!r}" if self.reads else ""
        return f"Evaluator({self.key!r}{reads})"

    def _core(
        self, outputs: Any, reference_outputs: Any, inputs: Any, extra: Mapping[str, Any]
    ) -> Core[R]:
        actual, _ = select_field(outputs, self.reads, "outputs")
        reference, _ = select_field(reference_outputs, self.reads, "reference_outputs")
        try:
            outcome = self.scorer(
                outputs=actual, reference_outputs=reference, inputs=inputs, **extra
            )
            if inspect.isgenerator(outcome):
                outcome = yield from outcome
        except TrajectoryFormatError as exc:
            hint = _hint(str(exc), outputs, reference_outputs, self.reads)
            if not hint:
                raise
            raise TrajectoryFormatError(f"{exc}{hint}") from exc
        result = feedback_dict(outcome, self.key)
        return cast(R, result if self.expand is None else self.expand(result))


RC = TypeVar("RC", covariant=True, default=FeedbackDict)


class AsyncEvaluator(Protocol[RC]):
    """An evaluator awaited when called (what :meth:`Evaluator.as_async` returns)."""

    @property
    def evaluator(self) -> Evaluator[Any]: ...
    @property
    def key(self) -> str: ...

    def __call__(
        self, *, outputs: Any, reference_outputs: Any = None, inputs: Any = None, **kwargs: Any
    ) -> Awaitable[RC]: ...


def _async_function(evaluator: Evaluator[R]) -> AsyncEvaluator[R]:
    async def evaluate(
        *, outputs: Any, reference_outputs: Any = None, inputs: Any = None, **kwargs: Any
    ) -> R:
        return await evaluator.aevaluate(
            outputs=outputs, reference_outputs=reference_outputs, inputs=inputs, **kwargs
        )

    evaluate.__name__ = evaluate.__qualname__ = f"{evaluator.__name__}_async"
    evaluate.__doc__ = evaluator.__doc__
    function = cast(Any, evaluate)
    function.evaluator = evaluator
    function.key = evaluator.key
    return cast(AsyncEvaluator[R], function)


def make_evaluator(
    key: str, scorer: Scorer, *, reads: Field | None = None, name: str | None = None
) -> Evaluator:
    """An :class:`Evaluator` scoring with ``scorer`` under ``key``, reading ``reads``."""
    return Evaluator(key, scorer, reads=reads, name=name)


def as_evaluator(target: Any) -> Evaluator[Any] | None:
    """The :class:`Evaluator` behind ``target`` (itself, or an :meth:`~Evaluator.as_async` twin)."""
    if isinstance(target, Evaluator):
        return target
    inner = getattr(target, "evaluator", None)
    return inner if isinstance(inner, Evaluator) else None


def async_twin(factory: Callable[P, Evaluator]) -> Callable[P, AsyncEvaluator]:
    """``create_async_x`` for a factory ``create_x``: same options (typed), awaited evaluator.

    Only the agentevals / openevals drop-in names are made this way; everything
    else is awaited through :meth:`Evaluator.aevaluate`.
    """

    @functools.wraps(factory)
    def create_async(*args: P.args, **kwargs: P.kwargs) -> AsyncEvaluator:
        return factory(*args, **kwargs).as_async()

    name = factory.__name__.replace("create_", "create_async_", 1)
    create_async.__name__ = create_async.__qualname__ = name
    create_async.__doc__ = (
        f"``{factory.__name__}(...).as_async()``: same options and scores, awaited when "
        f"called (the agentevals/openevals async name).\n\n" + (factory.__doc__ or "")
    )
    return create_async


def feedback_dict(outcome: Any, key: str) -> FeedbackDict:
    """A scorer's outcome as the wire dict, ``key`` filling in a missing key."""
    if isinstance(outcome, Feedback):
        return outcome.to_dict(key)
    if isinstance(outcome, Mapping):
        return Feedback.model_validate(dict(outcome)).to_dict(key)
    if outcome is None or isinstance(outcome, bool | int | float):
        return Feedback(score=outcome).to_dict(key)
    raise InvalidOptionError(
        f"The scorer of evaluator {key!r} returned a {type(outcome).__name__}; return an "
        "lg_eval.Feedback (or a {'score', 'comment', 'metadata'} dict, or a bare score)."
    )


def _hint(message: str, outputs: Any, reference_outputs: Any, reads: Field | None) -> str:
    if message.startswith("reference_outputs"):
        return lookup_hint(reference_outputs, reads, "reference_outputs")
    if message.startswith("outputs"):
        return lookup_hint(outputs, reads, "outputs")
    return ""


__all__ = [
    "AsyncEvaluator",
    "Evaluator",
    "Scorer",
    "as_evaluator",
    "async_twin",
    "feedback_dict",
    "make_evaluator",
]
