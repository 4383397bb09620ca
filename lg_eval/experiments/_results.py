"""What an experiment keeps: run records, per-case results, comparisons, and what never
reaches them.

These pydantic models are the contract between the runner (which writes them to the
results store as cases finish), the store (which reads them back, so a resumed or
finished run is the same object) and the reports (which render them: terminal,
Markdown, HTML, JUnit, JSON). Every value is plain JSON data; text in them is kept
verbatim (escaping belongs to each renderer).

What is never stored: :func:`make_redactor` turns a run's ``redact=`` (a ``str -> str``
function, or regular expressions whose matches become ``[REDACTED]``) into one function
that :func:`redacted` applies to every string a result took from a thread;
:func:`scrub_secrets` hides, in a run's stored configuration, any value of an environment
variable named ``*_KEY``, ``*_TOKEN``, ``*_SECRET`` or ``*PASSWORD*``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any, Literal, overload

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    field_serializer,
    model_validator,
)

from lg_eval._feedback import ScoreValue
from lg_eval.errors import InvalidOptionError
from lg_eval.stats import PairedTest

CaseStatus = Literal["passed", "failed", "error", "timeout"]
"""``passed``: every evaluator passed; ``failed``: one did not; ``error``: the case could
not be played or scored (infrastructure, script mismatch, graph error); ``timeout``: it
ran past the per-case timeout and was cancelled."""

RunStatus = Literal["running", "finished", "interrupted"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ScoreRow(_Model):
    """One evaluator's feedback on one case repetition, with its verdict."""

    evaluator: str = Field(description="The evaluator's name (registry name or key).")
    key: str = Field(description="The feedback key.")
    score: ScoreValue = None
    comment: str | None = None
    metadata: dict[str, Any] | None = None
    passed: bool | None = Field(
        default=None, description="The score against its threshold; None: no verdict."
    )
    error: str | None = Field(default=None, description="'Type: message' if it raised.")

    @model_validator(mode="after")
    def _errored_rows_have_no_score(self) -> ScoreRow:
        """A row whose evaluator raised carries no score: whatever number came with the
        error is not a measurement, and every aggregate, comparison and SQL count reads
        the row the same way (an error, no score)."""
        if self.error is not None and self.score is not None:
            self.score = None
        return self


class PlayedTurnRecord(_Model):
    """One turn as it was played: who wrote it, what was sent and what the graph asked or
    answered after it."""

    index: int
    kind: str = Field(description="input, resume, resume_by_node, resume_fn, continue, update.")
    by: str = Field(
        default="script",
        description="Who wrote what was sent: script, user (the simulated user), reviewer "
        "(the simulated reviewer) or recording.",
    )
    sent: Any = Field(default=None, description="The value sent (input, resume value, ...).")
    asked: list[dict[str, Any]] = Field(
        default_factory=list,
        description="The interrupts pending after the turn: {'id', 'path', 'value'} each.",
    )
    error: str | None = None
    reply: str | None = Field(
        default=None,
        description="What the agent answered when the turn ended, as the simulated user read "
        "it (None outside a simulated conversation, and for a turn that asked or raised).",
    )


class SimulationRecord(_Model):
    """A case's simulated conversation: why it ended and what the simulated user's model
    cost, counted apart from the case's ``tokens`` and ``cost`` (the agent's and the
    judges')."""

    stop: str | None = Field(
        default=None,
        description="Why it ended: user (the user said it was done), state (the stop "
        "predicate held), tool_call (the expected call was made), finished (the graph "
        "finished asking nothing), max_turns; None: it did not end (a turn raised).",
    )
    detail: str | None = Field(
        default=None,
        description="The user's last words (not sent), the predicate, the call made, or the "
        "turn limit.",
    )
    user_turns: int = Field(default=0, description="Turns the simulated user wrote.")
    calls: int = Field(default=0, description="The simulated user's model calls.")
    tokens: int = 0
    cost: float | None = None
    latency_s: float = Field(default=0.0, description="Wall time of those calls.")


