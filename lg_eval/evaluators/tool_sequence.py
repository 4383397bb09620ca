"""Tool sequence match: the agent's calls against a plain list of expected calls.

For the common case where the reference is "these tools, with at least these
arguments" rather than a whole message trajectory (LangEx's ``match``, ADK's
EXACT / IN_ORDER / ANY_ORDER). Expected args are partial by default: the
arguments given must be present and equal, others are free; an expected call
without ``args`` accepts any arguments.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal

from lg_eval.errors import InvalidOptionError
from lg_eval.evaluator import Evaluator, make_evaluator
from lg_eval.evaluators._tool_args import (
    ArgsMatching,
    ArgsRule,
    ToolArgsMatchMode,
    ToolArgsMatchOverrides,
)
from lg_eval.evaluators.tool_match import calls_comment, judge_pairing, listed_call
from lg_eval.feedback import Feedback
from lg_eval.inputs import (
    WILDCARD,
    calls_arg,
    describe_call,
    expected_calls_arg,
    expected_from,
)

SequenceMode = Literal["strict", "in_order", "unordered", "subset", "superset"]
SEQUENCE_MODES: tuple[str, ...] = ("strict", "in_order", "unordered", "subset", "superset")


def create_tool_sequence_evaluator(
    expected: Sequence[dict[str, Any] | str] | None = None,
    *,
    mode: SequenceMode = "strict",
    args_match_mode: ToolArgsMatchMode = "superset",
    args_match_overrides: ToolArgsMatchOverrides | None = None,
) -> Evaluator:
    """An evaluator checking the agent's tool calls against a list of expected calls.

    ``expected`` is a list of ``{"name": ..., "args": {...}}`` dicts or bare tool
    names; when ``None``, each example's ``reference_outputs`` supplies it (a
    list of calls, a dict with ``"tool_calls"``, or a message trajectory).

    Modes (``outputs`` is the actual run):

    * ``strict``: exactly the expected calls, in order (ADK EXACT).
    * ``in_order``: the expected calls appear in this order; extra calls are
      allowed anywhere in between (ADK IN_ORDER).
    * ``unordered``: exactly the expected calls, in any order.
    * ``superset``: every expected call is present, in any order; extra calls
      are allowed (ADK ANY_ORDER; LangEx's default ``:subset`` mode).
    * ``subset``: every call made is among the expected ones.

    Each expected call consumes its own actual call (maximum matching), so a
    call expected twice must be made twice. ``args_match_mode`` defaults to
    ``superset`` (partial args); overrides work as in
    :func:`create_trajectory_match_evaluator`. The bool score is keyed
    ``tool_sequence_<mode>_match``; ``metadata`` lists ``missing`` and
    ``unexpected`` calls (unexpected calls are reported, not failed, in
    ``in_order`` and ``superset`` modes).

    Raises:
        InvalidOptionError: an unknown mode or a malformed override.
        TrajectoryFormatError: ``expected`` is not a list of calls or names.
    """
    if mode not in SEQUENCE_MODES:
        raise InvalidOptionError(
            f"mode={mode!r} is not allowed; use one of {', '.join(SEQUENCE_MODES)}."
        )
    matching = ArgsMatching(args_match_mode, args_match_overrides, option="args_match_mode")
    fixed = None if expected is None else expected_calls_arg(list(expected), "expected")
    key = f"tool_sequence_{mode}_match"

    def scorer(*, outputs: Any, reference_outputs: Any = None, **_: Any) -> Feedback:
        wanted = expected_from(fixed, reference_outputs, key)
        actual = [dict(call) for call in calls_arg(outputs, "outputs")]
        rule_for = _rules(wanted, matching)
        if mode == "strict":
            return _strict(actual, wanted, rule_for)
        if mode == "in_order":
            return _in_order(actual, wanted, rule_for)
        return judge_pairing(mode, actual, wanted, rule_for)

    scorer.__doc__ = create_tool_sequence_evaluator.__doc__
    return make_evaluator(key, scorer, reads="messages")


def _rules(expected: list[dict[str, Any]], matching: ArgsMatching) -> Callable[[str], ArgsRule]:
    """Rules per tool; a tool with an args-free expected call accepts any args for it."""
    open_tools = {call["name"] for call in expected if call["args"] is WILDCARD}
    wrapped: dict[str, ArgsRule] = {}
    for tool in open_tools:
        base = matching.rule(tool)
        wrapped[tool] = ArgsRule(
            lambda a, r, base=base: r is WILDCARD or base.test(a, r), f"{base.label} or any"
        )
    return lambda tool: wrapped.get(tool) or matching.rule(tool)


def _fits(
    actual: dict[str, Any], expected: dict[str, Any], rule_for: Callable[[str], ArgsRule]
) -> bool:
    return actual["name"] == expected["name"] and rule_for(expected["name"]).test(
        actual["args"], expected["args"]
    )


def _strict(
    actual: list[dict[str, Any]],
    expected: list[dict[str, Any]],
    rule_for: Callable[[str], ArgsRule],
) -> Feedback:
    detail = judge_pairing("unordered", actual, expected, rule_for)
    metadata = dict(detail.metadata or {})
    position = next(
        (
            i
            for i in range(max(len(actual), len(expected)))
            if i >= len(actual) or i >= len(expected) or not _fits(actual[i], expected[i], rule_for)
        ),
        None,
    )
    if position is None:
        return Feedback(score=True, comment=None, metadata=metadata)
    metadata["first_difference"] = position
    if position >= min(len(actual), len(expected)):
        comment = f"Expected {len(expected)} calls, got {len(actual)}."
    else:
        comment = (
            f"Call {position + 1}: expected {describe_call(expected[position])}, "
            f"got {describe_call(actual[position])}."
        )
    extra = detail.comment
    return Feedback(
        score=False, comment=f"{comment} {extra}" if extra else comment, metadata=metadata
    )


def _in_order(
    actual: list[dict[str, Any]],
    expected: list[dict[str, Any]],
    rule_for: Callable[[str], ArgsRule],
) -> Feedback:
    """Embed the expected calls as a subsequence; earliest fit is optimal for any rule."""
    pairs: list[tuple[int, int]] = []
    j = 0
    for i, call in enumerate(actual):
        if j < len(expected) and _fits(call, expected[j], rule_for):
            pairs.append((i, j))
            j += 1
    used = {i for i, _ in pairs}
    missing = [listed_call(n, expected[n]) for n in range(j, len(expected))]
    unexpected = [listed_call(i, actual[i]) for i in range(len(actual)) if i not in used]
    metadata = {
        "pairs": [{"actual": i, "reference": n} for i, n in pairs],
        "missing": missing,
        "unexpected": unexpected,
    }
    if not missing:
        return Feedback(score=True, comment=None, metadata=metadata)
    comment = (
        f"Expected call {j + 1} ({describe_call(expected[j])}) was not made "
        f"after the {j} earlier expected call{'' if j == 1 else 's'}. "
    )
    return Feedback(
        score=False, comment=comment + (calls_comment(missing, []) or ""), metadata=metadata
    )


__all__ = [
    "SEQUENCE_MODES",
    "create_tool_sequence_evaluator",
]
