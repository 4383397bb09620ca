"""The report model: a run's stored results, and what is computed from them once.

A report is data first (pydantic_evals' ``EvaluationReport`` idea). Its cases are the
results as the store keeps them (:class:`~lg_eval.experiments.CaseResult`), each beside
the one thing computed per case, its trajectory difference (:class:`ReportCase`); around
them the run's aggregates (:class:`Summary`, per evaluator, per tag, two distributions,
the trend) and the comparison against a baseline as
:func:`~lg_eval.experiments.compare_runs` made it. The renderers lay it out and count
nothing themselves, so the five formats cannot disagree.

The aggregates come from one of two paths: in memory for a run held whole
(:func:`~lg_eval.reports.build_report`), in SQL for a stored one
(:func:`~lg_eval.reports.stream_report`, whose queries the viewer shares).

Text from the run is kept verbatim; escaping belongs to each renderer. The JSON report is
this model dumped as it is (``lg_eval.report/3``), and its shipped JSON Schema
(``lg_eval/reports/schema/report-3.json``) is generated from it.

The report's calibration (how far people agree with each judge whose score it shows):
:func:`with_calibration` adds to a report the :class:`~lg_eval.labels.Calibration` of each
of its feedback keys that people have labelled in the store (every label of the key, over
every run: the judge's record, not this run's); each rendering then shows, beside the key's
score, its kappa and the labels behind it (:func:`agreement_text`), and a section with the
agreement and the disagreements, the judge's reasoning beside the person's
(:func:`shown_disagreements`, the first :data:`SHOWN` of each key).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from datetime import datetime
from typing import Literal, NamedTuple, get_args

from pydantic import BaseModel, ConfigDict, Field

from lg_eval._feedback import ScoreValue
from lg_eval.experiments import (
    CaseChange,
    CaseResult,
    Comparison,
    PlayedTurnRecord,
    ResultStore,
    RunInfo,
    ScoreRow,
)
from lg_eval.labels import Calibration, Disagreement, calibrate, labelled_keys
from lg_eval.reports._text import TurnDiff, diff_turns, sides, value_text
from lg_eval.stats import Interval, PairedTest

SCHEMA: Literal["lg_eval.report/3"] = "lg_eval.report/3"
"""The version of the JSON report (the ``schema`` member of every document)."""

STATUSES: tuple[str, ...] = get_args(CaseResult.model_fields["status"].annotation)
"""A result's statuses: passed, failed, error, timeout."""
BINS = 10
"""Bins of every histogram."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class StatusCounts(_Model):
    """How many case repetitions ended in each status."""

    passed: int = 0
    failed: int = 0
    error: int = 0
    timeout: int = 0

    @property
    def total(self) -> int:
        """All counted repetitions."""
        return self.passed + self.failed + self.error + self.timeout

    def of(self, status: str) -> int:
        """The count for ``status``."""
        count: int = getattr(self, status)
        return count

    @property
    def pass_rate(self) -> float | None:
        """Passed over all counted (None when none is)."""
        return rate(self.passed, self.total)


class RunNote(_Model):
    """A note the run's cases carry (``CaseResult.notes``): what their threads'
    checkpoints could not tell, said once for the run."""

    text: str
    cases: int = Field(description="The case repetitions carrying it.")
    case_ids: list[str] = Field(description="The first few of them (at most 3).")


class Summary(_Model):
    """The run's headline numbers."""

    results: int = Field(description="Case × repetition results in the run.")
    cases: int = Field(description="Distinct case ids.")
    k: int = Field(description="Repetitions per case (the most any case has).")
    counts: StatusCounts
    pass_rate: float | None = Field(description="Passed results over all results.")
    pass_at_k: float | None = Field(description="Cases with at least one passed repetition.")
    pass_hat_k: float | None = Field(description="Cases whose every repetition passed (pass^k).")
    pass_rate_interval: Interval | None = Field(
        default=None,
        description="95% interval of pass_rate: Wilson over results; with repetitions,"
        " over cases (cluster_wilson).",
    )
    pass_at_k_interval: Interval | None = Field(
        default=None, description="95% Wilson interval of pass_at_k (over cases)."
    )
    pass_hat_k_interval: Interval | None = Field(
        default=None, description="95% Wilson interval of pass_hat_k (over cases)."
    )
    latency_p50_s: float | None = None
    latency_p95_s: float | None = None
    latency_mean_s: float | None = None
    latency_max_s: float | None = None
    tokens: int = 0
    cost: float | None = Field(default=None, description="None when no result reports a cost.")
    model_calls: int = 0
    retries: int = Field(default=0, description="Attempts beyond the first, over all results.")
    notes: list[RunNote] = Field(
        default_factory=list, description="The cases' notes, each once, in first-seen order."
    )


