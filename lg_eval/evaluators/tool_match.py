"""Tool-call trajectory match: agentevals' ``create_trajectory_match_evaluator``, paired right.

Same modes, options and result keys as agentevals, so switching is a change
of import. Two differences, both where agentevals' answer is wrong:

* ``unordered``, ``subset`` and ``superset`` pair calls with a maximum
  bipartite matching, not first-fit greedy, so a valid pairing is always
  found (greedy misses some when argument rules are partial);
* argument rules are always applied as ``rule(actual_args, reference_args)``;
  agentevals swaps the two when it checks the subset direction, which flips
  ``subset`` / ``superset`` argument rules and custom comparators there.

With exact arguments, ignored arguments or field-list overrides (rules that
are equivalences) the scores are identical to agentevals'.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any, Literal

from lg_eval.errors import InvalidOptionError
from lg_eval.evaluator import Evaluator, async_twin, make_evaluator
from lg_eval.evaluators._matching import pair_calls
from lg_eval.evaluators._tool_args import (
    ArgsMatching,
    ArgsRule,
    ToolArgsMatchMode,
    ToolArgsMatchOverrides,
)
from lg_eval.feedback import Feedback
from lg_eval.inputs import calls_arg, describe_call, describe_list, require
from lg_eval.messages import iter_tool_calls, to_openai_messages

TrajectoryMatchMode = Literal["strict", "unordered", "subset", "superset"]
TRAJECTORY_MATCH_MODES: tuple[str, ...] = ("strict", "unordered", "subset", "superset")


def create_trajectory_match_evaluator(
    *,
    trajectory_match_mode: TrajectoryMatchMode = "strict",
    tool_args_match_mode: ToolArgsMatchMode = "exact",
    tool_args_match_overrides: ToolArgsMatchOverrides | None = None,
) -> Evaluator:
    """An evaluator comparing an agent's message trajectory with a reference one.

    Modes (``outputs`` is the actual run):

    * ``strict``: message by message, the same roles and the same tool calls
      (parallel calls of one message in any order); message content is free.
    * ``unordered``: the same tool calls in any order, each reference call
      paired with its own actual call.
    * ``subset``: every actual call pairs with a distinct reference call
      (the agent called nothing beyond the reference).
    * ``superset``: every reference call pairs with a distinct actual call
      (extra calls are allowed).

    Two calls pair when they name the same tool and their arguments match:
    ``tool_args_match_mode`` is ``exact`` (default), ``ignore``, ``subset``
    (the actual args are a subset of the reference's) or ``superset``;
    ``tool_args_match_overrides`` maps a tool name to a mode, a list of
    dotted field paths that must be equal, or a callable
    ``(actual_args, reference_args) -> bool``; overrides win.

    ``unordered``, ``subset`` and ``superset`` also accept plain lists of calls
    (``{"name", "args"}`` dicts or tool names); ``strict`` needs messages.

    The score is a bool under ``trajectory_<mode>_match``. ``metadata`` holds
    the ``pairs`` found (actual index, reference index into the lists of
    calls), the ``missing`` reference calls and the ``unexpected`` actual ones.

    Raises:
        InvalidOptionError: an unknown mode or a malformed override.
    """
    if trajectory_match_mode not in TRAJECTORY_MATCH_MODES:
        raise InvalidOptionError(
            f"trajectory_match_mode={trajectory_match_mode!r} is not allowed; use one of "
            f"{', '.join(TRAJECTORY_MATCH_MODES)}."
        )
    matching = ArgsMatching(tool_args_match_mode, tool_args_match_overrides)
    key = f"trajectory_{trajectory_match_mode}_match"

    def scorer(*, outputs: Any, reference_outputs: Any = None, **_: Any) -> Feedback:
        require(reference_outputs, "reference_outputs", key)
        if trajectory_match_mode == "strict":
            actual = to_openai_messages(outputs, argument="outputs")
            reference = to_openai_messages(reference_outputs, argument="reference_outputs")
            return _strict(actual, reference, matching.rule)
        actual_calls = [dict(call) for call in calls_arg(outputs, "outputs")]
        reference_calls = [dict(call) for call in calls_arg(reference_outputs, "reference_outputs")]
        return judge_pairing(trajectory_match_mode, actual_calls, reference_calls, matching.rule)

    scorer.__doc__ = create_trajectory_match_evaluator.__doc__
    return make_evaluator(key, scorer, reads="messages")


create_async_trajectory_match_evaluator = async_twin(create_trajectory_match_evaluator)


def judge_pairing(
    mode: str,
    actual: Sequence[dict[str, Any]],
    reference: Sequence[dict[str, Any]],
    rule_for: Callable[[str], ArgsRule],
) -> Feedback:
    """Score ``unordered`` / ``subset`` / ``superset`` from a maximum pairing of calls."""
    pairs = pair_calls(actual, reference, rule_for)
    paired_actual = {i for i, _ in pairs}
    paired_reference = {j for _, j in pairs}
    missing = [
        listed_call(j, reference[j]) for j in range(len(reference)) if j not in paired_reference
    ]
    unexpected = [listed_call(i, actual[i]) for i in range(len(actual)) if i not in paired_actual]
    blocking_missing = missing if mode in ("unordered", "superset") else []
    blocking_unexpected = unexpected if mode in ("unordered", "subset") else []
    metadata = {
        "pairs": [{"actual": i, "reference": j} for i, j in pairs],
        "missing": missing,
        "unexpected": unexpected,
    }
    comment = calls_comment(blocking_missing, blocking_unexpected)
    return Feedback(score=comment is None, comment=comment, metadata=metadata)


def calls_comment(missing: list[dict[str, Any]], unexpected: list[dict[str, Any]]) -> str | None:
    """``Missing 1 expected call: f(a=1). Unexpected 2 calls: g(), h().`` or ``None``."""
    parts = []
    if missing:
        calls = describe_list([describe_call(c) for c in missing])
        parts.append(f"Missing {_count(len(missing), 'expected call')}: {calls}.")
    if unexpected:
        calls = describe_list([describe_call(c) for c in unexpected])
        parts.append(f"Unexpected {_count(len(unexpected), 'call')}: {calls}.")
    return " ".join(parts) or None


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def listed_call(index: int, call: dict[str, Any]) -> dict[str, Any]:
    """A call as reported in ``missing`` / ``unexpected``: its index, name and args."""
    return {"index": index, "name": call["name"], "args": call.get("args")}


def _strict(
    actual: list[dict[str, Any]],
    reference: list[dict[str, Any]],
    rule_for: Callable[[str], ArgsRule],
) -> Feedback:
    if len(actual) != len(reference):
        return Feedback(
            score=False,
            comment=f"Expected {len(reference)} messages, got {len(actual)}.",
            metadata={"actual_messages": len(actual), "reference_messages": len(reference)},
        )
    actual_calls, reference_calls = _calls_by_message(actual), _calls_by_message(reference)
    for index, (got, expected) in enumerate(zip(actual, reference, strict=True)):
        where = {"message_index": index}
        if got.get("role") != expected.get("role"):
            return Feedback(
                score=False,
                comment=f"Message {index}: expected role {expected.get('role')!r}, "
                f"got {got.get('role')!r}.",
                metadata=where,
            )
        a, r = actual_calls[index], reference_calls[index]
        if len(a) != len(r):
            return Feedback(
                score=False,
                comment=f"Message {index}: expected {_count(len(r), 'tool call')}, got {len(a)}.",
                metadata={**where, "actual_calls": a, "reference_calls": r},
            )
        verdict = judge_pairing("unordered", a, r, rule_for)
        if not verdict.score:
            return Feedback(
                score=False,
                comment=f"Message {index}: {verdict.comment}",
                metadata={**where, **(verdict.metadata or {})},
            )
    return Feedback(score=True, comment=None, metadata={"messages": len(actual)})


def _calls_by_message(messages: list[dict[str, Any]]) -> dict[int, list[dict[str, Any]]]:
    calls: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for index, call in iter_tool_calls(messages):
        calls[index].append(dict(call))
    return calls


__all__ = [
    "TRAJECTORY_MATCH_MODES",
    "calls_comment",
    "create_async_trajectory_match_evaluator",
    "create_trajectory_match_evaluator",
    "judge_pairing",
    "listed_call",
]
