"""Tool-call trajectory match: agentevals' ``create_trajectory_match_evaluator``, paired right.

The same modes, options and feedback keys as agentevals and openevals, with a
comment and metadata saying what differed; :mod:`lg_eval.compat` wraps it in
the peers' bare result dicts. Two differences in score, both where a peer's
answer is wrong:

* ``unordered``, ``subset`` and ``superset`` pair calls with a maximum
  bipartite matching, not first-fit greedy, so a valid pairing is always
  found (greedy misses some when argument rules are partial);
* argument rules are always applied as ``rule(actual_args, reference_args)``;
  agentevals 0.0.9 swaps the two when it checks the subset direction, which
  flips ``subset`` / ``superset`` argument rules and custom comparators there
  (openevals 0.2.2 applies them the right way round).

With exact arguments, ignored arguments or field-list overrides (rules that
are equivalences) the scores are identical to agentevals', and with
``require_override_fields=True`` to openevals'.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Literal, get_args

from pydantic import SkipValidation

from lg_eval._arguments import Flag, validated
from lg_eval._evaluator import Evaluator, async_twin, make_evaluator
from lg_eval._feedback import BOOL, Feedback
from lg_eval._inputs import calls_arg, require
from lg_eval.evaluators._tool_args import (
    ToolArgsMatchMode as ToolArgsMatchMode,
)
from lg_eval.evaluators._tool_args import (
    ToolArgsMatchOverrides as ToolArgsMatchOverrides,
)
from lg_eval.evaluators._tool_calls import (
    ArgsPolicy,
    count,
    pair_tool_calls,
    pairing_feedback,
)
from lg_eval.messages import iter_tool_calls, to_openai_messages

TrajectoryMatchMode = Literal["strict", "unordered", "subset", "superset"]
"""agentevals' modes: the core's :data:`~lg_eval.evaluators._tool_calls.CALL_MATCH_MODES`
without ``in_order``."""
TRAJECTORY_MATCH_MODES: tuple[TrajectoryMatchMode, ...] = get_args(TrajectoryMatchMode)


@validated
def create_trajectory_match_evaluator(
    *,
    trajectory_match_mode: TrajectoryMatchMode = "strict",
    tool_args_match_mode: ToolArgsMatchMode = "exact",
    tool_args_match_overrides: SkipValidation[ToolArgsMatchOverrides | None] = None,
    require_override_fields: Flag = False,
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
    ``(actual_args, reference_args) -> bool``; overrides win. A field path a
    call lacks reads as ``None`` (agentevals' rule); with
    ``require_override_fields=True`` it fails the match on either side
    (openevals' rule since 0.2.1).

    ``unordered``, ``subset`` and ``superset`` also accept plain lists of calls
    (``{"name", "args"}`` dicts or tool names); ``strict`` needs messages.

    The score is a bool under ``trajectory_<mode>_match``. ``metadata`` holds
    the ``pairs`` found (actual index, reference index into the lists of
    calls), the ``missing`` reference calls and the ``unexpected`` actual ones.

    Raises:
        InvalidOptionError: an unknown mode or a malformed override.
    """
    mode = trajectory_match_mode
    policy = ArgsPolicy(
        tool_args_match_mode, tool_args_match_overrides, required_fields=require_override_fields
    )
    key = f"trajectory_{mode}_match"

    def scorer(*, outputs: Any, reference_outputs: Any = None, **_: Any) -> Feedback:
        require(reference_outputs, "reference_outputs", key)
        if mode == "strict":
            actual = to_openai_messages(outputs, argument="outputs")
            reference = to_openai_messages(reference_outputs, argument="reference_outputs")
            return _strict(actual, reference, policy)
        actual_calls = calls_arg(outputs, "outputs")
        reference_calls = calls_arg(reference_outputs, "reference_outputs")
        pairing = pair_tool_calls(actual_calls, reference_calls, mode=mode, policy=policy)
        return pairing_feedback(pairing, actual_calls, reference_calls)

    scorer.__doc__ = create_trajectory_match_evaluator.__doc__
    return make_evaluator(key, scorer, reads="messages", score_range=BOOL)


create_async_trajectory_match_evaluator = async_twin(create_trajectory_match_evaluator)


def _strict(
    actual: list[dict[str, Any]], reference: list[dict[str, Any]], policy: ArgsPolicy
) -> Feedback:
    """Message by message: roles, then each message's calls as an ``unordered`` pairing."""
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
                comment=f"Message {index}: expected {count(len(r), 'tool call')}, got {len(a)}.",
                metadata={**where, "actual_calls": a, "reference_calls": r},
            )
        verdict = pairing_feedback(pair_tool_calls(a, r, mode="unordered", policy=policy), a, r)
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
