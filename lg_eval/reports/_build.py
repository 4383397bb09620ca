"""``build_report``: a run held in memory (and its history, a comparison) → one :class:`Report`.

The in-memory path of the report's aggregates; a stored run's are counted in SQL
(:mod:`lg_eval.reports._stored`), and a differential test holds the two equal. A case's
repetitions are read together (grouped by case, in the order cases first appear), as the
store reads them: when some case has several results, the intervals of the pass rate and
of each key's pass rate and mean count cases, not results.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from lg_eval._arguments import validated
from lg_eval.experiments import CaseResult, Comparison, ExperimentRun, ScoreRow, percentile
from lg_eval.reports._model import (
    Bins,
    EvaluatorSummary,
    Report,
    ReportCase,
    RunNote,
    StatusCounts,
    Summary,
    TagSummary,
    TrendPoint,
    no_verdict,
    rate,
)
from lg_eval.stats import MeanSample, RateMoments, clustered_rate_interval, wilson_interval

NOTE_CASES = 3
"""Case ids a run note names (it counts them all)."""
NOTES = 20
"""Distinct notes a run's summary keeps, in first-seen order."""


@validated
def build_report(
    run: ExperimentRun,
    *,
    history: Sequence[ExperimentRun] = (),
    comparison: Comparison | None = None,
) -> Report:
    """The report of ``run``, every result listed.

    ``history``: other stored runs; those of the same dataset (by name) make the trend,
    oldest first, with ``run`` itself marked current. ``comparison``: ``run`` against a
    baseline (:func:`~lg_eval.experiments.compare_runs`).

    Raises:
        InvalidOptionError: ``run`` or an item of ``history`` is no
            :class:`~lg_eval.experiments.ExperimentRun`, or ``comparison`` no
            :class:`~lg_eval.experiments.Comparison`.
    """
    cases: dict[str, list[CaseResult]] = {}
    for result in run.results:
        cases.setdefault(result.case_id, []).append(result)
    for group in cases.values():
        group.sort(key=lambda r: r.repetition)
    numeric = [v for r in run.results for row in r.scores if (v := numeric_score(row)) is not None]
    in_unit = all(0.0 <= v <= 1.0 for v in numeric)
    scores = Bins.spanning(min(numeric, default=None), max(numeric, default=None), unit=in_unit)
    latencies = [r.latency_s for r in run.results]
    latency = Bins.spanning(None, max(latencies, default=None), zero=True)
    return Report(
        info=run.info,
        summary=summary(cases),
        evaluators=evaluators(cases),
        tags=tags(run.results),
        cases=[ReportCase.of(result) for result in run.results],
        score_histogram=scores.binned("numeric scores", numeric),
        latency_histogram=latency.binned("latency (s)", latencies),
        trend=_trend(run, history) if history else [],
        comparison=comparison,
    )


def numeric_score(row: ScoreRow) -> float | None:
    """The row's score as the score distribution counts it: ints and floats, not booleans."""
    score = row.score
    return float(score) if isinstance(score, int | float) and not isinstance(score, bool) else None


def summary(cases: dict[str, list[CaseResult]]) -> Summary:
    """The headline numbers of results grouped by case."""
    results = [result for group in cases.values() for result in group]
    statuses: Counter[str] = Counter(result.status for result in results)
    counts = StatusCounts(**statuses)
    passes = RateMoments()
    for group in cases.values():
        passes = passes.plus(sum(r.status == "passed" for r in group), len(group))
    some = sum(any(r.status == "passed" for r in group) for group in cases.values())
    every = sum(all(r.status == "passed" for r in group) for group in cases.values())
    latencies = [result.latency_s for result in results]
    costs = [result.cost for result in results if result.cost is not None]
    tally = ResultTally()
    tally.add(results)
    return Summary(
        results=len(results),
        cases=len(cases),
        k=max(map(len, cases.values()), default=0),
        counts=counts,
        pass_rate=rate(counts.passed, len(results)),
        pass_at_k=rate(some, len(cases)),
        pass_hat_k=rate(every, len(cases)),
        pass_rate_interval=clustered_rate_interval(passes),
        pass_at_k_interval=wilson_interval(some, len(cases)),
        pass_hat_k_interval=wilson_interval(every, len(cases)),
        latency_p50_s=percentile(latencies, 50),
        latency_p95_s=percentile(latencies, 95),
        latency_mean_s=sum(latencies) / len(latencies) if latencies else None,
        latency_max_s=max(latencies, default=None),
        tokens=sum(result.tokens for result in results),
        cost=sum(costs) if costs else None,
        model_calls=sum(result.model_calls for result in results),
        retries=tally.retries,
        notes=tally.notes(),
    )


