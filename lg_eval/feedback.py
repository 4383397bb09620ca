"""Feedback: what every lg_eval evaluator decides, in one model.

:class:`Feedback` is the one feedback type. Its dict form, :class:`FeedbackDict`
(``{"key", "score", "comment", "metadata"}``), is LangSmith's feedback shape and
the wire format everywhere: evaluators return it, ``langsmith.evaluate`` reads
it, eval nodes store it in graph state. A scorer returns a :class:`Feedback`
whose ``key`` may be left out (the evaluator's own key is used).
"""

from __future__ import annotations

from typing import Any, TypedDict

from pydantic import BaseModel, ConfigDict

ScoreValue = bool | int | float | None


class FeedbackDict(TypedDict):
    """The dict form of :class:`Feedback`: LangSmith's feedback shape."""

    key: str
    score: ScoreValue
    comment: str | None
    metadata: dict[str, Any] | None


class Feedback(BaseModel):
    """One evaluator's verdict: a score, a human explanation, structured detail.

    ``key`` names the feedback (``None`` inside a scorer: the evaluator's key);
    ``score`` is a bool, a number, or ``None`` when no score could be given (the
    comment or ``metadata["error"]`` says why).
    """

    model_config = ConfigDict(extra="forbid")

    key: str | None = None
    score: ScoreValue = None
    comment: str | None = None
    metadata: dict[str, Any] | None = None

    def to_dict(self, key: str | None = None) -> FeedbackDict:
        """The wire dict; ``key`` fills in a key this feedback leaves out."""
        return {
            "key": self.key or key or "",
            "score": self.score,
            "comment": self.comment,
            "metadata": self.metadata,
        }


__all__ = ["Feedback", "FeedbackDict", "ScoreValue"]
