"""Feedback: what every lg_eval evaluator decides, in one model.

:class:`Feedback` is the one feedback type. Its dict form, :class:`FeedbackDict`
(``{"key", "score", "comment", "metadata"}``), is LangSmith's feedback shape and
the wire format everywhere: evaluators return it, ``langsmith.evaluate`` reads
it, eval nodes store it in graph state. A scorer returns a :class:`Feedback`
whose ``key`` may be left out (the evaluator's own key is used).
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal, TypedDict, cast

from pydantic import BaseModel, BeforeValidator, ConfigDict, PlainValidator
from pydantic_core import PydanticCustomError

from lg_eval._arguments import is_finite_number as is_finite_number
from lg_eval._arguments import validated
from lg_eval._describe import describe_error as describe_error
from lg_eval._describe import safe_text as safe_text
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
    """A bool, or a finite number (:func:`is_finite_number`)."""
    return isinstance(value, bool) or is_finite_number(value)


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


DEFAULT_RANGE = UNIT
"""The range of an evaluator that declares none: a bool, or a number from 0 to 1
(LangSmith's convention). Declare ``score_range`` to score on another scale."""


def check_score(score: object, declared: ScoreRange | None) -> tuple[ScoreValue, str | None]:
    """The one range rule: ``(score as plain data, None)``, or ``(None, why it is refused)``.

    Every place lg_eval makes a score (the :class:`~lg_eval._evaluator.Evaluator` core,
    eval nodes, the evaluation graph, the runner, sweeps, LangSmith summaries) keeps it:
    ``None`` passes; a bool or a finite real number must lie inside ``declared``, or
    inside :data:`DEFAULT_RANGE` when the evaluator declares nothing; anything else is
    refused. The reason reads after "evaluator 'x' produced ...".

    Raises:
        InvalidOptionError: ``declared`` is no :class:`ScoreRange` (see :func:`score_range`).
    """
    if declared is not None and not isinstance(declared, ScoreRange):
        raise InvalidOptionError(
            f"declared={declared!r:.80}: use a ScoreRange (score_range('bool'), "
            "score_range((low, high))) or None."
        )
    problem = unusable_score(score)
    if problem is not None:
        return None, problem
    if score is None:
        return None, None
    value = _plain_number(cast(numbers.Real, score))
    allowed = DEFAULT_RANGE if declared is None else declared
    if allowed.accepts(value):
        return value, None
    if declared is not None:
        return None, f"the score {_shown(value)}, outside its range ({allowed.describe()})"
    return None, (
        f"the score {_shown(value)}, outside the range of an evaluator that declares none "
        "(a bool or a number from 0 to 1; declare score_range for another scale)"
    )


def unusable_score(score: object) -> str | None:
    """Why ``score`` is no score at all, whatever the range (None: a bool, None, or a
    finite real number): the check stored feedback is held to when its range is unknown."""
    if score is None or isinstance(score, bool):
        return None
    if not isinstance(score, numbers.Real):
        return f"a {type(score).__name__} score, not a bool or a number"
    if not is_finite_number(score):
        return f"a non-finite score ({_shown(score)})"
    return None


def _plain_number(score: numbers.Real) -> bool | int | float:
    if isinstance(score, bool):
        return score
    return int(score) if isinstance(score, numbers.Integral) else float(score)


def _shown(value: object) -> str:
    try:
        return repr(value)[:100]
    except ValueError:  # an int with more digits than Python will print
        return "(a huge integer)"


def checked_score(result: FeedbackDict, allowed: ScoreRange | None) -> FeedbackDict:
    """``result``, or, when :func:`check_score` refuses its score, an error feedback
    (``allowed=None``: the evaluator declares no range, so 0..1 or a bool).

    A score kept is plain data (a bool, an int or a float). The refused score never
    leaves: ``score`` becomes ``None``, the comment says
    why, and ``metadata["error"]`` holds ``{"type": "invalid_score", "message",
    "score"}`` (the score as text) and the scorer's own comment. :func:`refusal`
    reads it back.

    Raises:
        InvalidOptionError: ``result`` is no feedback dict (``{"key", "score", ...}``).
    """
    if not isinstance(result, Mapping) or "score" not in result:
        raise InvalidOptionError(
            f"result={result!r:.80}: use a feedback dict with a 'score' (feedback_dict)."
        )
    value, problem = check_score(result["score"], allowed)
    if problem is None:
        return result if value is result["score"] else {**result, "score": value}
    message = refused_because(result["key"], problem)
    error = {"type": "invalid_score", "message": message, "score": _shown(result["score"])}
    if result["comment"]:
        error["comment"] = result["comment"]
    return {
        "key": result["key"],
        "score": None,
        "comment": f"Not scored: {message}; see metadata['error'].",
        "metadata": {**(result["metadata"] or {}), "error": error},
    }


def refused_because(evaluator: str, problem: str) -> str:
    """How a refused score is worded: ``evaluator 'x' produced <problem>``."""
    return f"evaluator {evaluator!r} produced {problem}"


def refusal(metadata: Any) -> tuple[str, Any] | None:
    """``(why, the refused score as text)`` when :func:`checked_score` refused a score (the
    ``metadata`` of its feedback holds an ``invalid_score`` error), else None."""
    error = metadata.get("error") if isinstance(metadata, Mapping) else None
    if not isinstance(error, Mapping) or error.get("type") != "invalid_score":
        return None
    return str(error.get("message") or "the score is outside its range"), error.get("score")


# --------------------------------------------------------------------------- verdicts


def verdict(score: object, threshold: float | None) -> bool | None:
    """The one verdict rule: whether ``score`` passes.

    A bool is its own verdict, whatever the threshold (LangSmith's convention);
    a number passes at or above ``threshold``; ``None``, a score that is no bool
    or finite number (:func:`unusable_score`), and a number with no threshold
    give no verdict (``None``).
    """
    if score is None or unusable_score(score) is not None:
        return None
    if isinstance(score, bool):
        return score
    if threshold is None:
        return None
    return float(cast(float, score)) >= threshold


_MINIMUM = "use a finite number (the minimum score that passes)"


def _minimum(value: object) -> float:
    if is_finite_number(value):
        return float(cast(float, value))
    raise PydanticCustomError("threshold", _MINIMUM)


def _optional_minimum(value: object) -> float | None:
    if value is None or is_finite_number(value):
        return None if value is None else float(cast(float, value))
    raise PydanticCustomError("threshold", _MINIMUM + " or None")


def _mapping(value: object) -> object:
    if isinstance(value, Mapping):
        return value
    raise PydanticCustomError(
        "thresholds",
        "use a mapping of feedback key (or evaluator name) to the minimum score that passes",
    )


def _key(value: object) -> str:
    if isinstance(value, str):
        return value
    raise PydanticCustomError("threshold_key", "use the feedback key or evaluator name as text")


Minimum = Annotated[float, PlainValidator(_minimum)]
"""The contract of a threshold that must be given: a finite number (:func:`is_finite_number`),
the minimum a numeric score must reach to pass. A NaN threshold would fail every score
silently, a string would raise deep inside the first verdict."""
Threshold = Annotated[float | None, PlainValidator(_optional_minimum)]
"""The contract of an optional threshold: ``None`` (a number gives no verdict) or a
:data:`Minimum`."""
Thresholds = Annotated[
    Mapping[Annotated[str, PlainValidator(_key)], Minimum], BeforeValidator(_mapping)
]
"""The contract of ``{feedback key or evaluator name: minimum}``, each a :data:`Minimum`."""


@validated
def checked_thresholds(thresholds: Thresholds | None) -> dict[str, float]:
    """``thresholds`` held to :data:`Thresholds` (``None``: none)."""
    return dict(thresholds or {})


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
