"""How a case is scored: its evaluators, the built-in checks, what each needs, what they read,
and verdicts.

* :class:`EvaluatorResolver`: the case's evaluators (else the dataset's), resolved by
  registry name or, for a dataset that allows code, ``module:attr``
  (:func:`lg_eval.evaluators.resolve_evaluator`); then a
  built-in check for each expectation no listed evaluator reads (trajectory →
  ``graph_trajectory_strict_match``; tool calls → in-order tool sequence with
  partial args; output → exact match or keywords; ``max_steps`` → a step cap).
* :func:`reference_of`: the case's expectations as the ``reference_outputs`` dict.
* :func:`case_outputs`: the thread as ``{"trajectory", "thread", "messages", "output"}``,
  so graph, tool-call and text evaluators each find their field; :func:`turn_answers`:
  what the agent answered, turn by turn.
* :func:`score_rows`: read feedback to :class:`ScoreRow` with its pass/fail verdict (a
  score outside its range, :func:`lg_eval._feedback.check_score`, is the row's error).
* :func:`score_thread`: a thread scored into a :class:`CaseResult`, an effect core: one
  extracted thread, its evaluators and reference in; its rows, tool calls, usage and
  status written into the result. The runner, sweeps and replay score through it, and it
  calls and reads evaluators through the one scoring step that eval nodes use too
  (:mod:`lg_eval.scoring`).

**What a case must state** for a built-in evaluator (:func:`reference_gap`), the one rule
``lg-eval run`` applies and ``lg-eval dataset validate`` reports.

Every evaluator of a case is handed the case's ``expected`` as ``reference_outputs`` and
reads its own field from it (``trajectory``, ``tool_calls``, ``output``). When the field it
needs is not there, the evaluator has nothing to compare with: it gives **no verdict**
(``score=None``, the reason in the comment), which neither passes nor fails the case
(unless ``--require-verdict``). When the field is there in a form the evaluator cannot
read (``exact_match`` against ``output: {contains: [...]}``, ``keywords`` against ``output:
{equals: ...}``), or the evaluator needs what no case can state (``json_schema``'s schema,
``step_efficiency``'s step range: options only; ``trajectory_match``'s reference
conversation), the dataset is wrong for it: the case's row
is an **error**, and ``dataset validate`` lists it as a problem. An option that supplies
the reference (``keywords``' ``keywords``, ``tool_order``'s ``expected_order``, ...) makes
the case's field unneeded.

``hitl_match`` needs the ``interrupts`` or ``resumes`` of ``expected.trajectory``: a case
without a trajectory and a case whose trajectory names neither give the same no verdict.

Only lg_eval's own evaluators, under their registry names, are covered; for anything else
(``module:attr``, a judge, a name registered over a built-in) the evaluator decides.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from langchain_core.messages import AIMessage
from pydantic_core import to_jsonable_python

from lg_eval._effects import Core
from lg_eval._evaluator import Evaluator, make_evaluator
from lg_eval._feedback import Feedback
from lg_eval._inputs import final_answer
from lg_eval._trajectory import ThreadTrajectory, flat_steps
from lg_eval._verdicts import case_verdict, verdict
from lg_eval.datasets import Case, Dataset, EvaluatorRef, Expected
from lg_eval.errors import LgEvalError
from lg_eval.evaluators import (
    TEXT_METRICS,
    create_keywords_evaluator,
    create_text_evaluator,
    create_tool_sequence_evaluator,
    graph_trajectory_strict_match,
    resolve_evaluator,
)
from lg_eval.evaluators._registry import is_builtin
from lg_eval.experiments._results import CaseResult, CaseStatus, ScoreRow
from lg_eval.judges import Usage
from lg_eval.messages import CallOutcome, _shared_conversions, call_outcomes
from lg_eval.scoring import EvaluatorCall, Scored, call_evaluators, read_outcome

DEFAULT_THRESHOLD = 1.0


@dataclass(frozen=True)
class CaseEvaluator:
    """An evaluator as a case uses it: its name in results and, for built-in checks, the
    reference it is given instead of the case's expectations."""

    name: str
    evaluator: Evaluator[Any]
    reference: Any = None
    own_reference: bool = False
    gap: ReferenceGap | None = None
    """What the case lacks for this evaluator (:func:`reference_gap`): it is then not called,
    and its row is the gap's no verdict or error."""

    def unscored(self) -> Scored:
        """The feedback of an evaluator the case cannot feed (:attr:`gap`)."""
        assert self.gap is not None
        if self.gap.outcome == "error":
            return Scored(key=self.evaluator.key, error=f"DatasetError: {self.gap.reason}.")
        return Scored(key=self.evaluator.key, comment=f"{self.gap.reason}.")

    def calling(self, outputs: Any, reference: Any, inputs: Any) -> EvaluatorCall:
        """The scoring step's call of this evaluator on one thread: ``reference`` (the
        case's) unless it is a built-in check with its own; awaited when driven async."""
        given = self.reference if self.own_reference else reference
        kwargs = {"outputs": outputs, "reference_outputs": given, "inputs": inputs}
        return EvaluatorCall.of(self.evaluator, kwargs, self.name)


