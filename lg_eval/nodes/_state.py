"""Where evaluation results live in a graph's state: the feedback record and its reducer.

Add one line to a state schema and an :class:`~lg_eval.nodes.EvalNode` can
record its results there::

    class State(MessagesState):
        evaluations: Evaluations

Every evaluation appends plain feedback dicts (the dict form of
:class:`EvalFeedback`), so the results are part of the thread's checkpoints,
show up in ``graph.get_state(config).values`` and in the node's trace output,
and survive any checkpointer's serializer. Read them back with
``EvalFeedback.model_validate(d)``.

A record's score is a bool, None or a finite number: a record given anything
else (NaN, infinity, a string) is kept with ``score=None``, ``passed=None`` and
``error`` saying why, so it can never pass or be averaged in.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated, Any

from langgraph.graph import MessagesState
from pydantic import Field, model_validator

from lg_eval._feedback import Feedback, unusable_score
from lg_eval.errors import InvalidOptionError

DEFAULT_KEY = "evaluations"


class EvalFeedback(Feedback):
    """One evaluator's feedback, with how it counts and where it was computed.

    ``key``, ``score``, ``comment`` and ``metadata`` are the LangSmith feedback
    the evaluator returned. ``turn``, ``checkpoint_id``, ``step`` and ``node``
    locate an :class:`~lg_eval.nodes.EvalNode` evaluation in the host thread
    (they stay ``None`` in the evaluation graph, which scores a whole thread).
    """

    key: str = Field(description="The feedback key (a recorded feedback always has one).")

    weight: float = Field(default=1.0, description="Weight of the score in aggregates.")
    passed: bool | None = Field(
        default=None,
        description="The score against the evaluator's threshold (None: no verdict, or error).",
    )
    error: str | None = Field(
        default=None, description="'ErrorType: message' when the evaluator raised."
    )
    node: str | None = Field(default=None, description="The eval node that computed it.")
    turn: int | None = Field(
        default=None, description="Index of the host thread's turn (as lg_eval extracts turns)."
    )
    checkpoint_id: str | None = Field(
        default=None,
        description="The host checkpoint whose state was evaluated (LangGraph names one even "
        "when the graph has no checkpointer to save it).",
    )
    step: int | None = Field(
        default=None,
        description="LangGraph's superstep number (trace metadata `langgraph_step`), the same "
        "number as the `step` of the extracted superstep the node ran in.",
    )

    @model_validator(mode="before")
    @classmethod
    def _usable_score(cls, data: Any) -> Any:
        """A score that is not a bool, None or a finite number becomes an error."""
        if not isinstance(data, Mapping) or "score" not in data:
            return data
        problem = unusable_score(data["score"])
        if problem is None:
            return data
        error = data.get("error") or f"InvalidScoreError: the feedback holds {problem}"
        return {**data, "score": None, "passed": None, "error": error}


def add_evaluations(left: Sequence[Any] | None, right: Any) -> list[dict[str, Any]]:
    """The reducer: append feedback (one or a list, dicts or :class:`EvalFeedback`).

    Every record is validated and stored as a plain dict; ``left`` is never
    mutated, and ``None`` adds nothing.
    """
    records = list(left or [])
    if right is None:
        return records
    items = right if isinstance(right, list | tuple) else [right]
    return records + [_as_record(item) for item in items]


def _as_record(item: Any) -> dict[str, Any]:
    if isinstance(item, EvalFeedback):
        return item.model_dump()
    if isinstance(item, Feedback | Mapping):
        data = item.model_dump() if isinstance(item, Feedback) else dict(item)
        return EvalFeedback.model_validate(data).model_dump()
    raise InvalidOptionError(
        f"An evaluations update must be a feedback dict or EvalFeedback, not {type(item).__name__}."
    )


Evaluations = Annotated[list[dict[str, Any]], add_evaluations]
"""The state-key type: ``evaluations: Evaluations`` in a TypedDict or pydantic state."""


class EvalMessagesState(MessagesState):
    """``MessagesState`` plus the ``evaluations`` key, for agents that evaluate themselves."""

    evaluations: Evaluations
