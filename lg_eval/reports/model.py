"""The report model: everything a rendering shows, computed once from a run.

A report is data first (pydantic_evals' ``EvaluationReport`` idea): :func:`build_report`
turns an :class:`~lg_eval.experiments.ExperimentRun` into a :class:`Report` holding every
aggregate, per-case detail, trajectory difference, chart bin and trend point; the
terminal, Markdown, HTML, JUnit and JSON renderers only lay it out. No renderer counts,
averages or compares anything itself, so the five formats cannot disagree.

Text from the run (case ids, tags, comments, sent values, interrupt payloads) is kept
verbatim here; escaping belongs to each renderer. The JSON report is this model dumped
as it is (``lg_eval.report/2``), so every field added here reaches JSON, and the shipped
JSON Schema (``lg_eval/reports/schema/report-2.json``) is generated from it.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from lg_eval.arguments import checked_instance
from lg_eval.experiments.results import CaseChange, CaseStatus, RunInfo, SimulationRecord
from lg_eval.feedback import ScoreValue
from lg_eval.labels import Calibration
from lg_eval.reports._text import value_text
from lg_eval.stats import Interval, PairedTest

SCHEMA: Literal["lg_eval.report/2"] = "lg_eval.report/2"
"""The version of the JSON report (the ``schema`` member of every document)."""

STATUSES: tuple[CaseStatus, ...] = ("passed", "failed", "error", "timeout")


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

    def of(self, status: CaseStatus) -> int:
        """The count for ``status``."""
        count: int = getattr(self, status)
        return count


class RunNote(_Model):
    """A note the run's cases carry (:attr:`CaseResult.notes`): what their threads'
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


class Step(_Model):
    """One node of a trajectory turn; ``differs`` marks it as outside the common sequence."""

    name: str
    differs: bool = False


class TurnDiff(_Model):
    """Expected against actual steps of one turn."""

    turn: int
    expected: list[Step]
    actual: list[Step]
    match: bool
    first_difference: int | None = Field(
        default=None, description="The first position where the two sequences differ."
    )
    missing: list[str] = Field(default_factory=list, description="Expected, did not run.")
    unexpected: list[str] = Field(default_factory=list, description="Ran, not expected.")
    reason: str | None = None


class ScoreLine(_Model):
    """One evaluator's feedback on a case, as shown."""

    key: str
    evaluator: str
    score: ScoreValue = None
    passed: bool | None = None
    comment: str | None = Field(default=None, description="The reason (a judge's reasoning).")
    metadata: dict[str, Any] | None = Field(
        default=None, description="As the evaluator returned it (a judge's model and usage)."
    )
    error: str | None = None
    judge: bool = Field(default=False, description="Feedback of an LLM judge (its reasoning).")

    @property
    def no_verdict(self) -> bool:
        """Neither passed nor failed, and did not raise: the evaluator could not judge."""
        return self.passed is None and self.error is None

    @property
    def reason(self) -> str:
        """Why the feedback is what it is: the error, else the comment (``no reason given``)."""
        return self.error or self.comment or "no reason given"


class AskedInterrupt(_Model):
    """An interrupt pending after a played turn: its id, the asking node, its payload."""

    id: str | None = None
    path: str | None = Field(default=None, description="The node, ':'-joined inside subgraphs.")
    value: Any = Field(default=None, description="The payload passed to interrupt(), as stored.")

    @property
    def shown(self) -> str:
        """The payload as text (strings as they are, the rest as compact JSON)."""
        return value_text(self.value)


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


class PlayedTurn(_Model):
    """A human turn as it was played: who wrote it, what was sent, what the graph asked or
    answered."""

    index: int
    kind: str = Field(description="input, resume, resume_by_node, resume_fn, continue, update.")
    by: str = Field(
        default="script",
        description="Who wrote what was sent: script, user (the simulated user), reviewer or "
        "recording.",
    )
    sent: Any = Field(
        default=None,
        description="What was sent, as stored: the input, the human's answer (resume value "
        "or {interrupt id: value}), the state edit ({values, as_node}); None for continue.",
    )
    asked: list[AskedInterrupt] = Field(default_factory=list)
    error: str | None = None
    reply: str | None = Field(
        default=None,
        description="What the agent answered when the turn ended, as the simulated user read "
        "it (None outside a simulated conversation).",
    )

    @property
    def sent_text(self) -> str | None:
        """What was sent, as text (None when nothing was)."""
        return None if self.sent is None else value_text(self.sent)

    @property
    def speaker(self) -> str:
        """Who wrote the turn, for a reader (``simulated user``, ``reviewer``, ...)."""
        return SPEAKERS.get(self.by, self.by)

    @property
    def kind_label(self) -> str:
        """The kind, with who wrote the turn when the script did not (``input (simulated
        user)``): the reports' turn tables."""
        return self.kind if self.by == "script" else f"{self.kind} ({self.speaker})"