class EvaluatorSummary(_Model):
    """One feedback key across the run: verdicts and score statistics."""

    key: str
    evaluator: str
    rows: int
    passed: int = 0
    failed: int = 0
    no_verdict: int = Field(default=0, description="Rows without a verdict and without error.")
    errors: int = 0
    pass_rate: float | None = Field(default=None, description="passed / (passed + failed).")
    mean: float | None = Field(default=None, description="Over numeric scores; true counts 1.")
    min: float | None = None
    max: float | None = None
    pass_rate_interval: Interval | None = Field(
        default=None,
        description="95% interval of pass_rate: Wilson; over cases when a case has several"
        " rows (cluster_wilson).",
    )
    mean_interval: Interval | None = Field(
        default=None,
        description="95% interval of mean: seeded bootstrap (normal past 1000); over cases"
        " when a case has several scores (cluster_bootstrap, cluster_normal).",
    )


class TagSummary(_Model):
    """The results carrying one tag."""

    tag: str
    counts: StatusCounts
    pass_rate: float | None


class Histogram(_Model):
    """Equal-width bins over ``[lo, hi]``; a value equal to ``hi`` falls in the last bin."""

    label: str
    lo: float
    hi: float
    counts: list[int]

    @property
    def edges(self) -> list[float]:
        """The ``len(counts) + 1`` bin edges."""
        width = (self.hi - self.lo) / len(self.counts)
        return [self.lo + width * i for i in range(len(self.counts) + 1)]


class Bins(NamedTuple):
    """:data:`BINS` equal-width bins over ``[lo, hi]``: the one rule placing a value in a
    bin, which the SQL path writes as SQL (:attr:`scale`)."""

    lo: float
    hi: float

    @classmethod
    def spanning(
        cls, lowest: float | None, highest: float | None, *, unit: bool = False, zero: bool = False
    ) -> Bins:
        """The bins of values from ``lowest`` to ``highest`` (None: no values): over
        [0, 1] when ``unit`` (scores that all lie there), from 0 when ``zero`` (latencies).
        An empty or single-valued range is widened so every bin has a width."""
        if unit:
            lo, hi = 0.0, 1.0
        else:
            lo = 0.0 if zero or lowest is None else lowest
            hi = 1.0 if highest is None else highest
        if not (hi - lo) / BINS > 0:  # empty, one value, or a span too small to split
            lo, hi = (0.0, max(hi, 1.0)) if zero else (lo - 0.5, hi + 0.5)
        return cls(lo, hi)

    @property
    def scale(self) -> tuple[float, float, float]:
        """``(factor, offset, width)``: a value's bin is ``(value * factor - offset) /
        width``, cut to a whole bin; a span wider than the largest float is measured in
        halves, which fit."""
        width = (self.hi - self.lo) / BINS
        if math.isfinite(width):
            return 1.0, self.lo, width
        return 0.5, self.lo / 2, self.hi / 2 / BINS - self.lo / 2 / BINS

    def place(self, value: float) -> int:
        """The bin of ``value`` (which lies in ``[lo, hi]``)."""
        factor, offset, width = self.scale
        at = value * factor - offset
        return 0 if at < width else min(int(at / width), BINS - 1)

    def binned(self, label: str, values: Iterable[float]) -> Histogram:
        """The histogram of ``values`` (which lie in ``[lo, hi]``)."""
        return self.histogram(label, ((self.place(value), 1) for value in values))

    def histogram(self, label: str, counts: Iterable[tuple[int, int]]) -> Histogram:
        """The histogram of ``(bin, count)`` pairs (a bin may come more than once)."""
        totals = [0] * BINS
        for at, count in counts:
            totals[min(max(at, 0), BINS - 1)] += count
        return Histogram(label=label, lo=self.lo, hi=self.hi, counts=totals)


class TrendPoint(_Model):
    """One stored run of the same dataset, for the trend line."""

    run_id: str
    started_at: datetime
    pass_rate: float | None
    results: int
    current: bool = False
    dataset_hash: str | None = Field(
        default=None,
        description="The dataset's hash in that run: where it changes, the cases changed, "
        "and the trend is not one line across it.",
    )


# --------------------------------------------------------------------------- per case

