"""Running totals of a run's results: the one implementation of the report's aggregates.

:func:`~lg_eval.reports.build.build_report` feeds a loaded run's results through a
:class:`RunTally`; :func:`~lg_eval.reports.stream.stream_report` feeds a stored run's
results through the same tally one page at a time, so a 100,000-result run is
aggregated in memory that does not grow with it, and both give the same numbers.
A case's results are added together (``build_report`` groups them; the store reads them
in case order), so the tally can close each case's cluster when the next case begins: when
the run has repetitions (some case has several results), the intervals of a key's pass
rate and mean count cases; without, they are over the rows, as they always were.
Only what needs every value at once (percentiles, pass@k) is computed elsewhere: from
the results in memory or in SQL, as :class:`~lg_eval.experiments.CaseCounts`
and :class:`~lg_eval.experiments.Latencies`, which :meth:`RunTally.summary`
takes to make the one :class:`~lg_eval.reports.model.Summary`.
"""

from __future__ import annotations

import math

from lg_eval.experiments import CaseCounts, CaseResult, Latencies, ScoreRow
from lg_eval.reports.model import (
    EvaluatorSummary,
    Histogram,
    RunNote,
    StatusCounts,
    Summary,
    TagSummary,
)
from lg_eval.stats import (
    Interval,
    MeanSample,
    RateMoments,
    clustered_rate_interval,
    wilson_interval,
)

BINS = 10
NOTE_CASES = 3
"""Case ids a run note names (it counts them all)."""
NOTES = 20
"""Distinct notes a run's summary keeps (a tally's memory stays bounded over any run)."""


def rate(part: int, whole: int) -> float | None:
    """``part / whole``, None when ``whole`` is 0."""
    return part / whole if whole else None


def rate_intervals(cases: CaseCounts) -> dict[str, Interval | None]:
    """The intervals of a summary: the pass rate's over cases (each case's passed
    repetitions of its results: the Wilson interval over results when no case repeats),
    pass@k's and pass^k's (the Wilson interval over cases)."""
    return {
        "pass_rate_interval": clustered_rate_interval(cases.passes),
        "pass_at_k_interval": wilson_interval(cases.some, cases.cases),
        "pass_hat_k_interval": wilson_interval(cases.every, cases.cases),
    }


def numeric_score(row: ScoreRow) -> float | None:
    """The row's score as shown in the score distribution: ints and floats, not booleans."""
    score = row.score
    if isinstance(score, int | float) and not isinstance(score, bool):
        return float(score)
    return None


def histogram_bounds(
    lowest: float | None,
    highest: float | None,
    *,
    in_unit: bool,
    unit_interval: bool = False,
    from_zero: bool = False,
) -> tuple[float, float]:
    """``(lo, hi)`` of the bins for values spanning ``[lowest, highest]`` (None: no values).

    ``unit_interval``: [0, 1] when every value lies there (``in_unit``); ``from_zero``: bins
    start at 0. An empty or single-valued range is widened so every bin has a width.
    """
    if unit_interval and in_unit:
        lo, hi = 0.0, 1.0
    else:
        lo = 0.0 if from_zero else (0.0 if lowest is None else lowest)
        hi = 1.0 if highest is None else highest
    if not (hi - lo) / BINS > 0:  # empty, one value, or a span too small to split
        lo, hi = (lo - 0.5, hi + 0.5) if not from_zero else (0.0, max(hi, 1.0))
    return lo, hi


class Binner:
    """Counts of values in ``BINS`` equal-width bins over ``[lo, hi]`` (``hi`` in the last)."""

    def __init__(self, lo: float, hi: float) -> None:
        self.lo, self.hi = lo, hi
        self.width = (hi - lo) / BINS
        self.counts = [0] * BINS
        # a span wider than the largest float is measured in halves, which fit
        self._half_width = None if math.isfinite(self.width) else hi / 2 / BINS - lo / 2 / BINS

    def add(self, value: float) -> None:
        """Count ``value`` (which lies in ``[lo, hi]``)."""
        if self._half_width is None:
            at = (value - self.lo) / self.width
        else:
            at = (value / 2 - self.lo / 2) / self._half_width
        self.counts[min(max(int(at), 0), BINS - 1)] += 1

    def histogram(self, label: str) -> Histogram:
        """The bins as a :class:`Histogram`."""
        return Histogram(label=label, lo=self.lo, hi=self.hi, counts=list(self.counts))


class EvaluatorTally:
    """One feedback key's verdicts and score statistics, row by row, a case's rows
    together."""

    def __init__(self, key: str, evaluator: str) -> None:
        self.key, self.evaluator = key, evaluator
        self.rows = self.passed = self.failed = self.no_verdict = self.errors = 0
        self.scores = 0
        self.total = 0.0
        self.sample = MeanSample()
        self.min: float | None = None
        self.max: float | None = None
        self.verdicts = RateMoments()
        """Passed rows of each case out of its rows with a verdict, summed over cases."""
        self._case: str | None = None
        self._case_passed = self._case_verdicts = 0

    def add(self, row: ScoreRow, case_id: str | None = None) -> None:
        """Count one score row of this key, from case ``case_id`` (None: a case of its own)."""
        if case_id is None or case_id != self._case:
            self._close_case()
            self._case = case_id
        self.rows += 1
        self.passed += row.passed is True
        self.failed += row.passed is False
        self._case_passed += row.passed is True
        self._case_verdicts += row.passed is not None
        self.no_verdict += row.passed is None and row.error is None
        self.errors += row.error is not None
        if row.score is not None and row.error is None:
            value = float(row.score)
            self.scores += 1
            self.total += value
            self.sample.add(value, case_id)
            self.min = value if self.min is None or value < self.min else self.min
            self.max = value if self.max is None or value > self.max else self.max

    def _close_case(self) -> None:
        self.verdicts = self.verdicts.plus(self._case_passed, self._case_verdicts)
        self._case_passed = self._case_verdicts = 0

    def summary(self, *, by_case: bool = False) -> EvaluatorSummary:
        """The key's :class:`EvaluatorSummary`; ``by_case``: the run has repetitions, and
        the intervals count cases."""
        self._close_case()
        self._case = None
        passes = (
            clustered_rate_interval(self.verdicts)
            if by_case
            else wilson_interval(self.passed, self.passed + self.failed)
        )
        return EvaluatorSummary(
            key=self.key,
            evaluator=self.evaluator,
            rows=self.rows,
            passed=self.passed,
            failed=self.failed,
            no_verdict=self.no_verdict,
            errors=self.errors,
            pass_rate=rate(self.passed, self.passed + self.failed),
            mean=self.total / self.scores if self.scores else None,
            min=self.min,
            max=self.max,
            pass_rate_interval=passes,
            mean_interval=self.sample.interval(clustered=by_case),
        )


