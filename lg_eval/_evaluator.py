"""The evaluator: one object, called synchronously or awaited, built from one scorer.

An :class:`Evaluator` is called with keywords only,
``evaluator(*, outputs, reference_outputs=None, inputs=None, **kwargs)``, and
returns the LangSmith feedback dict (:class:`~lg_eval._feedback.FeedbackDict`),
so it drops into ``langsmith.evaluate``, agentevals-style code and lg_eval's own
nodes unchanged. ``await evaluator.aevaluate(...)`` gives the same feedback with
its I/O (an LLM judge's model calls) awaited.

Scoring logic is written once, as a *scorer*: a function taking the same
keywords that returns a :class:`~lg_eval._feedback.Feedback`, or a generator
that yields :class:`lg_eval._effects.Effect` requests for I/O and returns one.
The evaluator declares the field it reads (:data:`lg_eval._inputs.Field`) and
hands its scorer that field of ``outputs`` and ``reference_outputs``
(:func:`lg_eval._inputs.select_field`), so multi-field target outputs and
references need no wrapper.

Every result passes through :meth:`Evaluator._core`, which keeps the score
contract (``docs/contract.md``): an evaluator never scores ``outputs=None``
(it raises :class:`~lg_eval.errors.TrajectoryFormatError`), and a score that is
not finite or falls outside the evaluator's declared
:class:`~lg_eval._feedback.ScoreRange` (0..1 or a bool when it declares none) never
leaves it: it becomes ``score=None`` with ``metadata["error"]``.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Awaitable, Callable, Generator, Mapping
from typing import Any, Generic, ParamSpec, Protocol, cast, overload

from pydantic import ValidationError
from typing_extensions import TypeVar

from lg_eval._describe import safe_text
from lg_eval._effects import Core, Effect, adrive, drive
from lg_eval._feedback import (
    Feedback,
    FeedbackDict,
    ScoreRange,
    ScoreRangeLike,
    checked_score,
)
from lg_eval._feedback import score_range as as_score_range
from lg_eval._inputs import Field, lookup_hint, select_field
from lg_eval.errors import InvalidOptionError, TrajectoryFormatError

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
        score_range: the scores it may give (:class:`~lg_eval._feedback.ScoreRange`,
            ``"bool"`` or ``(low, high)``); ``None`` declares none, and then the
            score must be a bool or a number from 0 to 1 (LangSmith's convention,
            :data:`~lg_eval._feedback.DEFAULT_RANGE`). A score outside it becomes
            ``score=None`` with ``metadata["error"]`` (type ``invalid_score``).
        key_ranges: ranges of the other feedback keys an ``expand`` evaluator returns
            (the rubric's per-dimension scales), for the eval nodes to enforce.
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
        score_range: ScoreRangeLike | None = None,
        key_ranges: Mapping[str, ScoreRangeLike | None] | None = None,
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
        score_range: ScoreRangeLike | None = None,
        key_ranges: Mapping[str, ScoreRangeLike | None] | None = None,
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
        score_range: ScoreRangeLike | None = None,
        key_ranges: Mapping[str, ScoreRangeLike | None] | None = None,
    ) -> None:
        if not isinstance(key, str) or not key:
            raise InvalidOptionError(f"An evaluator's key must be a non-empty string, not {key!r}.")
        if not callable(scorer):
            raise InvalidOptionError(f"An evaluator needs a callable scorer, got {scorer!r}.")
        self.key = key
        self.scorer = scorer
        self.reads = reads
        self.expand = expand
        self.score_range: ScoreRange | None = as_score_range(score_range)
        self.key_ranges: dict[str, ScoreRange | None] = {
            name: as_score_range(value) for name, value in (key_ranges or {}).items()
        }
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
        actual, where = select_field(outputs, self.reads, "outputs")
        if actual is None:  # never read as "nothing happened", which would score perfectly
            raise TrajectoryFormatError(_no_outputs(self.key, where))
        reference, _ = select_field(reference_outputs, self.reads, "reference_outputs")
        try:
            outcome = self.scorer(
                outputs=actual, reference_outputs=reference, inputs=inputs, **extra
            )
            if inspect.isgenerator(outcome):
                outcome = yield from outcome
        except TrajectoryFormatError as exc:
            hint = _hint(safe_text(exc), outputs, reference_outputs, self.reads)
            if not hint:
                raise
            raise TrajectoryFormatError(f"{safe_text(exc)}{hint}") from exc
        except RecursionError as exc:  # the last line of defence; readers check depth first
            raise TrajectoryFormatError(
                f"{self.key}: outputs or reference_outputs are nested too deeply to evaluate "
                "(Python's recursion limit was reached); flatten the value."
            ) from exc
        result = checked_score(feedback_dict(outcome, self.key), self.score_range)
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
    key: str,
    scorer: Scorer,
    *,
    reads: Field | None = None,
    name: str | None = None,
    score_range: ScoreRangeLike | None = None,
) -> Evaluator:
    """An :class:`Evaluator` scoring with ``scorer`` under ``key``, reading ``reads``."""
    return Evaluator(key, scorer, reads=reads, name=name, score_range=score_range)


def as_evaluator(target: Any) -> Evaluator[Any] | None:
    """The :class:`Evaluator` behind ``target`` (itself, or an :meth:`~Evaluator.as_async` twin)."""
    if isinstance(target, Evaluator):
        return target
    inner = getattr(target, "evaluator", None)
    return inner if isinstance(inner, Evaluator) else None


def evaluator_of(target: Any, name: str | None = None) -> Evaluator[Any] | None:
    """``target`` as an :class:`Evaluator`: itself (or the one behind its async twin), or a
    plain evaluator function wrapped as one keyed ``name`` (else its ``__name__``), so a
    plain function is held to the same range rule in every host; None if not callable."""
    found = as_evaluator(target)
    if found is not None or not callable(target):
        return found
    key = name or str(getattr(target, "__name__", "") or type(target).__name__)
    return make_evaluator(key, target)


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
        try:
            return Feedback.model_validate(dict(outcome)).to_dict(key)
        except ValidationError as exc:
            fields = ", ".join(sorted({str(e["loc"][0]) for e in exc.errors() if e["loc"]}))
            raise InvalidOptionError(
                f"The scorer of evaluator {key!r} returned a dict that is no feedback "
                f"(bad or unknown fields: {fields or 'the dict itself'}); return "
                "{'score', 'comment', 'metadata'} with a bool, number or None score."
            ) from exc
    if outcome is None or isinstance(outcome, bool | int | float):
        return Feedback(score=outcome).to_dict(key)
    raise InvalidOptionError(
        f"The scorer of evaluator {key!r} returned a {type(outcome).__name__}; return an "
        "lg_eval.Feedback (or a {'score', 'comment', 'metadata'} dict, or a bare score)."
    )


def _no_outputs(key: str, where: str) -> str:
    got = "got None" if where == "outputs" else f"{where} is None"
    return (
        f"{key} needs outputs; {got}. An evaluator never scores a missing run: pass what "
        "the run produced (messages, a trajectory or the answer) as outputs=..."
    )


def _hint(message: str, outputs: Any, reference_outputs: Any, reads: Field | None) -> str:
    if message.startswith("reference_outputs"):
        return lookup_hint(reference_outputs, reads, "reference_outputs")
    if message.startswith("outputs"):
        return lookup_hint(outputs, reads, "outputs")
    return ""
