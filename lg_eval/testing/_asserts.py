"""Assertions for pytest: a trajectory, tool calls or interrupts, with a turn-by-turn diff.

Each helper takes what the user has: graph target outputs (``{"trajectory",
"thread", "messages", "output"}``, e.g. from the ``lg_eval_play`` fixture), a
:class:`~lg_eval.ThreadTrajectory`, a :class:`~lg_eval.GraphTrajectory`, their
dicts, messages or call lists, and raises ``AssertionError`` whose message
lists every turn, marking the ones that differ.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, Literal, get_args

from lg_eval._inputs import (
    CallsCounted,
    check_counted,
    counted_calls,
    expected_calls_arg,
    graph_arg,
    select_field,
)
from lg_eval._trajectory import ThreadTrajectory
from lg_eval.errors import InvalidOptionError
from lg_eval.evaluators import create_tool_sequence_evaluator

TrajectoryMode = Literal["strict", "unordered", "subset", "superset"]
MODES: tuple[TrajectoryMode, ...] = get_args(TrajectoryMode)
ARROW = " -> "


def _turn_matches(actual: list[str], expected: list[str], mode: str) -> bool:
    if mode == "strict":
        return actual == expected
    if mode == "unordered":
        return Counter(actual) == Counter(expected)
    if mode == "subset":
        return set(actual) <= set(expected)
    return set(actual) >= set(expected)


def _show(steps: list[str] | None) -> str:
    if steps is None:
        return "(no turn)"
    return ARROW.join(steps) if steps else "(no nodes)"


def assert_trajectory(actual: Any, expected: Any, *, mode: TrajectoryMode = "strict") -> None:
    """Assert the nodes each turn ran match ``expected``, per ``mode``.

    ``mode``: ``strict`` (same nodes, same order), ``unordered`` (same nodes with
    repeats, any order), ``subset`` (only expected nodes ran), ``superset``
    (every expected node ran). The number of turns must be equal in every mode.
    ``expected`` may be a list of per-turn node lists.
    """
    __tracebackhide__ = True
    if mode not in MODES:
        raise InvalidOptionError(f"mode={mode!r} is not allowed; use one of {', '.join(MODES)}.")
    got = graph_arg(select_field(actual, "trajectory", "actual")[0], "actual").turns
    want = graph_arg(select_field(expected, "trajectory", "expected")[0], "expected").turns
    rows: list[str] = []
    bad: list[int] = []
    for index in range(max(len(got), len(want))):
        a = got[index] if index < len(got) else None
        e = want[index] if index < len(want) else None
        if a is not None and e is not None and _turn_matches(a, e, mode):
            rows.append(f"  turn {index + 1}: ok        {_show(a)}")
            continue
        bad.append(index)
        rows.append(f"  turn {index + 1}: expected  {_show(e)}")
        rows.append(f"          actual    {_show(a)}")
    if not bad:
        return
    count = "" if len(got) == len(want) else f" ({len(got)} turns, expected {len(want)})"
    which = ", ".join(str(i + 1) for i in bad)
    header = f"trajectory does not match (mode={mode}){count}; turns differing: {which}"
    raise AssertionError("\n".join([header, *rows]))


def _call_text(call: Mapping[str, Any]) -> str:
    args = call.get("args")
    if args is None:
        return f"{call['name']}(...)"
    shown = ", ".join(f"{k}={v!r}" for k, v in args.items())
    return f"{call['name']}({shown})"


_ORDER_MODES: dict[str, Any] = {"exact": "strict", "any": "unordered"}
_ARGS_MODES: dict[str, Any] = {
    "exact": "exact",
    "subset": "superset",
    "ignore": "ignore",
}
"""``assert_tool_calls``' words for the tool sequence evaluator's modes. Its ``subset``
says the expected arguments are a subset of the call's, which the evaluator, naming the
call's side, calls ``superset``."""