class RunTally:
    """Status counts, sums, per-key and per-tag aggregates and score range of the results
    added so far, in the order added (sums are accumulated in that order); a case's
    results are added together."""

    def __init__(self) -> None:
        self.results = 0
        self.counts = StatusCounts()
        self.latency_total = 0.0
        self.tokens = 0
        self.cost_total = 0.0
        self.costs = 0
        self.model_calls = 0
        self.retries = 0
        self.evaluators: dict[str, EvaluatorTally] = {}
        self.tags: dict[str, StatusCounts] = {}
        self.notes: dict[str, RunNote] = {}
        self.lowest: float | None = None
        self.highest: float | None = None
        self.in_unit = True
        self.unit_bins = Binner(0.0, 1.0)
        self.repeated = False
        """Some case has several results (they come together: one follows another)."""
        self._last_case: str | None = None

    def add(self, result: CaseResult) -> None:
        """Count one result."""
        self.results += 1
        self.repeated = self.repeated or result.case_id == self._last_case
        self._last_case = result.case_id
        _bump(self.counts, result)
        self.latency_total += result.latency_s
        self.tokens += result.tokens
        if result.cost is not None:
            self.cost_total += result.cost
            self.costs += 1
        self.model_calls += result.model_calls
        self.retries += max(result.attempts - 1, 0)
        for row in result.scores:
            tally = self.evaluators.get(row.key)
            if tally is None:
                tally = self.evaluators[row.key] = EvaluatorTally(row.key, row.evaluator)
            tally.add(row, result.case_id)
            value = numeric_score(row)
            if value is not None:
                self._score(value)
        for tag in dict.fromkeys(result.tags):
            _bump(self.tags.setdefault(tag, StatusCounts()), result)
        for text in dict.fromkeys(result.notes):
            note = self.notes.get(text)
            if note is None:
                if len(self.notes) >= NOTES:
                    continue
                note = self.notes[text] = RunNote(text=text, cases=0, case_ids=[])
            note.cases += 1
            if len(note.case_ids) < NOTE_CASES and result.case_id not in note.case_ids:
                note.case_ids.append(result.case_id)

    def _score(self, value: float) -> None:
        self.lowest = value if self.lowest is None or value < self.lowest else self.lowest
        self.highest = value if self.highest is None or value > self.highest else self.highest
        if 0.0 <= value <= 1.0:
            if self.in_unit:
                self.unit_bins.add(value)
        else:
            self.in_unit = False

    @property
    def latency_mean(self) -> float | None:
        """Mean latency (None without results)."""
        return self.latency_total / self.results if self.results else None

    @property
    def cost(self) -> float | None:
        """Total cost, None when no result reported one."""
        return self.cost_total if self.costs else None

    def summary(self, cases: CaseCounts, latency: Latencies) -> Summary:
        """The run's :class:`Summary`: this tally's counts and sums with the grouped-by-case
        counts and latency order statistics of the same results (from memory or SQL)."""
        return Summary(
            results=self.results,
            cases=cases.cases,
            k=cases.k,
            counts=self.counts,
            pass_rate=rate(self.counts.passed, self.results),
            pass_at_k=rate(cases.some, cases.cases),
            pass_hat_k=rate(cases.every, cases.cases),
            **rate_intervals(cases),
            latency_p50_s=latency.p50,
            latency_p95_s=latency.p95,
            latency_mean_s=self.latency_mean,
            latency_max_s=latency.max,
            tokens=self.tokens,
            cost=self.cost,
            model_calls=self.model_calls,
            retries=self.retries,
            notes=list(self.notes.values()),
        )

    def evaluator_summaries(self) -> list[EvaluatorSummary]:
        """Per feedback key, in first-seen order."""
        return [tally.summary(by_case=self.repeated) for tally in self.evaluators.values()]

    def tag_summaries(self) -> list[TagSummary]:
        """Per tag, sorted by tag."""
        return [
            TagSummary(tag=tag, counts=tally, pass_rate=rate(tally.passed, tally.total))
            for tag, tally in sorted(self.tags.items())
        ]

    def score_bounds(self) -> tuple[float, float]:
        """``(lo, hi)`` of the score distribution's bins."""
        return histogram_bounds(self.lowest, self.highest, in_unit=self.in_unit,
                                unit_interval=True)  # fmt: skip


def _bump(counts: StatusCounts, result: CaseResult) -> None:
    setattr(counts, result.status, counts.of(result.status) + 1)


__all__ = [
    "BINS",
    "Binner",
    "EvaluatorTally",
    "RunTally",
    "histogram_bounds",
    "numeric_score",
    "rate",
    "rate_intervals",
]