class CaseResult(_Model):
    """One case × repetition of a run: its status, scores, trajectory and costs."""

    run_id: str
    case_id: str
    repetition: int = 0
    status: CaseStatus
    tags: list[str] = Field(default_factory=list)
    thread_id: str | None = None
    scores: list[ScoreRow] = Field(default_factory=list)
    trajectory: list[list[str]] | None = Field(
        default=None, description="The steps that ran, per turn (GraphTrajectory.steps)."
    )
    expected_trajectory: list[list[str]] | None = None
    expected_tool_calls: list[dict[str, Any]] | None = Field(
        default=None,
        description="The case's expected.tool_calls, {'name', 'args'} each (args None: any).",
    )
    output: str | None = Field(
        default=None,
        description="The answer the thread ended with, as a case's expected.output is compared "
        "with it: the last assistant message without tool calls of the final state, else its "
        "first answer key (lg_eval._inputs.final_answer); None: it gave none.",
    )
    expected_output: str | dict[str, Any] | None = Field(
        default=None,
        description="The case's expected.output: the exact answer, {'equals': text} or "
        "{'contains': [keywords]} (None: the case states none).",
    )
    answers: list[str | None] | None = Field(
        default=None,
        description="What the agent answered, per turn of the thread (as trajectory): the "
        "final answer of a turn that completed (its last assistant message, else the state's "
        "answer key); None for a turn that paused or raised, or that ended on another message.",
    )
    tool_calls: list[dict[str, Any]] | None = Field(
        default=None,
        description="The tool calls in the thread's final messages, in call order: "
        "{'name', 'args', 'id'} each, as it ran: a call a reviewer edited carries the model's "
        "call as 'proposed', one that did not run has 'executed': False (None: the final "
        "state holds no messages).",
    )
    turns: list[PlayedTurnRecord] = Field(default_factory=list)
    simulation: SimulationRecord | None = Field(
        default=None, description="The simulated conversation (None: no simulated user)."
    )
    error: str | None = None
    latency_s: float = Field(default=0.0, description="Wall time of playing and scoring.")
    tokens: int = Field(
        default=0,
        description="Tokens from usage_metadata (thread + judges; the simulated user's are "
        "in simulation).",
    )
    cost: float | None = None
    model_calls: int = 0
    attempts: int = Field(default=1, description="1 + the retries after infrastructure errors.")
    finished_at: datetime | None = None
    notes: list[str] = Field(
        default_factory=list,
        description="What the thread's checkpoints could not tell (the extraction's "
        "warnings), one sentence each; none for what lg_eval itself did (one resume "
        "answering several interrupts).",
    )

    def score_of(self, key: str) -> ScoreValue:
        """The score under ``key`` (None if absent)."""
        return next((row.score for row in self.scores if row.key == key), None)


class RunInfo(_Model):
    """A run's identity and configuration, as stored (URLs redacted, no secrets)."""

    run_id: str
    dataset: str
    dataset_hash: str
    target: str = Field(description="How the target was named (module:attr or a repr).")
    checkpointer: str = Field(description="The checkpointer URL, password redacted.")
    config: dict[str, Any] = Field(
        default_factory=dict,
        description="concurrency, repetitions, timeout, retries, thresholds, fail_under, ...",
    )
    git_commit: str | None = None
    versions: dict[str, str] = Field(default_factory=dict)
    started_at: datetime
    finished_at: datetime | None = None
    status: RunStatus = "running"
    cases: int = Field(default=0, description="Cases × repetitions the run plans.")


class ResultsView(Sequence[CaseResult]):
    """A run's results read from where they are kept each time they are read, never held:
    what :func:`~lg_eval.experiments.run_experiment` returns as ``run.results`` for a stored
    run (:class:`~lg_eval.experiments._store.StoredResults`), so a run of any size leaves
    nothing per case in the process. It iterates, has a length, indexes and slices (a slice
    is a list), compares equal to a list of the same results, dumps and pickles as that
    list, and knows how many passed without reading them."""

    def __init__(self, length: int, passed: int) -> None:
        self._length, self._passed = length, passed

    @property
    def passed(self) -> int:
        """How many of the results passed."""
        return self._passed

    def __iter__(self) -> Iterator[CaseResult]:
        raise NotImplementedError

    def __len__(self) -> int:
        return self._length

    @overload
    def __getitem__(self, index: int) -> CaseResult: ...
    @overload
    def __getitem__(self, index: slice) -> list[CaseResult]: ...
    def __getitem__(self, index: int | slice) -> CaseResult | list[CaseResult]:
        if isinstance(index, slice):
            return list(self)[index]
        position = index + self._length if index < 0 else index
        if not 0 <= position < self._length:
            raise IndexError(f"result index {index} out of range ({self._length} results)")
        for at, result in enumerate(self):
            if at == position:
                return result
        raise IndexError(f"result index {index} out of range")

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ResultsView | list | tuple):
            return len(self) == len(other) and list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __reduce__(self) -> tuple[Any, ...]:
        return list, (list(self),)

    def __repr__(self) -> str:
        return f"<{type(self).__name__}: {self._length} results>"


class ExperimentRun(_Model):
    """A run and its results (finished or as far as it got).

    ``results`` is a list, or for a run :func:`~lg_eval.experiments.run_experiment`
    stored, a :class:`ResultsView` reading them from the store whenever they are read."""

    info: RunInfo
    results: list[CaseResult] = Field(default_factory=list)

    @field_serializer("results", return_type=list[CaseResult])
    def _results_as_list(self, value: Sequence[CaseResult]) -> list[CaseResult]:
        """A view dumps as the list it reads (a list as itself)."""
        return value if isinstance(value, list) else list(value)

    @property
    def pass_rate(self) -> float | None:
        """Passed results over all results (None when there are none)."""
        results: Sequence[CaseResult] = self.results
        if not results:
            return None
        if isinstance(results, ResultsView):
            return results.passed / len(results)
        return sum(r.status == "passed" for r in results) / len(results)

    @property
    def gate_failed(self) -> bool:
        """Whether the pass rate is below the run's ``fail_under`` (``info.config``); a run
        with a gate and no results fails it. The CLI turns True into exit code 1."""
        fail_under = self.info.config.get("fail_under")
        if fail_under is None:
            return False
        rate = self.pass_rate
        return rate is None or rate < float(fail_under)


