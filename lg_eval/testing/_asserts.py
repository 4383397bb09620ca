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
from typing import Any, Literal

from lg_eval.errors import InvalidOptionError
from lg_eval.inputs import calls_arg, expected_calls_arg, graph_arg, select_field
from lg_eval.trajectory import ThreadTrajectory

TrajectoryMode = Literal["strict", "unordered", "subset", "superset"]
MODES: tuple[str, ...] = ("strict", "unordered", "subset", "superset")
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
            rows.append(f"  turn {index}: ok        {_show(a)}")
            continue
        bad.append(index)
        rows.append(f"  turn {index}: expected  {_show(e)}")
        rows.append(f"          actual    {_show(a)}")
    if not bad:
        return
    count = "" if len(got) == len(want) else f" ({len(got)} turns, expected {len(want)})"
    which = ", ".join(str(i) for i in bad)
    header = f"trajectory does not match (mode={mode}){count}; turns differing: {which}"
    raise AssertionError("\n".join([header, *rows]))


def _call_text(call: Mapping[str, Any]) -> str:
    args = call.get("args")
    if args is None:
        return f"{call['name']}(...)"
    shown = ", ".join(f"{k}={v!r}" for k, v in args.items())
    return f"{call['name']}({shown})"


def _call_ok(actual: Mapping[str, Any], expected: Mapping[str, Any], args: str) -> bool:
    if actual["name"] != expected["name"]:
        return False
    wanted = expected.get("args")
    if args == "ignore" or wanted is None:
        return True
    have = actual.get("args") or {}
    if args == "subset":
        return all(k in have and have[k] == v for k, v in wanted.items())
    return dict(have) == dict(wanted)


def assert_tool_calls(
    actual: Any,
    expected: Any,
    *,
    order: Literal["exact", "any"] = "exact",
    args: Literal["exact", "subset", "ignore"] = "exact",
) -> None:
    """Assert the tool calls made match ``expected`` (names, or ``{"name", "args"}`` dicts).

    ``order="exact"``: the same calls in the same order; ``"any"``: the same calls
    in any order. ``args``: ``exact``, ``subset`` (the expected arguments are
    present with equal values) or ``ignore``. An expected call without ``args``
    matches any arguments.
    """
    __tracebackhide__ = True
    value = select_field(actual, "messages", "actual")[0]
    got = [dict(c) for c in calls_arg(value, "actual")]
    want = expected_calls_arg(select_field(expected, "messages", "expected")[0], "expected")
    if order == "exact":
        ok = len(got) == len(want) and all(
            _call_ok(a, e, args) for a, e in zip(got, want, strict=True)
        )
    else:
        left = list(got)
        ok = len(got) == len(want)
        for e in want:
            hit = next((a for a in left if _call_ok(a, e, args)), None)
            if hit is None:
                ok = False
                break
            left.remove(hit)
    if ok:
        return
    rows = [f"tool calls do not match (order={order}, args={args})"]
    for index in range(max(len(got), len(want))):
        wanted = _call_text(want[index]) if index < len(want) else "(none)"
        made = _call_text(got[index]) if index < len(got) else "(none)"
        mark = (
            "ok"
            if index < len(got) and index < len(want) and _call_ok(got[index], want[index], args)
            else "!!"
        )
        rows.append(f"  {mark} call {index}: expected {wanted}")
        rows.append(f"             actual   {made}")
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
            rows.append(f"  turn {index}: ok        {shown_have}")
            continue
        bad.append(index)
        rows.append(f"  turn {index}: expected  {shown_want}")
        rows.append(f"          actual    {shown_have}")
    if bad:
        which = ", ".join(str(i) for i in bad)
        raise AssertionError(
            "\n".join([f"interrupts do not match; turns differing: {which}", *rows])
        )


def _pauses(items: Sequence[tuple[str, Any, bool]]) -> str:
    if not items:
        return "(no interrupt)"
    return ", ".join(f"{p} asked {v!r}" if check else p for p, v, check in items)


__all__ = ["MODES", "TrajectoryMode", "assert_hitl", "assert_tool_calls", "assert_trajectory"]