class CaseReport(_Model):
    """One case × repetition with everything a reader needs to see why it ended so."""

    index: int = Field(description="Position in the report (stable anchors, no content).")
    run_id: str
    case_id: str
    repetition: int
    status: CaseStatus
    tags: list[str]
    scores: list[ScoreLine]
    latency_s: float
    tokens: int
    cost: float | None
    model_calls: int = 0
    attempts: int
    thread_id: str | None
    error: str | None
    finished_at: datetime | None = None
    trajectory: list[list[str]] | None = Field(
        default=None, description="The nodes that ran, per turn (None: not extracted)."
    )
    trajectory_flat: list[str] | None = Field(
        default=None, description="The same nodes as one sequence, turn after turn."
    )
    reference: list[list[str]] | None = Field(
        default=None, description="The expected nodes per turn (None: the case has none)."
    )
    expected_tool_calls: list[dict[str, Any]] | None = Field(
        default=None, description="The case's expected tool calls (None: it states none)."
    )
    tool_calls: list[dict[str, Any]] | None = Field(
        default=None,
        description="The tool calls of the final messages: {name, args, id}, as they ran; "
        "an edited call keeps the model's call as 'proposed', one that did not run has "
        "'executed': false.",
    )
    output: str | None = Field(
        default=None,
        description="What the agent said last: the answer the case's expected.output is "
        "compared with (None: the thread ended without one).",
    )
    expected_output: str | dict[str, Any] | None = Field(
        default=None,
        description="The case's expected.output: the exact answer, {'equals': text} or "
        "{'contains': [keywords]} (None: the case states none).",
    )
    answers: list[str | None] = Field(
        default_factory=list,
        description="What the agent answered per turn of the thread (as trajectory); None "
        "for a turn that paused, raised or ended on another message.",
    )
    diff: list[TurnDiff] = Field(description="Per turn; empty when either side is unknown.")
    turns: list[PlayedTurn]
    simulation: SimulationRecord | None = Field(
        default=None,
        description="The simulated conversation: why it ended and what the simulated user's "
        "model cost (None: the case has no simulated user).",
    )

    @property
    def stop_text(self) -> str:
        """Why the simulated conversation ended, for a reader."""
        stop = self.simulation.stop if self.simulation is not None else None
        return STOPS.get(stop or "", stop or "it did not end (a turn raised)")

    @property
    def expected_kind(self) -> Literal["equals", "contains"] | None:
        """How :attr:`expected_output` is checked: the answer ``equals`` it, or ``contains``
        every keyword of it (None: the case expects no output)."""
        expected = self.expected_output
        if expected is None:
            return None
        return "contains" if isinstance(expected, dict) and "contains" in expected else "equals"

    @property
    def expected_text(self) -> str | None:
        """:attr:`expected_output` as the reader compares it with :attr:`output`: the exact
        answer, or the keywords quoted and comma-separated."""
        expected = self.expected_output
        if isinstance(expected, dict):
            if "contains" in expected:
                return ", ".join(json.dumps(k, ensure_ascii=False) for k in expected["contains"])
            return value_text(expected.get("equals"))
        return expected

    @property
    def expected_label(self) -> str:
        """The heading of the expected side: ``expected (exact answer)`` or ``expected
        (contains every keyword)``."""
        kind = self.expected_kind
        if kind is None:
            return "expected"
        return (
            "expected (contains every keyword)" if kind == "contains" else "expected (exact answer)"
        )

    @property
    def turn_answers(self) -> list[tuple[int, str]]:
        """``(turn number from 1, answer)`` of every turn that answered, when a turn before
        the last one did (else the only answer is the last turn's, :attr:`output`)."""
        answered = [(n, text) for n, text in enumerate(self.answers, 1) if text is not None]
        if all(n == len(self.answers) for n, _ in answered):
            return []
        return answered

    @property
    def shows_answer(self) -> bool:
        """Whether there is an answer to show: one was expected, or the agent gave one."""
        said = self.output is not None or any(text is not None for text in self.answers)
        return self.expected_output is not None or said

    @property
    def score_map(self) -> dict[str, ScoreValue]:
        """``{key: score}`` of this repetition."""
        return {line.key: line.score for line in self.scores}

    @property
    def failing(self) -> list[ScoreLine]:
        """The feedback that failed or raised."""
        return [line for line in self.scores if line.passed is False or line.error]

    @property
    def no_verdicts(self) -> list[ScoreLine]:
        """The feedback without a verdict (shown as ``no verdict`` with its reason)."""
        return [line for line in self.scores if line.no_verdict]

    @property
    def failing_checks(self) -> list[ScoreLine]:
        """The failing feedback other than judge reasoning (shown with :attr:`judge_notes`)."""
        notes = self.judge_notes
        return [line for line in self.failing if line not in notes]

    @property
    def judge_notes(self) -> list[ScoreLine]:
        """The LLM judges' feedback that carries reasoning."""
        return [line for line in self.scores if line.judge and line.comment]

    @property
    def label(self) -> str:
        """``case_id`` or ``case_id#rep`` when the run repeats cases."""
        return self.case_id if self.repetition == 0 else f"{self.case_id}#{self.repetition}"


