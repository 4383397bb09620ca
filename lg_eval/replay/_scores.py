"""Old against new: both threads extracted and scored by the one scoring step, paired."""

from __future__ import annotations

from typing import Any

from lg_eval._effects import drive
from lg_eval._feedback import is_finite_number
from lg_eval.experiments import CaseEvaluator, CaseResult, ScoreRow, score_thread
from lg_eval.extract import extract_thread
from lg_eval.replay._result import ScoreChange


def scored(graph: Any, thread_id: str, scoring: list[CaseEvaluator]) -> CaseResult:
    """``thread_id`` of ``graph`` extracted and scored by the one scoring step."""
    thread = extract_thread(graph, {"configurable": {"thread_id": thread_id}})
    result = CaseResult(run_id="replay", case_id=thread_id, status="error", thread_id=thread_id)
    return drive(score_thread(result, thread, scoring, thresholds={}))


def score_changes(before: list[ScoreRow], after: list[ScoreRow]) -> list[ScoreChange]:
    """The rows of both sides paired by (evaluator, key), the original's order first; an
    evaluator that raised on a side has no score there and its error as the reason."""
    pending = {(r.evaluator, r.key): r for r in after}
    pairs: list[tuple[ScoreRow | None, ScoreRow | None]] = [
        (row, pending.pop((row.evaluator, row.key), None)) for row in before
    ]
    pairs.extend((None, row) for row in pending.values())
    changes = []
    for old, new in pairs:
        named = old if old is not None else new
        assert named is not None
        errors = [f"{side}: {r.error}" for side, r in (("old", old), ("new", new)) if r and r.error]
        changes.append(
            ScoreChange(
                evaluator=named.evaluator,
                key=named.key,
                old=_number(old.score) if old else None,
                new=_number(new.score) if new else None,
                reason="; ".join(errors) or None,
            )
        )
    return changes


def _number(score: Any) -> float | None:
    """A pass/fail score as 1.0 / 0.0, a finite number as itself; anything else None."""
    if isinstance(score, bool):
        return 1.0 if score else 0.0
    return float(score) if is_finite_number(score) else None