SPEAKERS = {
    "script": "script",
    "user": "simulated user",
    "reviewer": "reviewer",
    "recording": "recording",
}
"""How each writer of a turn is named to a reader."""
STOPS = {
    "user": "the user said it was done",
    "state": "the stop predicate held",
    "tool_call": "the expected tool call was made",
    "finished": "the graph finished asking nothing",
    "max_turns": "the turn limit was reached",
}
"""Why a simulated conversation ended, for a reader."""


def is_judge(row: ScoreRow) -> bool:
    """Feedback of an LLM judge: lg_eval's judges record the model and its usage on every
    feedback they return."""
    meta = row.metadata or {}
    return "model" in meta and "usage" in meta


def no_verdict(row: ScoreRow) -> bool:
    """Neither passed nor failed, and did not raise: the evaluator could not judge."""
    return row.passed is None and row.error is None


def reason(row: ScoreRow) -> str:
    """Why the feedback is what it is: the error, else the comment (``no reason given``)."""
    return row.error or row.comment or "no reason given"


def speaker(turn: PlayedTurnRecord) -> str:
    """Who wrote the turn, for a reader (``simulated user``, ``reviewer``, ...)."""
    return SPEAKERS.get(turn.by, turn.by)


def kind_label(turn: PlayedTurnRecord) -> str:
    """The turn's kind, with who wrote it when the script did not (``input (simulated
    user)``): the reports' turn tables."""
    return turn.kind if turn.by == "script" else f"{turn.kind} ({speaker(turn)})"


class ReportCase(_Model):
    """One case × repetition: the stored result, and its trajectory difference."""

    result: CaseResult
    diff: list[TurnDiff] = Field(
        default_factory=list,
        description="Expected against actual steps, per turn; empty when either side is unknown.",
    )

    @classmethod
    def of(cls, result: CaseResult) -> ReportCase:
        """``result`` with its difference from the reference (:func:`sides`)."""
        both = sides(result)
        return cls(result=result, diff=diff_turns(*both) if both else [])

    @property
    def label(self) -> str:
        """``case_id``, or ``case_id#rep`` for a repetition after the first."""
        result = self.result
        return result.case_id if result.repetition == 0 else f"{result.case_id}#{result.repetition}"

    @property
    def trajectory(self) -> list[list[str]] | None:
        """The nodes that ran per turn: the result's, else a trajectory feedback's."""
        if self.result.trajectory is not None:
            return self.result.trajectory
        both = sides(self.result)
        return both[1] if both else None

    @property
    def failing(self) -> list[ScoreRow]:
        """The feedback that failed or raised."""
        return [row for row in self.result.scores if row.passed is False or row.error]

    @property
    def no_verdicts(self) -> list[ScoreRow]:
        """The feedback without a verdict (shown as ``no verdict`` with its reason)."""
        return [row for row in self.result.scores if no_verdict(row)]

    @property
    def judge_notes(self) -> list[ScoreRow]:
        """The LLM judges' feedback that carries reasoning."""
        return [row for row in self.result.scores if is_judge(row) and row.comment]

    @property
    def failing_checks(self) -> list[ScoreRow]:
        """The failing feedback other than judge reasoning (shown with :attr:`judge_notes`)."""
        notes = self.judge_notes
        return [row for row in self.failing if row not in notes]

    @property
    def score_map(self) -> dict[str, ScoreValue]:
        """``{key: score}`` of this repetition."""
        return {row.key: row.score for row in self.result.scores}

    @property
    def stop_text(self) -> str:
        """Why the simulated conversation ended, for a reader."""
        simulation = self.result.simulation
        stop = simulation.stop if simulation is not None else None
        return STOPS.get(stop or "", stop or "it did not end (a turn raised)")

    @property
    def expected_text(self) -> str | None:
        """The case's expected output as the reader compares it with the answer: the exact
        answer, or the keywords quoted and comma-separated (None: it expects none)."""
        expected = self.result.expected_output
        if isinstance(expected, dict):
            if "contains" in expected:
                return ", ".join(json.dumps(k, ensure_ascii=False) for k in expected["contains"])
            return value_text(expected.get("equals"))
        return expected

    @property
    def expected_label(self) -> str:
        """The heading of the expected side: ``expected (exact answer)`` or ``expected
        (contains every keyword)``."""
        expected = self.result.expected_output
        if expected is None:
            return "expected"
        if isinstance(expected, dict) and "contains" in expected:
            return "expected (contains every keyword)"
        return "expected (exact answer)"

    @property
    def turn_answers(self) -> list[tuple[int, str]]:
        """``(turn number from 1, answer)`` of every turn that answered, when a turn before
        the last one did (else the only answer is the last turn's, the result's output)."""
        answers = self.result.answers or []
        answered = [(n, text) for n, text in enumerate(answers, 1) if text is not None]
        if all(n == len(answers) for n, _ in answered):
            return []
        return answered

    @property
    def shows_answer(self) -> bool:
        """Whether there is an answer to show: one was expected, or the agent gave one."""
        result = self.result
        said = result.output is not None or any(t is not None for t in result.answers or [])
        return result.expected_output is not None or said