class ResultTally:
    """What a report reads from inside each result (its notes, tags and retries), counted
    as the results go by, in run order: its memory grows with the distinct notes (at most
    :data:`NOTES`) and tags, not with the results.

    A sweep tallies the results as it stores them, so its report
    (:func:`~lg_eval.reports.stream_report`'s ``tally``) reads none of them back.
    """

    def __init__(self) -> None:
        self.retries = 0
        """The retries after infrastructure errors, over every result."""
        self._notes: dict[str, RunNote] = {}
        self._tags: dict[str, Counter[str]] = {}

    def add(self, results: Sequence[CaseResult]) -> None:
        """Count ``results``, which come after those counted so far in run order."""
        for result in results:
            self.retries += max(result.attempts - 1, 0)
            for tag in dict.fromkeys(result.tags):
                self._tags.setdefault(tag, Counter())[result.status] += 1
            for text in dict.fromkeys(result.notes):
                note = self._notes.get(text)
                if note is None:
                    if len(self._notes) >= NOTES:
                        continue
                    note = self._notes[text] = RunNote(text=text, cases=0, case_ids=[])
                note.cases += 1
                if len(note.case_ids) < NOTE_CASES and result.case_id not in note.case_ids:
                    note.case_ids.append(result.case_id)

    def notes(self) -> list[RunNote]:
        """The first :data:`NOTES` distinct notes, in the order they first appeared."""
        return [note.model_copy(deep=True) for note in self._notes.values()]

    def tags(self) -> list[TagSummary]:
        """Per tag (sorted), the statuses of the results carrying it."""
        return [
            TagSummary(tag=tag, counts=(n := StatusCounts(**c)), pass_rate=n.pass_rate)
            for tag, c in sorted(self._tags.items())
        ]


def evaluators(cases: dict[str, list[CaseResult]]) -> list[EvaluatorSummary]:
    """Per feedback key, in first-seen order: verdicts and score statistics, the
    intervals over cases when some case has several results."""
    by_case = any(len(group) > 1 for group in cases.values())
    rows: dict[str, list[tuple[str, ScoreRow]]] = {}
    for case_id, group in cases.items():
        for result in group:
            for row in result.scores:
                rows.setdefault(row.key, []).append((case_id, row))
    return [_evaluator(key, keyed, by_case=by_case) for key, keyed in rows.items()]


def _evaluator(key: str, rows: list[tuple[str, ScoreRow]], *, by_case: bool) -> EvaluatorSummary:
    passed = sum(row.passed is True for _, row in rows)
    failed = sum(row.passed is False for _, row in rows)
    verdicts: dict[str, tuple[int, int]] = {}
    sample = MeanSample()
    values = []
    for case_id, row in rows:
        yes, judged = verdicts.get(case_id, (0, 0))
        verdicts[case_id] = (yes + (row.passed is True), judged + (row.passed is not None))
        if row.score is not None and row.error is None:
            values.append(float(row.score))
            sample.add(values[-1], case_id)
    moments = RateMoments()
    for yes, judged in verdicts.values():
        moments = moments.plus(yes, judged)
    return EvaluatorSummary(
        key=key,
        evaluator=rows[0][1].evaluator,
        rows=len(rows),
        passed=passed,
        failed=failed,
        no_verdict=sum(no_verdict(row) for _, row in rows),
        errors=sum(row.error is not None for _, row in rows),
        pass_rate=rate(passed, passed + failed),
        mean=sum(values) / len(values) if values else None,
        min=min(values, default=None),
        max=max(values, default=None),
        pass_rate_interval=(
            clustered_rate_interval(moments)
            if by_case
            else wilson_interval(passed, passed + failed)
        ),
        mean_interval=sample.interval(clustered=by_case),
    )


def tags(results: list[CaseResult]) -> list[TagSummary]:
    """Per tag (sorted), the statuses of the results carrying it."""
    tally = ResultTally()
    tally.add(results)
    return tally.tags()


def _trend(run: ExperimentRun, history: Sequence[ExperimentRun]) -> list[TrendPoint]:
    runs = {r.info.run_id: r for r in history if r.info.dataset == run.info.dataset}
    runs[run.info.run_id] = run
    return [
        TrendPoint(
            run_id=r.info.run_id,
            started_at=r.info.started_at,
            pass_rate=r.pass_rate,
            results=len(r.results),
            current=r.info.run_id == run.info.run_id,
            dataset_hash=r.info.dataset_hash,
        )
        for r in sorted(runs.values(), key=lambda r: r.info.started_at)
    ]