# --------------------------------------------------------------------------- what a case needs

Outcome = Literal["no verdict", "error"]

_TRAJECTORY = (
    "graph_trajectory_strict_match",
    "graph_trajectory_match",
    "graph_trajectory_similarity",
)
_CALLS: dict[str, str | None] = {  # evaluator -> the option that supplies the expected calls
    "tool_sequence": "expected",
    "tool_selection_accuracy": "expected_tools",
    "tool_selection_f1": "expected_tools",
    "tool_order": "expected_order",
    "argument_precision": "expected_calls",
}
_OPTION_ONLY = {"json_schema": "schema", "step_efficiency": "expected_steps"}
_OUTPUT_FORMS = "a text, {equals: ...} or {contains: [...]}"


@dataclass(frozen=True)
class ReferenceGap:
    """What a case lacks for an evaluator, and how the evaluator then scores."""

    outcome: Outcome
    reason: str
    """Why, in a sentence that names the field and what to write."""


def reference_gap(name: str, options: Mapping[str, Any], expected: Expected) -> ReferenceGap | None:
    """The gap between what the built-in evaluator ``name`` (made with ``options``) needs
    of a case and what the case's ``expected`` states; None when it has what it needs, or
    ``name`` is no built-in this rule covers."""
    if not is_builtin(name):
        return None
    if name in _OPTION_ONLY:
        option = _OPTION_ONLY[name]
        if option in options:
            return None
        return ReferenceGap(
            "error",
            f"{name} takes its {option.replace('_', ' ')} as an option, which a case's expected "
            f"cannot state: write {{name: {name}, options: {{{option}: ...}}}}",
        )
    if name == "trajectory_match":
        return ReferenceGap(
            "error",
            "trajectory_match compares with a reference conversation (messages with their "
            "tool calls), which a case's expected cannot state: use tool_sequence to check "
            "expected.tool_calls",
        )
    if name in _TRAJECTORY:
        if expected.trajectory is None:
            return _missing(name, "expected.trajectory", "its steps per turn")
        return None
    if name == "hitl_match":
        trajectory = expected.trajectory
        if trajectory is None or (trajectory.interrupts is None and trajectory.resumes is None):
            return _missing(name, "expected.trajectory's interrupts or resumes", "what was asked "
                            "and answered per turn")  # fmt: skip
        return None
    if name in _CALLS:
        supplier = _CALLS[name]
        if (supplier is not None and supplier in options) or expected.tool_calls is not None:
            return None
        return _missing(name, "expected.tool_calls", "the calls, by name and partial args")
    if name in TEXT_METRICS or name == "keywords":
        return _output_gap(name, options, expected)
    return None


def _output_gap(name: str, options: Mapping[str, Any], expected: Expected) -> ReferenceGap | None:
    output = expected.output
    if name == "keywords" and "keywords" in options:
        return None
    if output is None:
        return _missing(name, "expected.output", _OUTPUT_FORMS)
    if isinstance(output, str):
        return None
    if name == "keywords" and output.equals is not None:
        return ReferenceGap(
            "error",
            "keywords looks for words in the answer, and expected.output is {equals: ...}, a "
            "whole answer: write output: {contains: [...]}, or use exact_match",
        )
    if name != "keywords" and output.contains is not None:
        return ReferenceGap(
            "error",
            f"{name} compares the answer with a whole text, and expected.output is "
            "{contains: [...]}: write output: '...' or {equals: ...}, or use keywords",
        )
    return None