# --------------------------------------------------------------------------- comparison

CHANGED = ("regressed", "improved", "added", "removed")
"""The changes a comparison lists, in the order it lists them (``unchanged`` is counted)."""


def changed(comparison: Comparison) -> list[CaseChange]:
    """The cases that changed: regressions, improvements, added, then removed."""
    return sorted(
        (c for c in comparison.cases if c.change != "unchanged"),
        key=lambda c: CHANGED.index(c.change),
    )


def change_counts(comparison: Comparison) -> dict[str, int]:
    """Cases per change (each of :data:`CHANGED` and ``unchanged``, 0 if none)."""
    counts = dict.fromkeys((*CHANGED, "unchanged"), 0)
    for case in comparison.cases:
        counts[case.change] += 1
    return counts


def pooled_tests(comparison: Comparison) -> list[PairedTest]:
    """The paired tests over every case (status first, then each feedback key)."""
    return [test for test in comparison.tests if test.case_id is None]


def significant_cases(comparison: Comparison) -> list[PairedTest]:
    """The per-case tests significant after the false-discovery adjustment."""
    return [test for test in comparison.tests if test.case_id is not None and test.significant]


# --------------------------------------------------------------------------- the report


class Report(_Model):
    """One run, aggregated: the single source of every rendering (and the JSON report)."""

    model_config = ConfigDict(extra="forbid", validate_by_name=True, validate_by_alias=True)

    schema_version: Literal["lg_eval.report/3"] = Field(
        default=SCHEMA, alias="schema", description="The JSON report's version."
    )
    info: RunInfo
    summary: Summary
    evaluators: list[EvaluatorSummary]
    tags: list[TagSummary]
    cases: list[ReportCase]
    score_histogram: Histogram
    latency_histogram: Histogram
    trend: list[TrendPoint] = Field(
        default_factory=list, description="Runs of the same dataset, oldest first (with history)."
    )
    comparison: Comparison | None = Field(
        default=None, description="This run (B) against a baseline (A), as compare_runs made it."
    )
    cases_total: int | None = Field(
        default=None,
        description="Set when ``cases`` holds only the worst results of a run "
        "(``stream_report``): how many results the run has. None: every result is listed.",
    )
    calibration: list[Calibration] = Field(
        default_factory=list,
        description="Per labelled feedback key, its agreement with people's labels in the "
        "store (``with_calibration``); empty: none asked or labelled.",
    )

    @property
    def failures(self) -> list[ReportCase]:
        """Cases that did not pass (failed, error, timeout)."""
        return [case for case in self.cases if case.result.status != "passed"]


def rate(part: int, whole: int) -> float | None:
    """``part / whole``, None when ``whole`` is 0."""
    return part / whole if whole else None


SHOWN = 10
"""Disagreements a report lists per key (the JSON report holds every one)."""


def with_calibration(report: Report, store: ResultStore) -> Report:
    """``report`` with the calibration of each of its keys labelled in ``store``."""
    labelled = labelled_keys(store)
    found = [calibrate(store, e.key) for e in report.evaluators if e.key in labelled]
    return report.model_copy(update={"calibration": found})


def calibration_of(report: Report, key: str) -> Calibration | None:
    """The calibration of ``key`` in ``report`` (None: not labelled)."""
    return next((c for c in report.calibration if c.key == key), None)


def agreement_text(report: Report, key: str) -> str:
    """``κ 0.72 [0.55, 0.84] on 120 labelled cases`` for a labelled key, else ``–``."""
    found = calibration_of(report, key)
    return "–" if found is None else found.summary()


def shown_disagreements(calibration: Calibration) -> list[Disagreement]:
    """The disagreements a rendering lists (the first :data:`SHOWN`)."""
    return calibration.disagreements[:SHOWN]


def verdict_word(verdict: bool) -> str:
    """``pass`` or ``fail``."""
    return "pass" if verdict else "fail"