class CaseChange(_Model):
    """How one case (× repetition) differs between two runs."""

    case_id: str
    repetition: int = 0
    change: Literal["regressed", "improved", "unchanged", "added", "removed"]
    status_a: CaseStatus | None = None
    status_b: CaseStatus | None = None
    score_deltas: dict[str, float] = Field(
        default_factory=dict, description="Per feedback key: score in B minus score in A."
    )
    latency_delta_s: float | None = None


class Comparison(_Model):
    """Run B against run A: per-case changes and per-evaluator deltas."""

    run_a: str
    run_b: str
    tolerance: float = 0.0
    cases: list[CaseChange] = Field(default_factory=list)
    evaluator_deltas: dict[str, float] = Field(
        default_factory=dict, description="Per feedback key: mean score in B minus in A."
    )
    pass_rate_a: float | None = None
    pass_rate_b: float | None = None
    latency_p50_delta_s: float | None = None
    cost_delta: float | None = None
    alpha: float = Field(default=0.05, description="The significance level of ``tests``.")
    tests: list[PairedTest] = Field(
        default_factory=list,
        description="Paired tests over the repetitions: pooled first, then per case "
        "(lg_eval.experiments.paired_tests).",
    )

    @property
    def regressed(self) -> bool:
        """Whether any case regressed beyond the tolerance."""
        return any(change.change == "regressed" for change in self.cases)

    @property
    def significant_regression(self) -> bool:
        """Whether a paired test finds B significantly worse than A: pooled over the cases,
        or for one case after the false-discovery adjustment."""
        return any(test.regression for test in self.tests)


# --------------------------------------------------------------------------- what is never stored

Redactor = Callable[[str], str]
REDACTED = "[REDACTED]"
SECRET_NAME = re.compile(r"(_KEY|_TOKEN|_SECRET)$|PASSWORD", re.IGNORECASE)
_MIN_SECRET = 4  # shorter values would scrub ordinary words


RedactOption = Redactor | Sequence[str | re.Pattern[str]] | None
"""What ``redact=`` takes: a ``str -> str`` function, regex patterns, or None."""


def make_redactor(redact: Redactor | Sequence[str | re.Pattern[str]] | None) -> Redactor | None:
    """One ``str -> str`` function for ``redact=`` (None: nothing is redacted)."""
    if redact is None:
        return None
    if callable(redact):
        return redact
    if isinstance(redact, str) or not isinstance(redact, Sequence):
        raise InvalidOptionError(
            "redact= takes a function str -> str or a list of regular expressions, "
            f"not {type(redact).__name__}."
        )
    try:
        patterns = [re.compile(p) if isinstance(p, str) else p for p in redact]
    except re.error as exc:
        raise InvalidOptionError(f"redact= has an invalid regular expression: {exc}.") from exc
    if not patterns:
        return None
    combined = re.compile("|".join(f"(?:{p.pattern})" for p in patterns))
    return lambda text: combined.sub(REDACTED, text)


def redact_strings(value: Any, redactor: Redactor | None) -> Any:
    """``value`` (JSON-like) with ``redactor`` applied to every string in it, keys included."""
    if redactor is None:
        return value
    if isinstance(value, str):
        return redactor(value)
    if isinstance(value, Mapping):
        return {
            redactor(k) if isinstance(k, str) else k: redact_strings(v, redactor)
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [redact_strings(item, redactor) for item in value]
    return value


def secret_values(environ: Mapping[str, str] | None = None) -> list[str]:
    """Values of environment variables whose names mark them as secrets, longest first."""
    env = os.environ if environ is None else environ
    found = {v for k, v in env.items() if SECRET_NAME.search(k) and len(v) >= _MIN_SECRET}
    return sorted(found, key=len, reverse=True)


def scrub_secrets(value: Any, environ: Mapping[str, str] | None = None) -> Any:
    """``value`` with every secret environment value in its strings replaced by ``***``."""
    secrets = secret_values(environ)
    if not secrets:
        return value

    def scrub(text: str) -> str:
        for secret in secrets:
            text = text.replace(secret, "***")
        return text

    return redact_strings(value, scrub)


def redacted(result: CaseResult, redactor: Redactor | None) -> CaseResult:
    """``result`` with ``redactor`` applied to every string taken from the thread (and to
    the expectations shown beside the agent's answers and calls: a case's expected answer
    holds what the thread says)."""
    if redactor is None:
        return result
    data = result.model_dump(mode="json")
    fields = ("error", "turns", "output", "expected_output", "answers", "notes")
    for field in (*fields, "expected_tool_calls"):
        data[field] = redact_strings(data[field], redactor)
    for row in data["scores"]:
        for field in ("comment", "metadata", "error"):
            row[field] = redact_strings(row[field], redactor)
    return CaseResult.model_validate(data)
