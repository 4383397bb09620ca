"""What an evaluator returned, as the feedback records an eval node keeps in graph state.

The scoring step (:mod:`lg_eval.scoring`) reads the outcome and applies the one
range rule; this module writes its records: a score outside its range becomes an
error feedback with ``passed=None`` (the refused score in
``metadata["rejected_score"]``), metadata is reduced to plain data
(:mod:`lg_eval.nodes._plain`) naming what had to be dropped in
``metadata["dropped"]``, and the verdict is :func:`lg_eval._feedback.verdict`
against the spec's threshold.
"""

from __future__ import annotations

from lg_eval._feedback import describe_error, safe_text, verdict
from lg_eval.nodes._plain import plain_metadata
from lg_eval.nodes._spec import Bound
from lg_eval.nodes._state import EvalFeedback
from lg_eval.scoring import EvaluatorCall, Outcome, Scored, read_outcome


def to_feedback(bound: Bound, call: EvaluatorCall, outcome: Outcome) -> list[EvalFeedback]:
    """The feedback records for the outcome of ``call``, ``bound``'s call (an evaluator may
    return several results).

    Never raises: whatever the evaluator returned or raised becomes plain,
    serializable feedback (an error feedback when it is unusable).
    """
    feedback = read_outcome(call, outcome)
    try:
        return [_record(bound, scored) for scored in feedback]
    except Exception as exc:  # a record graph state cannot hold is this evaluator's error
        return [_record(bound, Scored(key=call.key, error=describe_error(exc)))]


def _record(bound: Bound, scored: Scored) -> EvalFeedback:
    weight = bound.spec.weight
    if scored.error is not None and scored.refused is None:  # raised, or returned no feedback
        return EvalFeedback(
            key=scored.key,
            comment=f"Evaluator {bound.name!r} failed: {scored.error}",
            weight=weight,
            error=scored.error,
        )
    dropped: list[str] = []
    metadata = plain_metadata(scored.metadata, dropped)
    if scored.refused is not None:
        metadata = {**(metadata or {}), "rejected_score": safe_text(scored.rejected, 200)}
        if dropped:
            metadata["dropped"] = dropped
        return EvalFeedback(
            key=scored.key,
            comment=f"Not scored: {scored.refused}.",
            metadata=metadata,
            weight=weight,
            error=scored.error,
        )
    if dropped:
        metadata = {**(metadata or {}), "dropped": dropped}
    return EvalFeedback(
        key=scored.key,
        score=scored.score,
        comment=scored.comment,
        metadata=metadata,
        weight=weight,
        passed=verdict(scored.score, bound.spec.threshold),
    )