def _missing(name: str, field: str, what: str) -> ReferenceGap:
    return ReferenceGap(
        "no verdict", f"{name} needs {field} ({what}), which the case does not state"
    )


# --------------------------------------------------------------------------- resolving


class EvaluatorResolver:
    """Resolves evaluator references once per run (the same ref gives the same object)."""

    def __init__(self, dataset: Dataset) -> None:
        self._allows_code = dataset.allows_code
        self._dataset = dataset
        self._built: dict[str, CaseEvaluator] = {}
        self._default: dict[int, CaseEvaluator] = {}

    def for_case(self, case: Case) -> list[CaseEvaluator]:
        """The case's evaluators (else the dataset's), each with what the case lacks for it
        (:func:`reference_gap`), then the built-in checks
        it needs."""
        listed = []
        own = case.evaluators
        for n, ref in enumerate(own if own is not None else self._dataset.evaluators):
            item = self.resolve(ref) if own is not None else self._defaults(n, ref)
            gap = reference_gap(ref.name, ref.options, case.expected)
            listed.append(item if gap is None else replace(item, gap=gap))
        return listed + builtin_checks(case.expected, listed)

    def resolve(self, ref: EvaluatorRef) -> CaseEvaluator:
        key = json.dumps([ref.name, ref.options], sort_keys=True, default=repr)
        if key not in self._built:
            self._built[key] = CaseEvaluator(ref.name, self._build(ref))
        return self._built[key]

    def _defaults(self, n: int, ref: EvaluatorRef) -> CaseEvaluator:
        """The dataset's ``n``-th evaluator, resolved once for every case that uses it."""
        found = self._default.get(n)
        if found is None:
            found = self._default[n] = self.resolve(ref)
        return found

    def _build(self, ref: EvaluatorRef) -> Evaluator[Any]:
        return resolve_evaluator(ref.name, ref.options, allow_code=self._allows_code)[1]


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
    if expected.tool_calls is not None and reads.isdisjoint({"messages", "calls"}):
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
    state = thread.turns[-1].state if thread.turns else None
    if messages is not None and not isinstance(state, Mapping):
        state = {"messages": messages}
    return final_answer(state)


def turn_answers(thread: ThreadTrajectory) -> list[str | None]:
    """What the agent answered, per turn of ``thread``: the final answer
    (:func:`lg_eval._inputs.final_answer`) of a completed turn's flat result (its last
    message, or its state values when they hold no messages), read without decoding the
    turn's state; None for a turn that paused or raised (it asked or failed instead), or
    whose last message is no assistant answer."""
    return [
        final_answer(turn.result) if turn.status == "completed" else None for turn in thread.turns
    ]


def thread_usage(messages: list[Any] | None) -> Usage:
    """Model calls, tokens and cost of the thread's AI messages (``usage_metadata``)."""
    usage = Usage()
    for message in messages or []:
        if isinstance(message, AIMessage):
            usage.record(message)
    return usage


# --------------------------------------------------------------------------- the scoring step


