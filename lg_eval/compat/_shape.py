"""The peers' result dicts, and lg_eval evaluators wrapped to return them.

agentevals and openevals return ``{"key", "score", "comment", "metadata"}``: their
match evaluators leave ``comment`` and ``metadata`` ``None``, their judges give the
model's reasoning as ``comment``. lg_eval's evaluators fill both with what
differed. A drop-in here is an lg_eval evaluator whose feedback is cut down to
the peer's dict: the score, and every check of the input, stay lg_eval's.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import Any, ParamSpec, Protocol

from lg_eval._evaluator import Evaluator
from lg_eval._feedback import FeedbackDict
from lg_eval.errors import JudgeError

P = ParamSpec("P")
Shape = Callable[[FeedbackDict], Any]
"""Turns lg_eval's feedback dict into what the peer returns."""


class PeerEvaluator(Protocol):
    """A drop-in evaluator: called with keywords, returns the peer's result."""

    def __call__(self, *, outputs: Any, reference_outputs: Any = None, **kwargs: Any) -> Any: ...


class AsyncPeerEvaluator(Protocol):
    """The awaited form of :class:`PeerEvaluator` (a coroutine function, as the peers')."""

    def __call__(
        self, *, outputs: Any, reference_outputs: Any = None, **kwargs: Any
    ) -> Awaitable[Any]: ...


def bare(feedback: FeedbackDict) -> FeedbackDict:
    """A match evaluator's result as the peers give it: the key and the score only."""
    return {"key": feedback["key"], "score": feedback["score"], "comment": None, "metadata": None}


def judged(feedback: FeedbackDict) -> Any:
    """A judge's result as the peers give it.

    The score with the model's reasoning as ``comment`` and no metadata; for a
    judge with a custom ``output_schema``, the model's structured answer itself.
    A judge that gave no verdict raises :class:`~lg_eval.errors.JudgeError`, as a
    peer's judge raises when its model call fails.
    """
    metadata = feedback["metadata"] or {}
    error = metadata.get("error")
    if error is not None:
        reason = error.get("message", "unknown error") if isinstance(error, dict) else error
        raise JudgeError(f"{feedback['key']}: the judge gave no verdict: {reason}")
    if "feedback" in metadata:
        return metadata["feedback"]
    return {
        "key": feedback["key"],
        "score": feedback["score"],
        "comment": feedback["comment"],
        "metadata": None,
    }


def peer_evaluator(
    evaluator: Evaluator, *, shape: Shape, name: str | None = None, doc: str | None = None
) -> PeerEvaluator:
    """``evaluator`` as a function returning ``shape`` of its feedback, named ``name``
    (default: the evaluator's name, which LangSmith gives its feedback runs)."""

    def evaluate(*, outputs: Any, reference_outputs: Any = None, **kwargs: Any) -> Any:
        return shape(evaluator(outputs=outputs, reference_outputs=reference_outputs, **kwargs))

    evaluate.__name__ = evaluate.__qualname__ = name or evaluator.__name__
    evaluate.__doc__ = doc or evaluator.__doc__
    return evaluate


def async_peer_evaluator(
    evaluator: Evaluator, *, shape: Shape, name: str | None = None, doc: str | None = None
) -> AsyncPeerEvaluator:
    """:func:`peer_evaluator` as a coroutine function: the evaluator's I/O is awaited."""

    async def evaluate(*, outputs: Any, reference_outputs: Any = None, **kwargs: Any) -> Any:
        feedback = await evaluator.aevaluate(
            outputs=outputs, reference_outputs=reference_outputs, **kwargs
        )
        return shape(feedback)

    evaluate.__name__ = evaluate.__qualname__ = name or evaluator.__name__
    evaluate.__doc__ = doc or evaluator.__doc__
    return evaluate


def peer_factories(
    factory: Callable[P, Evaluator], shape: Shape, *, name: str, doc: str
) -> tuple[Callable[P, PeerEvaluator], Callable[P, AsyncPeerEvaluator]]:
    """The drop-in factory ``name`` and its ``create_async_...`` twin: ``factory``'s
    options, evaluators returning ``shape`` of its feedback (called, or awaited).

    ``doc`` is their docstring, ``{name}`` standing for each one's name.
    """
    async_name = name.replace("create_", "create_async_", 1)

    @functools.wraps(factory)
    def create(*args: P.args, **kwargs: P.kwargs) -> PeerEvaluator:
        return peer_evaluator(factory(*args, **kwargs), shape=shape)

    @functools.wraps(factory)
    def create_async(*args: P.args, **kwargs: P.kwargs) -> AsyncPeerEvaluator:
        return async_peer_evaluator(factory(*args, **kwargs), shape=shape)

    create.__name__ = create.__qualname__ = name
    create.__doc__ = doc.format(name=name)
    create_async.__name__ = create_async.__qualname__ = async_name
    create_async.__doc__ = doc.format(name=async_name) + "\nThe evaluator is awaited when called.\n"
    return create, create_async
