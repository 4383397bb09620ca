"""Feedback: what every lg_eval evaluator decides, in one model.

:class:`Feedback` is the one feedback type. Its dict form, :class:`FeedbackDict`
(``{"key", "score", "comment", "metadata"}``), is LangSmith's feedback shape and
the wire format everywhere: evaluators return it, ``langsmith.evaluate`` reads
it, eval nodes store it in graph state. A scorer returns a :class:`Feedback`
whose ``key`` may be left out (the evaluator's own key is used).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal, TypedDict, cast

from pydantic import BaseModel, ConfigDict

from lg_eval.errors import InvalidOptionError

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


# --------------------------------------------------------------------------- score ranges


def _finite(value: object) -> bool:
    """A bool, an int, or a float that is neither NaN nor infinite."""
    if isinstance(value, bool | int):
        return True
    return isinstance(value, float) and math.isfinite(value)


@dataclass(frozen=True)
class ScoreRange:
    """The scores an evaluator may give: yes/no, a closed interval, or a set of choices.

    * ``ScoreRange.boolean()`` (shorthand ``"bool"``): ``True`` or ``False`` only;
    * ``ScoreRange.between(low, high)`` (shorthand ``(low, high)``): a finite number
      with ``low <= score <= high``; a bool counts as 0 / 1;
    * ``ScoreRange.of_choices(choices)``: one of the listed numbers (a bool counts
      as 0 / 1).

    ``None`` (no score) is always allowed, and no range admits NaN or infinity.
    """

    kind: Literal["bool", "interval", "choices"]
    low: float = 0.0
    high: float = 1.0
    choices: tuple[float, ...] = ()

    @classmethod
    def boolean(cls) -> ScoreRange:
        """Yes/no scores."""
        return cls("bool")

    @classmethod
    def between(cls, low: float, high: float) -> ScoreRange:
        """Numbers from ``low`` to ``high``, both included."""
        if not all(_finite(v) for v in (low, high)) or low > high:
            raise InvalidOptionError(
                f"A score range needs finite numbers low <= high, not ({low!r}, {high!r})."
            )
        return cls("interval", float(low), float(high))

    @classmethod
    def of_choices(cls, choices: Iterable[float]) -> ScoreRange:
        """Exactly the listed numbers."""
        listed = tuple(choices) if not isinstance(choices, str | bytes) else ()
        if not listed or not all(_finite(v) for v in listed):
            raise InvalidOptionError(
                f"Score choices must be a non-empty list of finite numbers, not {choices!r:.80}."
            )
        values = tuple(sorted({float(v) for v in listed}))
        return cls("choices", values[0], values[-1], values)

    def accepts(self, score: object) -> bool:
        """Whether ``score`` (not ``None``) is a finite score inside this range."""
        if self.kind == "bool":
            return isinstance(score, bool)
        if not _finite(score):
            return False
        number = cast(float, score)  # a bool, an int or a finite float; ints compare exactly
        if self.kind == "choices":
            return number in self.choices
        return self.low <= number <= self.high

    def describe(self) -> str:
        """``a bool``, ``a number from 0 to 1``, ``one of 1, 2, 3``."""
        if self.kind == "bool":
            return "a bool"
        if self.kind == "choices":
            return "one of " + ", ".join(f"{v:g}" for v in self.choices)
        return f"a number from {self.low:g} to {self.high:g}"


ScoreRangeLike = ScoreRange | Literal["bool"] | tuple[float, float]
"""A :class:`ScoreRange`, or its shorthand: ``"bool"`` or ``(low, high)``."""

BOOL = ScoreRange.boolean()
"""Yes/no scores (matches and checks)."""
UNIT = ScoreRange.between(0.0, 1.0)
"""Scores from 0 to 1 (metrics, text scorers, the composite)."""


def score_range(value: ScoreRangeLike | None) -> ScoreRange | None:
    """``value`` as a :class:`ScoreRange` (``None`` stays ``None``: no range declared)."""
    if value is None or isinstance(value, ScoreRange):
        return value
    if value == "bool":
        return BOOL
    if isinstance(value, tuple) and len(value) == 2:
        return ScoreRange.between(*value)
    raise InvalidOptionError(
        f"score_range={value!r:.80} is not a score range; use 'bool', (low, high), "
        "ScoreRange.of_choices([...]) or None."
    )


__all__ = [
    "BOOL",
    "UNIT",
    "Feedback",
    "FeedbackDict",
    "ScoreRange",
    "ScoreRangeLike",
    "ScoreValue",
    "score_range",
]