def score_thread(
    result: CaseResult,
    thread: ThreadTrajectory,
    evaluators: Sequence[CaseEvaluator],
    *,
    reference: Any = None,
    inputs: Any = None,
    thresholds: Mapping[str, float],
    require_verdict: bool = False,
) -> Core[CaseResult]:
    """Score ``thread`` with ``evaluators`` into ``result`` (returned): its trajectory,
    tool calls, the agent's answers (the final one, :attr:`CaseResult.output`, and one per
    turn, :func:`turn_answers`), one row per feedback (an evaluator that raised is an error
    row, named by :func:`lg_eval._feedback.describe_error`), tokens, cost, model calls and
    status.

    Each evaluator is handed ``outputs`` (:func:`case_outputs`), ``reference`` (or its
    built-in check's own) and ``inputs``, through the one scoring step
    (:func:`lg_eval.scoring.call_evaluators`, :func:`~lg_eval.scoring.read_outcome`): one
    after another when driven sync, together when awaited
    (:func:`lg_eval._effects.drive` / :func:`~lg_eval._effects.adrive`); rows keep the
    evaluators' order.
    """
    result.trajectory = flat_steps(thread)
    messages = final_messages(thread)
    with _shared_conversions():  # the thread's messages converted once, not once per reader
        result.tool_calls = recorded_tool_calls(thread if messages is not None else None)
        outputs = case_outputs(thread, messages)
        result.output, result.answers = outputs.get("output"), turn_answers(thread)
        calls = [
            item.calling(outputs, reference, inputs) for item in evaluators if item.gap is None
        ]
        outcomes = yield call_evaluators(calls)
    usage = thread_usage(messages)
    answered = iter(zip(calls, outcomes, strict=True))
    for item in evaluators:
        feedback = [item.unscored()] if item.gap is not None else read_outcome(*next(answered))
        rows, judged = score_rows(item.name, feedback, thresholds)
        result.scores.extend(rows)
        usage.add(judged)
    result.tokens, result.cost, result.model_calls = usage.total_tokens, usage.cost, usage.calls
    result.status = status_of(result.scores, require_verdict=require_verdict)
    return result


def recorded_tool_calls(thread: ThreadTrajectory | None) -> list[dict[str, Any]] | None:
    """The tool calls of the thread's final messages, in call order, as stored JSON data:
    ``{"name", "args", "id"}``, each as its tool ran; an edited call carries the model's
    call as ``proposed`` (see :func:`lg_eval.messages.call_outcomes`), a call that did not
    run is as proposed with ``"executed": False``. ``None`` when there is no thread, or its
    messages are not in a shape the message reader knows.
    """
    if thread is None:
        return None
    try:
        outcomes = call_outcomes(thread)
    except LgEvalError:
        return None
    return [to_jsonable_python(_recorded(outcome), fallback=repr) for outcome in outcomes]


def _recorded(outcome: CallOutcome) -> dict[str, Any]:
    proposed, executed = outcome["proposed"], outcome["executed"]
    if executed is None:
        return {**proposed, "executed": False}
    if executed == proposed:
        return dict(executed)
    return {**executed, "proposed": {"name": proposed["name"], "args": proposed["args"]}}


# --------------------------------------------------------------------------- verdicts


def score_rows(
    name: str, feedback: Sequence[Scored], thresholds: Mapping[str, float]
) -> tuple[list[ScoreRow], Usage]:
    """The rows of one evaluator's feedback (:func:`lg_eval.scoring.read_outcome`) with
    their verdicts, and the judge usage it reports (``metadata["usage"]``, counted once per
    evaluator). A threshold is looked up by feedback key, then by evaluator name."""
    rows, usage = [], Usage()
    for item in feedback:
        metadata = item.metadata
        reported = metadata.get("usage") if isinstance(metadata, Mapping) else None
        if isinstance(reported, Mapping) and not usage.calls:
            usage.calls = int(reported.get("calls") or 0)
            usage.total_tokens = int(reported.get("total_tokens") or 0)
            cost = reported.get("cost")
            usage.cost = float(cost) if isinstance(cost, int | float) else None
        threshold = thresholds.get(item.key, thresholds.get(name, DEFAULT_THRESHOLD))
        rows.append(
            ScoreRow(
                evaluator=name,
                key=item.key,
                score=item.score,
                comment=item.comment,
                metadata=to_jsonable_python(metadata, fallback=repr) if metadata else None,
                passed=verdict(item.score, threshold),
                error=item.error,
            )
        )
    return rows, usage


def status_of(rows: list[ScoreRow], *, require_verdict: bool = False) -> CaseStatus:
    """``error`` if an evaluator raised; ``failed`` if a verdict failed; ``passed`` if at
    least one verdict was given and every one passed.

    Feedback without a verdict (``passed`` None) is neither: it never fails a case that
    has a passing verdict, and never passes one alone. A case with no verdict at all (or
    no evaluator) is ``failed``, and its report shows each "no verdict" and its reason.
    With ``require_verdict`` (``run_experiment(require_verdict=True)``,
    ``lg-eval run --require-verdict``) any no-verdict fails the case.
    """
    if any(row.error is not None for row in rows):
        return "error"
    return case_verdict((row.passed for row in rows), require_verdict=require_verdict)
