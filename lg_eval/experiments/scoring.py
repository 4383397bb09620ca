"""How a case is scored: its evaluators, the built-in checks, what they read, and verdicts.

* :func:`case_evaluators`: the case's evaluators (else the dataset's), resolved by
  registry name or, for a dataset that allows code, ``module:attr``; then a
  built-in check for each expectation no listed evaluator reads (trajectory →
  ``graph_trajectory_strict_match``; tool calls → in-order tool sequence with
  partial args; output → exact match or keywords; ``max_steps`` → a step cap).
* :func:`reference_of`: the case's expectations as the ``reference_outputs`` dict.
* :func:`case_outputs`: the thread as ``{"trajectory", "thread", "messages", "output"}``,
  so graph, tool-call and text evaluators each find their field.
* :func:`score_rows`: feedback to :class:`ScoreRow` with its pass/fail verdict.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage
from pydantic_core import to_jsonable_python

from lg_eval.errors import InvalidOptionError, TrajectoryFormatError
from lg_eval.evaluator import Evaluator, as_evaluator, make_evaluator
from lg_eval.evaluators import (
    create_keywords_evaluator,
    create_text_evaluator,
    create_tool_sequence_evaluator,
    get_evaluator,
    graph_trajectory_strict_match,
)
from lg_eval.experiments._upstream import Case, Dataset, EvaluatorRef, Expected, import_reference
from lg_eval.experiments.results import CaseStatus, ScoreRow
from lg_eval.feedback import Feedback, ScoreValue
from lg_eval.inputs import text_arg
from lg_eval.judges import Usage
from lg_eval.trajectory import ThreadTrajectory

DEFAULT_THRESHOLD = 1.0
_ANSWER_KEYS = ("answer", "final_answer", "output", "response", "result")


@dataclass(frozen=True)
class CaseEvaluator:
    """An evaluator as a case uses it: its name in results and, for built-in checks, the
    reference it is given instead of the case's expectations."""

    name: str
    evaluator: Evaluator[Any]
    reference: Any = None
    own_reference: bool = False


# --------------------------------------------------------------------------- resolving


class EvaluatorResolver:
    """Resolves evaluator references once per run (the same ref gives the same object)."""

    def __init__(self, dataset: Dataset) -> None:
        self._allows_code = dataset.allows_code
        self._dataset = dataset
        self._built: dict[str, CaseEvaluator] = {}

    def for_case(self, case: Case) -> list[CaseEvaluator]:
        """The case's evaluators (else the dataset's), then the built-in checks it needs."""
        refs = case.evaluators if case.evaluators is not None else self._dataset.evaluators
        listed = [self.resolve(ref) for ref in refs]
        return listed + builtin_checks(case.expected, listed)

    def resolve(self, ref: EvaluatorRef) -> CaseEvaluator:
        key = json.dumps([ref.name, ref.options], sort_keys=True, default=repr)
        if key not in self._built:
            self._built[key] = CaseEvaluator(ref.name, self._build(ref))
        return self._built[key]

    def _build(self, ref: EvaluatorRef) -> Evaluator[Any]:
        if ":" not in ref.name:
            return get_evaluator(ref.name, **ref.options)
        target = import_reference(ref.name, what="evaluator", allow_code=self._allows_code)
        ready = as_evaluator(target)
        if ready is not None and not ref.options:
            return ready
        if ready is None and not _takes_outputs(target):
            target = target(**ref.options)  # a factory
        elif ref.options:
            raise InvalidOptionError(
                f"Evaluator {ref.name!r} is a ready evaluator; it takes no options "
                f"(got {sorted(ref.options)})."
            )
        built = as_evaluator(target)
        if built is not None:
            return built
        if not callable(target):
            raise InvalidOptionError(f"{ref.name!r} is not an evaluator or a factory of one.")
        return make_evaluator(ref.name.rpartition(":")[2], target)


def _takes_outputs(target: Any) -> bool:
    try:
        return "outputs" in inspect.signature(target).parameters
    except (TypeError, ValueError):
        return False


# --------------------------------------------------------------------------- built-in checks

_TOOL_CALLS = create_tool_sequence_evaluator(trajectory_match_mode="in_order")
_EXACT = create_text_evaluator("exact_match")


def _max_steps(*, outputs: Any, reference_outputs: Any = None, **_: Any) -> Feedback:
    """Whether the thread ran at most ``max_steps`` node steps (synthetic ``__x__`` excluded)."""
    limit = int(reference_outputs["max_steps"])
    thread = outputs["trajectory"]
    steps = [n for turn in thread.to_graph_trajectory().steps for n in turn if not _synthetic(n)]
    ok = len(steps) <= limit
    comment = None if ok else f"The thread ran {len(steps)} node steps; at most {limit} expected."
    return Feedback(score=ok, comment=comment, metadata={"steps": len(steps), "max_steps": limit})


_MAX_STEPS = make_evaluator("max_steps", _max_steps)


def _synthetic(name: str) -> bool:
    return name.startswith("__") and name.endswith("__")