def assert_tool_calls(
    actual: Any,
    expected: Any,
    *,
    order: Literal["exact", "any"] = "exact",
    args: Literal["exact", "subset", "ignore"] = "subset",
    calls: CallsCounted = "executed",
) -> None:
    """Assert the tool calls made match ``expected`` (names, or ``{"name", "args"}`` dicts).

    ``order="exact"``: the same calls in the same order; ``"any"``: the same calls
    in any order. ``args``: ``subset`` (default, as in dataset files and
    :func:`~lg_eval.evaluators.create_tool_sequence_evaluator`: the expected
    arguments are present with equal values, others are free), ``exact`` or
    ``ignore``. An expected call without ``args`` matches any arguments.
    ``calls``: ``executed`` (default) counts the calls whose tool ran, each with the
    arguments it ran with (a reviewer's edit included; from a thread or graph target
    outputs, the thread's resume turns say so too), ``proposed`` every call the model
    made, as made. The check is the tool sequence evaluator's.
    """
    __tracebackhide__ = True
    if order not in _ORDER_MODES:
        raise InvalidOptionError(f"order={order!r} is not allowed; use one of exact, any.")
    if args not in _ARGS_MODES:
        raise InvalidOptionError(f"args={args!r} is not allowed; use one of subset, exact, ignore.")
    value = select_field(actual, "calls", "actual")[0]
    want = expected_calls_arg(select_field(expected, "messages", "expected")[0], "expected")
    counted = counted_calls(value, "actual", check_counted(calls))
    got = counted.calls
    check = create_tool_sequence_evaluator(
        want, trajectory_match_mode=_ORDER_MODES[order], tool_args_match_mode=_ARGS_MODES[args]
    )
    result = check(outputs=got)
    if result["score"] is True:
        return
    pairs = (result["metadata"] or {}).get("pairs", [])
    paired = {pair["actual"]: pair["reference"] for pair in pairs}
    rows = [f"tool calls do not match (order={order}, args={args}, calls={calls})"]
    for index in range(max(len(got), len(want))):
        wanted = _call_text(want[index]) if index < len(want) else "(none)"
        made = _call_text(got[index]) if index < len(got) else "(none)"
        fits = index in paired and (order == "any" or paired[index] == index)
        mark = "ok" if fits else "!!"
        rows.append(f"  {mark} call {index + 1}: expected {wanted}")
        rows.append(f"             actual   {made}")
    rows += [f"  not executed: {_call_text(call)}" for _, call in counted.left_out or []]
    if calls == "executed":
        rows += [
            f"  edited: {_call_text(ran)} ran, proposed {_call_text(proposed)}"
            for _, proposed, ran in counted.edited
        ]
    raise AssertionError("\n".join(rows))


def _thread(actual: Any) -> ThreadTrajectory:
    value = select_field(actual, "thread", "actual")[0]
    if isinstance(value, ThreadTrajectory):
        return value
    if isinstance(value, Mapping) and "turns" in value:
        return ThreadTrajectory.model_validate(dict(value))
    raise InvalidOptionError(
        "assert_hitl needs the whole thread: graph target outputs (with 'thread'), a "
        f"ThreadTrajectory or its dict; got {type(value).__name__}."
    )


def _pause(item: Any) -> tuple[str, Any, bool]:
    if isinstance(item, str):
        return item, None, False
    if isinstance(item, Mapping) and "path" in item:
        return str(item["path"]), item.get("value"), "value" in item
    raise InvalidOptionError(
        f"an expected interrupt is a node path or a {{'path', 'value'}} dict, not {item!r}"
    )


def assert_hitl(actual: Any, expected: Sequence[Sequence[Any]]) -> None:
    """Assert where the thread paused for a human, turn by turn.

    ``expected[i]`` lists the interrupts pending when turn ``i`` ended: node paths
    (``"tools"``, ``"researcher:deep_dive:verify"``), or ``{"path", "value"}`` dicts
    to check the payload too; ``[]`` for a turn that did not pause.
    """
    __tracebackhide__ = True
    thread = _thread(actual)
    rows: list[str] = []
    bad: list[int] = []
    for index in range(max(len(thread.turns), len(expected))):
        turn = thread.turns[index] if index < len(thread.turns) else None
        have = [(i.path, i.value) for i in turn.interrupts] if turn is not None else None
        want = [_pause(item) for item in expected[index]] if index < len(expected) else None
        ok = (
            have is not None
            and want is not None
            and sorted(p for p, _ in have) == sorted(p for p, _, _ in want)
            and all(
                any(p == hp and (not check or v == hv) for hp, hv in have) for p, v, check in want
            )
        )
        shown_have = "(no turn)" if have is None else _pauses([(p, v, True) for p, v in have])
        shown_want = "(no turn)" if want is None else _pauses(want)
        if ok:
            rows.append(f"  turn {index + 1}: ok        {shown_have}")
            continue
        bad.append(index)
        rows.append(f"  turn {index + 1}: expected  {shown_want}")
        rows.append(f"          actual    {shown_have}")
    if bad:
        which = ", ".join(str(i + 1) for i in bad)
        raise AssertionError(
            "\n".join([f"interrupts do not match; turns differing: {which}", *rows])
        )


def _pauses(items: Sequence[tuple[str, Any, bool]]) -> str:
    if not items:
        return "(no interrupt)"
    return ", ".join(f"{p} asked {v!r}" if check else p for p, v, check in items)
