"""What the evaluation graph takes, keeps in its checkpoints, and returns.

Everything stored in the evaluation graph's state is plain data (dicts,
lists, strings, and whatever values the evaluated thread itself held, such
as LangChain messages), so any checkpointer's serializer can write it and
a restarted process can read it back without lg_eval's classes being
registered with LangGraph's serializer. Pydantic models validate it on the
way in and out.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from langchain_core.runnables import RunnableConfig
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from lg_eval._trajectory import (
    GraphTrajectory,
    InterruptRecord,
    StateEdit,
    Superstep,
    TaskRun,
    ThreadTrajectory,
    Turn,
)
from lg_eval.nodes._state import EvalFeedback

_TRAJECTORY_MODELS = (
    ThreadTrajectory,
    GraphTrajectory,
    Turn,
    Superstep,
    TaskRun,
    InterruptRecord,
    StateEdit,
)


class TargetRef(BaseModel):
    """A checkpointed thread to extract and evaluate, named by serializable data only.

    A compiled graph cannot be stored in a checkpoint, so the target names its
    graph: the evaluation graph looks the name up in
    ``config["configurable"]["lg_eval_graphs"]`` (given per run) and then in
    the ``graphs=`` mapping given to
    :func:`~lg_eval.nodes.create_evaluation_graph`. The checkpoint keeps the
    name and the thread address, so a resumed evaluation finds the same thread.
    """

    model_config = ConfigDict(extra="forbid")

    graph: str = Field(description="Name of the compiled graph that owns the thread.")
    thread_id: str
    checkpoint_id: str | None = Field(
        default=None, description="Evaluate the lineage of this checkpoint (default: newest)."
    )

    @field_validator("graph", mode="before")
    @classmethod
    def _named(cls, value: Any) -> Any:
        if not isinstance(value, str):
            raise ValueError(
                "target.graph must be the *name* of a compiled graph, because the target is "
                "stored in checkpoints; pass the graph itself as "
                "create_evaluation_graph(graphs={name: graph}) or in "
                "config['configurable']['lg_eval_graphs']"
            )
        return value

    def config(self) -> RunnableConfig:
        """The run config addressing the thread."""
        configurable: dict[str, Any] = {"thread_id": self.thread_id}
        if self.checkpoint_id is not None:
            configurable["checkpoint_id"] = self.checkpoint_id
        return {"configurable": configurable}


class EvalCase(BaseModel):
    """One evaluation request: the evaluation graph's input.

    Give either ``trajectory`` (an extracted :class:`~lg_eval.ThreadTrajectory`,
    a :class:`~lg_eval.GraphTrajectory`, or an agentevals-style dict) or
    ``target`` (a thread to extract). ``reference`` and ``inputs`` are passed
    to every evaluator as ``reference_outputs`` and ``inputs``.

    ``reference`` may hold one expectation per evaluator, LangSmith-style:
    ``{"trajectory": GraphTrajectory(...) or its dict, "tool_calls": [...],
    "output": "..."}``. lg_eval's evaluators each read their own field of it;
    an :class:`~lg_eval.nodes.EvalSpec` with ``reference_key`` gives a custom
    evaluator just one part. Trajectory models inside it are stored as plain
    dicts (see :func:`to_plain`).
    """

    trajectory: Any = None
    target: TargetRef | None = None
    reference: Any = None
    inputs: Any = None

    def as_input(self) -> dict[str, Any]:
        """The graph input as plain data (what to pass to ``invoke``)."""
        data = {
            "trajectory": to_plain(self.trajectory),
            "target": self.target.model_dump() if self.target else None,
            "reference": to_plain(self.reference),
            "inputs": self.inputs,
        }
        return {name: value for name, value in data.items() if value is not None}


class ReviewDecision(BaseModel):
    """A reviewer's answer: resume with ``Command(resume={"verdict": ..., "note": ...})``."""

    model_config = ConfigDict(extra="forbid")

    verdict: Literal["pass", "fail"]
    note: str | None = None
    reviewer: str | None = None