def builtin_checks(expected: Expected, listed: list[CaseEvaluator]) -> list[CaseEvaluator]:
    """A check for each expectation none of ``listed`` reads."""
    reads = {item.evaluator.reads for item in listed}
    checks: list[CaseEvaluator] = []
    if expected.trajectory is not None and "trajectory" not in reads:
        checks.append(CaseEvaluator("graph_trajectory_strict_match", graph_trajectory_strict_match))
    if expected.tool_calls is not None and "messages" not in reads:
        checks.append(CaseEvaluator("tool_sequence", _TOOL_CALLS))
    output = expected.output
    if output is not None and "output" not in reads:
        if isinstance(output, str) or output.equals is not None:
            text = output if isinstance(output, str) else output.equals
            checks.append(CaseEvaluator("exact_match", _EXACT, {"output": text}, True))
        else:
            keywords = create_keywords_evaluator(output.contains or [])
            checks.append(CaseEvaluator("keywords", keywords))
    if expected.max_steps is not None:
        checks.append(CaseEvaluator("max_steps", _MAX_STEPS))
    return checks


# --------------------------------------------------------------------------- what is read


def reference_of(expected: Expected) -> dict[str, Any] | None:
    """The expectations as ``reference_outputs``: only the parts the case states (None when it
    states none, so an evaluator needing a reference says so plainly)."""
    data: dict[str, Any] = expected.model_dump(mode="json", exclude_none=True, by_alias=True)
    return data or None


def final_messages(thread: ThreadTrajectory) -> list[Any] | None:
    """The ``messages`` of the thread's final state, if it has any."""
    state = thread.turns[-1].state if thread.turns else None
    messages = state.get("messages") if isinstance(state, Mapping) else None
    return list(messages) if isinstance(messages, list | tuple) and messages else None


def case_outputs(thread: ThreadTrajectory, messages: list[Any] | None) -> dict[str, Any]:
    """What every evaluator is handed as ``outputs`` (fields with nothing to give are left out)."""
    outputs: dict[str, Any] = {"trajectory": thread, "thread": thread}
    if messages is not None:
        outputs["messages"] = messages
    answer = _answer(thread, messages)
    if answer is not None:
        outputs["output"] = answer
    return outputs


def _answer(thread: ThreadTrajectory, messages: list[Any] | None) -> str | None:
    if messages is not None:
        try:
            return text_arg(messages, "messages")
        except TrajectoryFormatError:
            return None
    state = thread.turns[-1].state if thread.turns else None
    if isinstance(state, Mapping):
        for key in _ANSWER_KEYS:
            if isinstance(state.get(key), str):
                return str(state[key])
    return None


def thread_usage(messages: list[Any] | None) -> Usage:
    """Model calls, tokens and cost of the thread's AI messages (``usage_metadata``)."""
    usage = Usage()
    for message in messages or []:
        if isinstance(message, AIMessage):
            usage.record(message)
    return usage


# --------------------------------------------------------------------------- verdicts


def verdict(score: ScoreValue, threshold: float) -> bool | None:
    """True for a bool True or a number at or above ``threshold``; None without a score."""
    if score is None:
        return None
    if isinstance(score, bool):
        return score
    return float(score) >= threshold


def score_rows(
    name: str, outcome: Any, thresholds: Mapping[str, float]
) -> tuple[list[ScoreRow], Usage]:
    """The rows of one evaluator's outcome (a feedback dict or a list of them), and the judge
    usage it reports (``metadata["usage"]``, counted once per evaluator)."""
    items = outcome if isinstance(outcome, list) else [outcome]
    rows, usage = [], Usage()
    for item in items:
        metadata = item.get("metadata")
        reported = metadata.get("usage") if isinstance(metadata, Mapping) else None
        if isinstance(reported, Mapping) and not usage.calls:
            usage.calls = int(reported.get("calls") or 0)
            usage.total_tokens = int(reported.get("total_tokens") or 0)
            cost = reported.get("cost")
            usage.cost = float(cost) if isinstance(cost, int | float) else None
        key = str(item.get("key") or name)
        threshold = thresholds.get(key, thresholds.get(name, DEFAULT_THRESHOLD))
        score = item.get("score")
        rows.append(
            ScoreRow(
                evaluator=name,
                key=key,
                score=score,
                comment=item.get("comment"),
                metadata=to_jsonable_python(metadata, fallback=repr) if metadata else None,
                passed=verdict(score, threshold),
            )
        )
    return rows, usage


def status_of(rows: list[ScoreRow]) -> CaseStatus:
    """``error`` if an evaluator raised; ``failed`` if a verdict failed; ``passed`` if at
    least one verdict was given and every one passed.

    Feedback without a verdict (``passed`` None) is neither: it never fails a case that
    has a passing verdict, and never passes one alone. A case with no verdict at all (or
    no evaluator) is ``failed``, and its report shows each "no verdict" and its reason.
    """
    if any(row.error is not None for row in rows):
        return "error"
    verdicts = [row.passed for row in rows if row.passed is not None]
    return "passed" if verdicts and all(verdicts) else "failed"


__all__ = [
    "DEFAULT_THRESHOLD",
    "CaseEvaluator",
    "EvaluatorResolver",
    "builtin_checks",
    "case_outputs",
    "final_messages",
    "reference_of",
    "score_rows",
    "status_of",
    "thread_usage",
    "verdict",
]
