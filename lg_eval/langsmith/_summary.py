"""Summary evaluators for ``evaluate(..., summary_evaluators=[...])``: pass rate and mean score.

LangSmith hands a summary evaluator the experiment's rows (outputs, reference
outputs, inputs), not the row evaluators' feedback, so these score each row
again with the lg_eval evaluators they are given (deterministic evaluators give
the same scores; for LLM judges that is a second judgment per row) and return
one feedback per evaluator key: ``<key>:pass_rate`` / ``<key>:mean``, and, from
:func:`pass_rate`, the rows' own ``pass_rate``.

Verdicts follow the runner's rule (:mod:`lg_eval._verdicts`): a ``None`` score is
"no verdict", counted apart and never as a pass. An evaluator that raises on a row is
that row's error, as a case's error in ``lg-eval run``: counted apart in the comment (with
the first error's description), the row not passed, the other rows and keys summarised as
usual; the summary itself never fails for it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from lg_eval._arguments import Flag, validated
from lg_eval._evaluator import Evaluator, evaluator_of
from lg_eval._feedback import Minimum
from lg_eval._verdicts import case_verdict, verdict
from lg_eval.errors import InvalidOptionError
from lg_eval.scoring import EvaluatorCall, call_evaluators, read_outcome

SummaryEvaluator = Callable[..., dict[str, Any]]
Row = list[tuple[str, Any, str | None]]
"""One row's feedback: ``(key, score, error)`` of every evaluator, in order (``error``:
``'ErrorType: message'`` when the evaluator raised on the row)."""


def _rows(
    ready: Sequence[Evaluator[Any]],
    outputs: Sequence[Any],
    reference_outputs: Sequence[Any],
    inputs: Sequence[Any],
) -> list[Row]:
    rows: list[Row] = []
    for output, reference, given in zip(outputs, reference_outputs, inputs, strict=True):
        kwargs = {"outputs": output, "reference_outputs": reference, "inputs": given}
        calls = [EvaluatorCall.of(evaluator, kwargs) for evaluator in ready]
        outcomes = call_evaluators(calls).run()
        row: Row = []
        for call, outcome in zip(calls, outcomes, strict=True):
            row.extend((f.key, f.score, f.error) for f in read_outcome(call, outcome))
        rows.append(row)
    return rows


def _by_key(rows: list[Row]) -> dict[str, list[tuple[Any, str | None]]]:
    table: dict[str, list[tuple[Any, str | None]]] = {}
    for row in rows:
        for key, score, error in row:
            table.setdefault(key, []).append((score, error))
    return table


def _errored(scored: list[tuple[Any, str | None]]) -> str:
    """``"; 1 errored (ValueError: ...)"``: the rows an evaluator raised on, and the first
    error (nothing when none did)."""
    errors = [error for _, error in scored if error is not None]
    return f"; {len(errors)} errored ({errors[0]})" if errors else ""


def _evaluators(items: Sequence[Any], summary: str) -> list[Evaluator[Any]]:
    """The lg_eval evaluators ``items`` name (at least one), else a typed error."""
    if not items:
        raise InvalidOptionError(f"{summary}(...) needs at least one lg_eval evaluator.")
    ready = []
    for item in items:
        found = evaluator_of(item)
        if found is None:
            raise InvalidOptionError(
                f"Summary evaluators score with lg_eval evaluators; {item!r:.80} is not one "
                "(pass an Evaluator, its .as_async() twin, or an evaluator function)."
            )
        ready.append(found)
    return ready


@validated
def pass_rate(
    *evaluators: Any, threshold: Minimum = 1.0, require_verdict: Flag = False
) -> SummaryEvaluator:
    """A summary evaluator: per evaluator key, the share of verdicts that passed, and
    ``pass_rate``, the share of rows that passed.

    A score passes when ``True`` or a number ``>= threshold``. A ``None`` score is no
    verdict: left out of its key's rate and counted in the comment. A row passes as a
    case of ``lg-eval run`` does: at least one verdict and every verdict passed (with
    ``require_verdict``, also no no-verdict); a row with no verdict at all is not passed.
    """
    ready = _evaluators(evaluators, "pass_rate")

    def summary_pass_rate(
        outputs: list[Any], reference_outputs: list[Any], inputs: list[Any]
    ) -> dict[str, Any]:
        rows = _rows(ready, outputs, reference_outputs, inputs)
        results = []
        for key, scored in _by_key(rows).items():
            scores = [score for score, error in scored if error is None]
            verdicts = [v for v in (verdict(s, threshold) for s in scores) if v is not None]
            rate = sum(verdicts) / len(verdicts) if verdicts else None
            comment = f"{sum(verdicts)} of {len(verdicts)} passed" + _unjudged(scores)
            comment += _errored(scored)
            results.append({"key": f"{key}:pass_rate", "score": rate, "comment": comment})
        results.append(_rows_passed(rows, threshold, require_verdict))
        return {"results": results}

    return summary_pass_rate


def _rows_passed(rows: list[Row], threshold: float, require_verdict: bool) -> dict[str, Any]:
    """``pass_rate`` of the rows: passed, failed (a verdict failed), no verdict and errored
    (an evaluator raised on it) apart."""
    passed = failed = errored = 0
    for row in rows:
        verdicts = [verdict(score, threshold) for _, score, _ in row]
        if any(error is not None for _, _, error in row):
            errored += 1
        elif case_verdict(verdicts, require_verdict=require_verdict) == "passed":
            passed += 1
        elif False in verdicts:
            failed += 1
    unjudged = len(rows) - passed - failed - errored
    comment = f"{passed} of {len(rows)} rows passed, {failed} failed, {unjudged} no verdict"
    comment += f", {errored} errored" if errored else ""
    rate = passed / len(rows) if rows else None
    return {"key": "pass_rate", "score": rate, "comment": comment}


def mean_score(*evaluators: Any) -> SummaryEvaluator:
    """A summary evaluator: per evaluator key, the mean score (``True`` = 1, ``False`` = 0)."""
    ready = _evaluators(evaluators, "mean_score")

    def summary_mean_score(
        outputs: list[Any], reference_outputs: list[Any], inputs: list[Any]
    ) -> dict[str, Any]:
        results = []
        rows = _rows(ready, outputs, reference_outputs, inputs)
        for key, scored in _by_key(rows).items():
            scores = [score for score, error in scored if error is None]
            numbers = [float(s) for s in scores if s is not None]
            mean = sum(numbers) / len(numbers) if numbers else None
            comment = f"mean of {len(numbers)} scores" + _unjudged(scores) + _errored(scored)
            results.append({"key": f"{key}:mean", "score": mean, "comment": comment})
        return {"results": results}

    return summary_mean_score


def _unjudged(scores: list[Any]) -> str:
    missing = sum(1 for s in scores if s is None)
    return f"; {missing} no verdict" if missing else ""
