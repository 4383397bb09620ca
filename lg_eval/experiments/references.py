"""What a case's ``expected`` must state for a built-in evaluator a dataset names, and how
that evaluator scores when the case does not: the one rule ``lg-eval run`` applies and
``lg-eval dataset validate`` reports.

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

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from lg_eval.evaluators import TEXT_METRICS
from lg_eval.evaluators.registry import is_builtin
from lg_eval.experiments._upstream import Expected

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


__all__ = ["Outcome", "ReferenceGap", "reference_gap"]
