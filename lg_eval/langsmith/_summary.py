"""Summary evaluators for ``evaluate(..., summary_evaluators=[...])``: pass rate and mean score.

LangSmith hands a summary evaluator the experiment's rows (outputs, reference
outputs, inputs), not the row evaluators' feedback, so these score each row
again with the lg_eval evaluators they are given (deterministic evaluators give
the same scores; for LLM judges that is a second judgment per row) and return
one feedback per evaluator key: ``<key>:pass_rate`` / ``<key>:mean``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from lg_eval.errors import InvalidOptionError
from lg_eval.evaluator import Evaluator, evaluator_of

SummaryEvaluator = Callable[..., dict[str, Any]]


def _scores(
    evaluators: Sequence[Any],
    outputs: Sequence[Any],
    reference_outputs: Sequence[Any],
    inputs: Sequence[Any],
) -> dict[str, list[Any]]:
    table: dict[str, list[Any]] = {}
    for item in evaluators:
        evaluator = _evaluator(item)
        for output, reference, given in zip(outputs, reference_outputs, inputs, strict=True):
            result = evaluator(outputs=output, reference_outputs=reference, inputs=given)
            for feedback in result if isinstance(result, list) else [result]:
                table.setdefault(feedback["key"], []).append(feedback["score"])
    return table


def _evaluator(item: Any) -> Evaluator[Any]:
    found = evaluator_of(item)
    if found is None:
        raise InvalidOptionError(
            f"Summary evaluators score with lg_eval evaluators; {item!r:.80} is not one "
            "(pass an Evaluator, its .as_async() twin, or an evaluator function)."
        )
    return found


def passed(score: Any, threshold: float) -> bool | None:
    """Whether one score passes: ``True``, or a number at least ``threshold``; ``None`` unscored."""
    if score is None:
        return None
    if isinstance(score, bool):
        return score
    return float(score) >= threshold


def pass_rate(*evaluators: Any, threshold: float = 1.0) -> SummaryEvaluator:
    """A summary evaluator: per evaluator key, the share of rows that passed.

    A row passes with a ``True`` score or a number ``>= threshold``; rows an
    evaluator could not score (``None``) are left out and counted in the comment.
    """
    if not evaluators:
        raise InvalidOptionError("pass_rate(...) needs at least one lg_eval evaluator.")

    def summary_pass_rate(
        outputs: list[Any], reference_outputs: list[Any], inputs: list[Any]
    ) -> dict[str, Any]:
        results = []
        for key, scores in _scores(evaluators, outputs, reference_outputs, inputs).items():
            verdicts = [v for v in (passed(s, threshold) for s in scores) if v is not None]
            rate = sum(verdicts) / len(verdicts) if verdicts else None
            comment = f"{sum(verdicts)} of {len(verdicts)} passed" + _skipped(scores)
            results.append({"key": f"{key}:pass_rate", "score": rate, "comment": comment})
        return {"results": results}

    return summary_pass_rate


def mean_score(*evaluators: Any) -> SummaryEvaluator:
    """A summary evaluator: per evaluator key, the mean score (``True`` = 1, ``False`` = 0)."""
    if not evaluators:
        raise InvalidOptionError("mean_score(...) needs at least one lg_eval evaluator.")

    def summary_mean_score(
        outputs: list[Any], reference_outputs: list[Any], inputs: list[Any]
    ) -> dict[str, Any]:
        results = []
        for key, scores in _scores(evaluators, outputs, reference_outputs, inputs).items():
            numbers = [float(s) for s in scores if s is not None]
            mean = sum(numbers) / len(numbers) if numbers else None
            comment = f"mean of {len(numbers)} scores" + _skipped(scores)
            results.append({"key": f"{key}:mean", "score": mean, "comment": comment})
        return {"results": results}

    return summary_mean_score


def _skipped(scores: list[Any]) -> str:
    missing = sum(1 for s in scores if s is None)
    return f"; {missing} not scored" if missing else ""


__all__ = ["SummaryEvaluator", "mean_score", "pass_rate", "passed"]
