"""Aggregates over a run's results, computed once here so every report shows the same numbers.

* per case over its repetitions: :func:`case_passes` (repetitions, passed ones), from
  which :func:`pass_at_k` (some repetition passed) and :func:`pass_hat_k` (every
  repetition passed) follow; :func:`case_mean_scores`;
* per run: :func:`mean_scores` per feedback key, :func:`latency_percentiles`
  (p50 / p95), :func:`total_cost`;
* the inputs of a report's summary that need every result at once, :class:`CaseCounts`
  and :class:`Latencies`: :func:`case_counts` and :func:`latencies` compute them from
  results in memory, and the results store computes the same two in SQL
  (:meth:`~lg_eval.experiments.ResultStore.case_counts`,
  :meth:`~lg_eval.experiments.ResultStore.latencies`) for a run too large to load.

Scores count as numbers (a bool is 1.0 or 0.0); a missing score (``None``) is left
out of means. Percentiles interpolate linearly between the closest ranks.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import NamedTuple

from lg_eval.arguments import checked_sequence, is_finite_number
from lg_eval.errors import InvalidOptionError
from lg_eval.experiments.results import CaseResult, ExperimentRun, checked_run
from lg_eval.feedback import ScoreValue
from lg_eval.stats import RateMoments


def score_number(score: ScoreValue) -> float | None:
    """``score`` as a float (True 1.0, False 0.0); None stays None."""
    return None if score is None else float(score)


def percentile(values: Sequence[float], q: float) -> float | None:
    """The ``q``-th percentile (0-100) of ``values``, linearly interpolated; None if empty.

    Raises:
        InvalidOptionError: ``values`` holds what is no finite number, or ``q`` is not in
            [0, 100].
    """
    if not (is_finite_number(q) and 0 <= q <= 100):
        raise InvalidOptionError(f"q={q!r:.80}: use a percentile in [0, 100].")
    checked_sequence(values, "values", "a list of numbers")
    if not values:
        return None
    ordered = _sorted_finite(values)
    rank = (len(ordered) - 1) * q / 100
    low, high = math.floor(rank), math.ceil(rank)
    gap = ordered[high] - ordered[low]
    if not math.isfinite(gap):  # values far apart as floats go: weigh the two instead
        return ordered[low] * (1 - (rank - low)) + ordered[high] * (rank - low)
    return ordered[low] + gap * (rank - low)


def _sorted_finite(values: Sequence[float]) -> list[float]:
    """``values`` sorted, refusing what is no finite number. Floats and ints are checked at
    C speed (no NaN; then the ends of the sorted list bound the rest), other kinds of number
    one by one: a check one by one would cost 5 times the sort."""
    try:
        plain = set(map(type, values)) <= {float, int} and not any(map(math.isnan, values))
        if plain or all(is_finite_number(value) for value in values):
            ordered = sorted(values)
            if math.isfinite(ordered[0]) and math.isfinite(ordered[-1]):
                return ordered
    except OverflowError:  # an int too large for a float
        pass
    raise InvalidOptionError("values: every value must be a finite number.")


def by_case(results: Iterable[CaseResult]) -> dict[str, list[CaseResult]]:
    """Results grouped by case id (first-seen order), repetitions in order."""
    grouped: dict[str, list[CaseResult]] = {}
    for result in results:
        grouped.setdefault(result.case_id, []).append(result)
    for group in grouped.values():
        group.sort(key=lambda r: r.repetition)
    return grouped


def case_passes(results: Iterable[CaseResult]) -> dict[str, tuple[int, int]]:
    """Per case (first-seen order): ``(repetitions, passed repetitions)``.

    The one definition pass@k and pass^k rest on: a case passes at k when some of its
    repetitions passed, and at hat-k when all of them did.
    """
    counts: dict[str, tuple[int, int]] = {}
    for result in results:
        n, passed = counts.get(result.case_id, (0, 0))
        counts[result.case_id] = (n + 1, passed + (result.status == "passed"))
    return counts


def pass_at_k(run: ExperimentRun) -> dict[str, bool]:
    """Per case: whether at least one repetition passed."""
    results = checked_run(run).results
    return {case: passed > 0 for case, (_, passed) in case_passes(results).items()}


def pass_hat_k(run: ExperimentRun) -> dict[str, bool]:
    """Per case: whether every repetition passed (pass^k)."""
    results = checked_run(run).results
    return {case: passed == n for case, (n, passed) in case_passes(results).items()}


class CaseCounts(NamedTuple):
    """A run's results grouped by case: the inputs of pass@k and pass^k, and of the pass
    rate's interval over cases."""

    cases: int
    """Distinct case ids."""
    k: int
    """Repetitions of the case that has the most (0 without results)."""
    some: int
    """Cases with at least one passed repetition."""
    every: int
    """Cases whose every repetition passed."""
    passes: RateMoments = RateMoments()
    """Passed results of each case out of its results, summed over cases."""


def case_counts(results: Iterable[CaseResult]) -> CaseCounts:
    """:class:`CaseCounts` of ``results`` in memory (the store counts the same in SQL)."""
    passes = case_passes(results).values()
    moments = RateMoments()
    for n, passed in passes:
        moments = moments.plus(passed, n)
    return CaseCounts(
        cases=len(passes),
        k=max((n for n, _ in passes), default=0),
        some=sum(passed > 0 for _, passed in passes),
        every=sum(passed == n for n, passed in passes),
        passes=moments,
    )


class Latencies(NamedTuple):
    """Order statistics of a run's latencies in seconds (None without results)."""

    p50: float | None
    p95: float | None
    max: float | None


def latencies(results: Iterable[CaseResult]) -> Latencies:
    """:class:`Latencies` of ``results`` in memory (the store reads the same from SQL)."""
    values = [result.latency_s for result in results]
    return Latencies(percentile(values, 50), percentile(values, 95), max(values, default=None))


def _means(results: Iterable[CaseResult]) -> dict[str, float]:
    values: dict[str, list[float]] = defaultdict(list)
    for result in results:
        for row in result.scores:
            number = score_number(row.score)
            if number is not None:
                values[row.key].append(number)
    return {key: sum(v) / len(v) for key, v in values.items()}


def mean_scores(run: ExperimentRun) -> dict[str, float]:
    """Per feedback key: the mean score over every result that has one."""
    return _means(checked_run(run).results)


def case_mean_scores(run: ExperimentRun) -> dict[str, dict[str, float]]:
    """Per case, per feedback key: the mean score over its repetitions."""
    return {case: _means(rs) for case, rs in by_case(run.results).items()}


def latency_percentiles(run: ExperimentRun) -> dict[str, float | None]:
    """``{"p50": ..., "p95": ...}`` of the results' latencies in seconds."""
    latencies = [r.latency_s for r in checked_run(run).results]
    return {"p50": percentile(latencies, 50), "p95": percentile(latencies, 95)}


def total_cost(run: ExperimentRun) -> float | None:
    """The summed cost of the results that report one (None when none does)."""
    costs = [r.cost for r in run.results if r.cost is not None]
    return sum(costs) if costs else None


__all__ = [
    "CaseCounts",
    "Latencies",
    "by_case",
    "case_counts",
    "case_mean_scores",
    "case_passes",
    "latencies",
    "latency_percentiles",
    "mean_scores",
    "pass_at_k",
    "pass_hat_k",
    "percentile",
    "score_number",
    "total_cost",
]
