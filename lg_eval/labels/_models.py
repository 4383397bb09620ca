"""A person's label: what someone said about a case, a turn of it or one action in it.

A label is about a run's case (``run_id``, ``case_id``, ``repetition``), a thread
(``thread_id``: a production thread, or the thread a case was played on), or both; within
it, about the whole of it, one ``turn`` or one ``item`` (an action request: the tool call a
reviewer decided on). It holds the person's ``verdict`` (pass/fail, or a category) and/or
``score``, their ``note``, who said it (``labeler``) and when (``labeled_at``), and where it
was found (``source``).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    model_validator,
)

Source = Literal["interrupt", "review", "viewer", "file"]
"""Where a label came from: an ``interrupt``'s decision in a thread (approve, edit, reject),
the evaluation graph's ``review``, the ``viewer``'s form, or a ``file`` (CSV, JSONL)."""

Split = Literal["all", "examples", "held_out"]
"""Which labels a calibration reads: all, the cases whose labels may be shown to a judge as
examples, or the others (see :func:`lg_eval.labels.label_split`)."""


class Label(BaseModel):
    """One person's verdict (or score) on one unit, with their note."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    key: str = Field(
        min_length=1,
        max_length=200,
        description="What is labelled: an evaluator's feedback key, or a question of its own "
        "('approved_actions': should this action happen).",
    )
    run_id: str | None = Field(default=None, min_length=1, description="The run of the case.")
    case_id: str | None = Field(default=None, min_length=1, description="The case in that run.")
    repetition: int = Field(default=0, ge=0)
    thread_id: str | None = Field(
        default=None, min_length=1, description="The thread (a production thread, or a case's)."
    )
    turn: int | None = Field(default=None, ge=0, description="The turn; None: the whole.")
    item: str | None = Field(
        default=None,
        min_length=1,
        description="One action within it (the tool call id a reviewer decided on); None: all.",
    )
    verdict: StrictBool | StrictStr | None = Field(
        default=None, description="Pass (True) / fail (False), or a category ('edit')."
    )
    score: StrictInt | StrictFloat | None = Field(default=None, description="A numeric rating.")
    note: str | None = Field(default=None, max_length=20_000, description="Why, in their words.")
    labeler: str = Field(min_length=1, max_length=200, description="Who labelled.")
    labeled_at: datetime = Field(default_factory=lambda: datetime.now(UTC))
    source: Source
    metadata: dict[str, Any] | None = Field(
        default=None, description="What the source adds (an interrupt's decision and call)."
    )

    @model_validator(mode="after")
    def _says_something_about_something(self) -> Label:
        if self.thread_id is None and (self.run_id is None or self.case_id is None):
            raise ValueError("a label names a run's case (run_id and case_id) or a thread_id")
        if (self.run_id is None) != (self.case_id is None):
            raise ValueError("run_id and case_id go together")
        if self.verdict is None and self.score is None:
            raise ValueError("a label has a verdict or a score")
        if isinstance(self.score, bool):
            raise ValueError("score is a number; a pass/fail goes in verdict")
        return self

    @property
    def case(self) -> str:
        """The case a bootstrap resamples and a split assigns: the case id, else the thread."""
        return self.case_id if self.case_id is not None else str(self.thread_id)

    @property
    def whole(self) -> bool:
        """Whether the label is about the whole case (no turn, no item)."""
        return self.turn is None and self.item is None