class Review(ReviewDecision):
    """A recorded review: the decision and why the case was sent for review."""

    reasons: list[str] = Field(default_factory=list)


class EvaluationResult(BaseModel):
    """The outcome of one evaluation."""

    thread_id: str | None = Field(default=None, description="The evaluated thread, if known.")
    score: float | None = Field(
        default=None, description="Weighted mean of the scores (booleans count 1 or 0)."
    )
    passed: bool | None = Field(
        default=None,
        description="Verdict: thresholds (and a review, which has the last word); None if none.",
    )
    results: list[EvalFeedback] = Field(default_factory=list)
    needs_review: bool = False
    reasons: list[str] = Field(default_factory=list, description="Why a review was requested.")
    review: Review | None = None


class EvaluatedCase(BaseModel):
    """The case under evaluation, as ``extract`` prepared it from the input."""

    trajectory: Any = None
    reference: Any = None
    inputs: Any = None
    thread_id: str | None = None


class EvaluationState(EvalCase):
    """The evaluation graph's state (channels hold plain data; nodes see models).

    ``extract`` moves the input fields into ``case`` and clears them, so the
    next evaluation on the same thread sees only what its own input gave.
    """

    case: EvaluatedCase | None = None
    results: Annotated[list[EvalFeedback], operator.add] = Field(default_factory=list)
    result: EvaluationResult | None = None


class EvaluationOutput(BaseModel):
    """What ``invoke`` returns: ``{"result": ...}`` (None while a review is pending)."""

    result: EvaluationResult | None = None


def to_plain(value: Any) -> Any:
    """Trajectory models as dicts, keeping the thread's own values (messages...) as they are.

    Lists and dicts are converted item by item, so a multi-field reference such
    as ``{"trajectory": GraphTrajectory(...), "tool_calls": [...]}`` is stored
    as plain data too (a model left inside it would reload with a serializer
    warning, or not at all, in another process).
    """
    if isinstance(value, _TRAJECTORY_MODELS):
        model = type(value)
        names = (*model.model_fields, *model.model_computed_fields)  # Turn.state is computed
        fields = {name: getattr(value, name) for name in names}
        return {
            name: to_plain(item)
            for name, item in fields.items()
            if not _left_out(model, name, item)
        }
    if isinstance(value, list):
        return [to_plain(item) for item in value]
    if isinstance(value, dict):
        return {key: to_plain(item) for key, item in value.items()}
    return value


def _left_out(model: type[BaseModel], name: str, value: Any) -> bool:
    """Whether the model's own dump leaves this field out (``Field(exclude_if=...)``)."""
    info = model.model_fields.get(name)
    rule = info.exclude_if if info is not None else None
    return bool(rule is not None and rule(value))


def from_plain(value: Any) -> Any:
    """Undo :func:`to_plain` for thread trajectories; other shapes pass through unchanged.

    A thread trajectory's dict is turned back into a
    :class:`~lg_eval.ThreadTrajectory` when it is the value itself, or one
    value of a dict (a multi-field reference's ``"thread"``), so evaluators see
    the model whether a thread was given alone or beside other expectations.
    Graph trajectories stay dicts: every evaluator reads them as such.
    """
    if _is_thread(value):
        return ThreadTrajectory.model_validate(dict(value))
    if isinstance(value, Mapping):
        return {key: _revived(item) for key, item in value.items()}
    return value


def _is_thread(value: Any) -> bool:
    return isinstance(value, Mapping) and "thread_id" in value and "turns" in value


def _revived(value: Any) -> Any:
    """A dict value back as a ThreadTrajectory when it is one; else unchanged.

    Unlike the whole value, a dict value merely shaped like a thread (user data
    with ``thread_id`` and ``turns`` keys) is left as it is rather than refused.
    """
    if not _is_thread(value):
        return value
    try:
        return ThreadTrajectory.model_validate(dict(value))
    except ValidationError:
        return value