class ComparisonReport(_Model):
    """Run B against run A, grouped for reading."""

    run_a: str
    run_b: str
    tolerance: float
    pass_rate_a: float | None
    pass_rate_b: float | None
    regressions: list[CaseChange]
    improvements: list[CaseChange]
    added: list[CaseChange]
    removed: list[CaseChange]
    unchanged: int
    evaluator_deltas: dict[str, float]
    latency_p50_delta_s: float | None
    cost_delta: float | None
    alpha: float = 0.05
    tests: list[PairedTest] = Field(
        default_factory=list, description="Paired tests: pooled over cases first, then per case."
    )

    @property
    def pooled_tests(self) -> list[PairedTest]:
        """The tests over every case (status first, then each feedback key)."""
        return [test for test in self.tests if test.case_id is None]

    @property
    def significant_cases(self) -> list[PairedTest]:
        """The per-case tests significant after the false-discovery adjustment."""
        return [test for test in self.tests if test.case_id is not None and test.significant]


class Report(_Model):
    """One run, aggregated: the single source of every rendering (and the JSON report)."""

    model_config = ConfigDict(extra="forbid", validate_by_name=True, validate_by_alias=True)

    schema_version: Literal["lg_eval.report/2"] = Field(
        default=SCHEMA, alias="schema", description="The JSON report's version."
    )
    info: RunInfo
    summary: Summary
    evaluators: list[EvaluatorSummary]
    tags: list[TagSummary]
    cases: list[CaseReport]
    score_histogram: Histogram
    latency_histogram: Histogram
    trend: list[TrendPoint] = Field(
        default_factory=list, description="Runs of the same dataset, oldest first (with history)."
    )
    comparison: ComparisonReport | None = None
    cases_total: int | None = Field(
        default=None,
        description="Set when ``cases`` holds only the worst results of a big run "
        "(``stream_report``): how many results the run has. None: every result is listed.",
    )
    calibration: list[Calibration] = Field(
        default_factory=list,
        description="Per labelled feedback key, its agreement with people's labels in the "
        "store (lg_eval.reports.calibration.with_calibration); empty: none asked or labelled.",
    )

    @property
    def failures(self) -> list[CaseReport]:
        """Cases that did not pass (failed, error, timeout)."""
        return [case for case in self.cases if case.status != "passed"]

    @property
    def all_tags(self) -> list[str]:
        """Every tag, in the order :attr:`tags` lists them."""
        return [summary.tag for summary in self.tags]


def checked_report(value: object) -> Report:
    """``value`` if it is a :class:`Report`, else an error naming the argument."""
    return checked_instance(value, Report, "report", "a Report (build_report or stream_report)")


__all__ = [
    "SCHEMA",
    "STATUSES",
    "AskedInterrupt",
    "CaseReport",
    "ComparisonReport",
    "EvaluatorSummary",
    "Histogram",
    "PlayedTurn",
    "Report",
    "RunNote",
    "ScoreLine",
    "StatusCounts",
    "Step",
    "Summary",
    "TagSummary",
    "TrendPoint",
    "TurnDiff",
    "checked_report",
]
