"""Tool sequence match: the agent's calls against a plain list of expected calls.

For the common case where the reference is "these tools, with at least these
arguments" rather than a whole message trajectory (LangEx's ``match``, ADK's
EXACT / IN_ORDER / ANY_ORDER). Same options as the trajectory match, plus the
``in_order`` mode, with other defaults: expected args are partial
(``superset``): the arguments given must be present and equal, others are
free; an expected call without ``args`` accepts any arguments.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any, TypeVar

from lg_eval._evaluator import Evaluator, make_evaluator
from lg_eval._feedback import BOOL, Feedback
from lg_eval._inputs import CallsCounted, check_counted, counted_calls, expected_from
from lg_eval.errors import InvalidOptionError
from lg_eval.evaluators._tool_args import ToolArgsMatchMode, ToolArgsMatchOverrides
from lg_eval.evaluators._tool_calls import (
    CALL_MATCH_MODES,
    ArgsPolicy,
    Call,
    CallMatchMode,
    check_mode,
    counted_feedback,
    fixed_calls,
    pair_tool_calls,
    pairing_feedback,
)

SequenceMode = CallMatchMode
SEQUENCE_MODES: tuple[CallMatchMode, ...] = CALL_MATCH_MODES

T = TypeVar("T")


def create_tool_sequence_evaluator(
    expected: Sequence[Call | str] | None = None,
    *,
    trajectory_match_mode: CallMatchMode | None = None,
    tool_args_match_mode: ToolArgsMatchMode | None = None,
    tool_args_match_overrides: ToolArgsMatchOverrides | None = None,
    mode: CallMatchMode | None = None,
    args_match_mode: ToolArgsMatchMode | None = None,
    args_match_overrides: ToolArgsMatchOverrides | None = None,
    calls: CallsCounted = "executed",
) -> Evaluator:
    """An evaluator checking the agent's tool calls against a list of expected calls.

    ``expected`` is a list of ``{"name": ..., "args": {...}}`` dicts or bare tool
    names; when ``None``, each example's ``reference_outputs`` supplies it (a
    list of calls, a dict with ``"tool_calls"``, or a message trajectory).

    ``trajectory_match_mode`` (default ``strict``; ``outputs`` is the actual run):

    * ``strict``: exactly the expected calls, in order (ADK EXACT).
    * ``in_order``: the expected calls appear in this order; extra calls are
      allowed anywhere in between (ADK IN_ORDER).
    * ``unordered``: exactly the expected calls, in any order.
    * ``superset``: every expected call is present, in any order; extra calls
      are allowed (ADK ANY_ORDER; LangEx's default ``:subset`` mode).
    * ``subset``: every call made is among the expected ones.

    Each expected call consumes its own actual call (maximum matching), so a
    call expected twice must be made twice. ``tool_args_match_mode`` defaults to
    ``superset`` (partial args); it and ``tool_args_match_overrides`` work as in
    :func:`create_trajectory_match_evaluator`. The bool score is keyed
    ``tool_sequence_<mode>_match``; ``metadata`` lists ``missing`` and
    ``unexpected`` calls (unexpected calls are reported, not failed, in
    ``in_order`` and ``superset`` modes), the ``first_difference`` in ``strict``
    mode and the expected calls made ``out_of_order`` in ``in_order`` mode.

    ``calls`` says which of the agent's calls count: ``executed`` (default), the
    calls whose tool ran (a tool message answers them, other than one the harness
    wrote in the tool's place, such as a rejection), each with the arguments it ran
    with (a call a reviewer edited counts as edited, see
    :func:`lg_eval.messages.call_outcomes`); ``proposed``, every call the model made,
    as made, run or not. A plain list of calls as ``outputs`` counts as made.

    ``mode``, ``args_match_mode`` and ``args_match_overrides`` are the deprecated
    names of the three options.

    Raises:
        InvalidOptionError: an unknown mode, a malformed override, or an option
            given under both its name and its deprecated name.
        TrajectoryFormatError: ``expected`` is not a list of calls or names.
    """
    mode_option, chosen_mode = _option(
        "trajectory_match_mode", trajectory_match_mode, "mode", mode, "strict"
    )
    args_option, args_mode = _option(
        "tool_args_match_mode", tool_args_match_mode, "args_match_mode", args_match_mode, "superset"
    )
    overrides_option, overrides = _option(
        "tool_args_match_overrides",
        tool_args_match_overrides,
        "args_match_overrides",
        args_match_overrides,
        None,
    )
    match_mode = check_mode(chosen_mode, mode_option)
    policy = ArgsPolicy(args_mode, overrides, option=args_option, overrides_option=overrides_option)
    counted = check_counted(calls)
    fixed = fixed_calls(expected, "expected")
    key = f"tool_sequence_{match_mode}_match"

    def scorer(*, outputs: Any, reference_outputs: Any = None, **_: Any) -> Feedback:
        wanted = expected_from(fixed, reference_outputs, key)
        made = counted_calls(outputs, "outputs", counted)
        pairing = pair_tool_calls(made.calls, wanted, mode=match_mode, policy=policy)
        return counted_feedback(pairing_feedback(pairing, made.calls, wanted), counted, made)

    scorer.__doc__ = create_tool_sequence_evaluator.__doc__
    return make_evaluator(key, scorer, reads="calls", score_range=BOOL)


def _option(name: str, value: T | None, old: str, old_value: T | None, default: T) -> tuple[str, T]:
    """The option given under ``name`` or its deprecated name ``old`` (with a warning)."""
    if old_value is None:
        return name, default if value is None else value
    if value is not None:
        raise InvalidOptionError(
            f"create_tool_sequence_evaluator got both {name}= and its deprecated name {old}=; "
            f"pass {name}= only."
        )
    warnings.warn(
        f"create_tool_sequence_evaluator({old}=...) is deprecated; use {name}=... "
        "(the trajectory match's option name).",
        DeprecationWarning,
        stacklevel=3,
    )
    return old, old_value
