"""Consensus: reduce several samples of one judge to one verdict, and flag disagreement.

With ``samples=N`` a judge asks its model N times (concurrently when async)
and reduces each score over the samples that produced a usable answer:

* ``"mean"`` (default for numbers) and ``"median"``;
* ``"majority"`` (default for booleans): the most frequent value, None on a tie.
  For booleans ``"median"`` is the majority too, and ``"mean"`` is the share of
  samples that said true.

The *spread* of a score is its range over the samples divided by the range of
its scale (so 0 means unanimous and 1 means the samples span the whole scale).
A spread above ``disagreement_threshold``, or a tied majority, marks the result
``needs_review``.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, get_args

from lg_eval._feedback import ScoreValue
from lg_eval.judges._schema import Judgment

Reducer = Literal["mean", "median", "majority"]
REDUCERS: tuple[Reducer, ...] = get_args(Reducer)
DEFAULT_THRESHOLD = 0.25


def reduce_values(values: Sequence[ScoreValue], reduce: str | None) -> tuple[ScoreValue, str]:
    """The reduced value and the reducer actually used (defaults depend on the type)."""
    if all(isinstance(v, bool) for v in values):
        how = reduce or "majority"
        if how == "mean":
            return round(sum(bool(v) for v in values) / len(values), 9), how
        return _majority(values), how
    numbers = [float(v) for v in values if v is not None]
    how = reduce or "mean"
    if how == "majority":
        return _majority(numbers), how
    value = statistics.fmean(numbers) if how == "mean" else statistics.median(numbers)
    return round(value, 9), how


def _majority(values: Sequence[Any]) -> Any:
    ranked = Counter(values).most_common()
    if len(ranked) > 1 and ranked[0][1] == ranked[1][1]:
        return None
    return ranked[0][0]


def spread(values: Sequence[ScoreValue], scale: tuple[float, float] = (0.0, 1.0)) -> float:
    """The range of ``values`` as a share of the range of ``scale``."""
    numbers = [float(v) for v in values if v is not None]
    if len(numbers) < 2:
        return 0.0
    width = scale[1] - scale[0]
    return round((max(numbers) - min(numbers)) / (width if width > 0 else 1.0), 9)


@dataclass(frozen=True)
class Combined:
    """The reduced judgment (None when every sample failed), metadata and a comment lead."""

    judgment: Judgment | None
    metadata: dict[str, Any]
    lead: str


def combine(
    samples: Sequence[tuple[Judgment | None, Mapping[str, Any] | None]],
    *,
    reduce: str | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    scales: Mapping[str, tuple[float, float]] | None = None,
) -> Combined:
    """Reduce ``(judgment, error)`` samples score by score."""
    scales = scales or {}
    good = [j for j, _ in samples if j is not None]
    records = [
        {**j.scores, **({"reasoning": j.reasoning} if j.reasoning else {})}
        if j is not None
        else {"error": dict(error or {})}
        for j, error in samples
    ]
    failed = len(samples) - len(good)
    metadata: dict[str, Any] = {
        "samples": len(samples),
        "scored": len(good),
        "threshold": threshold,
        "sample_results": records,
    }
    if not good:
        return Combined(None, metadata, f"All {len(samples)} samples failed.")
    reduced: dict[str, ScoreValue] = {}
    spreads: dict[str, float] = {}
    used = reduce
    for key in good[0].scores:
        values = [j.scores[key] for j in good if key in j.scores]
        reduced[key], used = reduce_values(values, reduce)
        spreads[key] = spread(values, scales.get(key, (0.0, 1.0)))
    tied = [key for key, value in reduced.items() if value is None]
    worst = max(spreads.values(), default=0.0)
    needs_review = worst > threshold or bool(tied)
    metadata.update(reducer=used, spread=worst, needs_review=needs_review)
    if len(spreads) > 1:
        metadata["spreads"] = spreads
    lead = f"Consensus of {len(good)} samples ({used})."
    if worst > threshold:
        lead += (
            f" The samples disagree (spread {worst:.2f} > {threshold:.2f}): "
            "flagged for human review."
        )
    if tied:
        lead += f" No majority for {', '.join(tied)}: flagged for human review."
    if failed:
        lead += f" {failed} of {len(samples)} samples failed and were left out."
    closest = min(good, key=lambda j: _distance(j.scores, reduced))
    return Combined(Judgment(reduced, closest.reasoning, closest.fields), metadata, lead)


def _distance(scores: Mapping[str, ScoreValue], target: Mapping[str, ScoreValue]) -> float:
    return sum(
        abs(float(actual) - float(v))
        for k, v in target.items()
        if v is not None and (actual := scores.get(k)) is not None
    )
