"""Trajectories as prompt text: graph threads (full or flat) and message lists.

Every renderer takes a :class:`~lg_eval.judges._text.Compression` and a
:class:`~lg_eval.judges._text.Tally`, so :func:`render_fitted` can squeeze it
into a character budget deterministically (see :mod:`lg_eval.judges._text`).

Everything a thread holds is untrusted here, not only values: node names and
paths, interrupt ids, roles, tool names and call ids all pass through
:func:`~lg_eval.judges._text.escape` (values through ``render_value``, which
escapes), so no part of a thread can close the ``<turn>`` or ``<thread>`` fence.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Hashable
from typing import Any

from lg_eval._trajectory import (
    INTERRUPT,
    GraphTrajectory,
    InterruptRecord,
    Superstep,
    TaskRun,
    ThreadTrajectory,
    Turn,
)
from lg_eval.judges._text import (
    Compression,
    Rendered,
    Tally,
    cut_text,
    escape,
    fit,
    render_value,
    runs,
    section,
    with_elision,
)
from lg_eval.messages import message_text

# --- graph trajectories -------------------------------------------------------------------


def render_graph(
    trajectory: ThreadTrajectory | GraphTrajectory, level: Compression, tally: Tally
) -> str:
    """The turns of a graph trajectory, one ``<turn>`` block each."""
    if isinstance(trajectory, ThreadTrajectory):
        paths = _interrupt_paths(trajectory.turns)
        blocks = with_elision(
            trajectory.turns,
            level.keep,
            "turns",
            tally,
            lambda _, turn: _thread_turn(turn, paths, level, tally),
        )
    else:
        rows = list(zip(trajectory.inputs, trajectory.results, trajectory.steps, strict=True))
        blocks = with_elision(
            rows, level.keep, "turns", tally, lambda i, row: _flat_turn(i, *row, level, tally)
        )
    return "\n\n".join(blocks)


def _flat_turn(
    index: int, input: Any, result: Any, steps: list[str], level: Compression, tally: Tally
) -> str:
    parts = []
    for start, period, count in runs(steps, lambda name: name, level):
        block = " -> ".join(escape(step) for step in steps[start : start + period])
        if count > 1:
            tally.loops += 1
            block = f"({block}) x{count}"
        parts.append(block)
    return "\n".join(
        [
            f'<turn number="{index + 1}">',
            section("input", render_value(input, level, tally)),
            section("steps", " -> ".join(parts)),
            section("result", render_value(result, level, tally)),
            "</turn>",
        ]
    )


def _thread_turn(turn: Turn, paths: dict[str, str], level: Compression, tally: Tally) -> str:
    branched = ' branched="true"' if turn.branched else ""
    number, kind, status = turn.index + 1, escape(turn.kind), escape(turn.status)
    head = f'<turn number="{number}" kind="{kind}" status="{status}"'
    lines = [f"{head}{branched}>"]
    if turn.edits:
        edits = [
            (f"as {escape(e.as_node)}: " if e.as_node else "")
            + render_value(e.values, level, tally)
            for e in turn.edits
        ]
        lines.append(section("state_edits", "\n".join(edits)))
    if turn.kind == "input":
        lines.append(section("input", render_value(turn.input, level, tally)))
    elif turn.kind == "resume":
        lines.append(section("human_resume", _resume(turn, paths, level, tally)))
    steps = _supersteps(turn.supersteps, 0, level, tally)
    steps.extend(_pending(turn))
    lines.append(section("steps", "\n".join(steps)))
    if turn.status == "completed":
        lines.append(section("result", render_value(turn.result, level, tally)))
    if turn.error:
        lines.append(section("error", cut_text(turn.error, level, tally)))
    lines.append("</turn>")
    return "\n".join(lines)


def _resume(turn: Turn, paths: dict[str, str], level: Compression, tally: Tally) -> str:
    if turn.resume:
        return "\n".join(
            f"{escape(paths[iid])} (interrupt {escape(iid)}): {render_value(value, level, tally)}"
            if iid in paths
            else f"interrupt {escape(iid)}: {render_value(value, level, tally)}"
            for iid, value in turn.resume.items()
        )
    if turn.resume_by_node:
        return "\n".join(
            f"{escape(path)}: {render_value(value, level, tally)}"
            for path, value in turn.resume_by_node.items()
        )
    return "(no resume value recorded)"


def _interrupt_paths(turns: list[Turn]) -> dict[str, str]:
    paths: dict[str, str] = {}
    for turn in turns:
        records = [*turn.interrupts, *(r for t in turn.iter_tasks() for r in t.interrupts)]
        paths.update((r.id, r.path) for r in records if r.id and r.path)
    return paths


def _supersteps(steps: list[Superstep], depth: int, level: Compression, tally: Tally) -> list[str]:
    indent = "  " * depth
    lines: list[str] = []
    for start, period, count in runs(steps, _step_key, level):
        for superstep in steps[start : start + period]:
            for task in superstep.tasks:
                lines.extend(_task(superstep.step, task, depth, level, tally))
        if count > 1:
            tally.loops += 1
            first, last = steps[start].step, steps[start + period * count - 1].step
            lines.append(
                f"{indent}[steps {first}-{last}: the {period} step(s) above ran {count} times "
                "in a row; the repetitions are not shown]"
            )
    return lines


def _task(step: int, task: TaskRun, depth: int, level: Compression, tally: Tally) -> list[str]:
    indent = "  " * depth
    lines = [f"{indent}step {step}: {escape(task.path)}" + (" (resumed)" if task.resumed else "")]
    lines.extend(f"{indent}  {_interrupt(r, level, tally)}" for r in task.interrupts)
    if task.error:
        lines.append(f"{indent}  error: {cut_text(task.error, level, tally)}")
    lines.extend(_supersteps(task.subgraph, depth + 1, level, tally))
    return lines


def _interrupt(record: InterruptRecord, level: Compression, tally: Tally) -> str:
    label = f"{INTERRUPT} (id {escape(record.id)})" if record.id else INTERRUPT
    return f"{label}: {render_value(record.value, level, tally)}"


def _pending(turn: Turn) -> list[str]:
    """Pauses no task listed: a static breakpoint, or interrupts only the turn recorded."""
    shown = {(r.id, r.path) for t in turn.iter_tasks() for r in t.interrupts}
    lines = []
    for record in turn.interrupts:
        if (record.id, record.path) not in shown:
            ident = f" (id {escape(record.id)})" if record.id else ""
            value = "" if record.value is None else f": {render_value(record.value)}"
            where = escape(record.path) if record.path else "the graph"
            lines.append(f"{INTERRUPT} at {where}{ident}{value}")
    if turn.breakpoint:
        nodes = ", ".join(escape(node) for node in turn.next_nodes)
        before = f" before {nodes}" if turn.next_nodes else ""
        lines.append(f"{INTERRUPT}{before} (static breakpoint)")
    return lines


def _task_key(task: TaskRun) -> Hashable | None:
    if task.interrupts or task.error or task.resumed:
        return None
    nested = tuple(_step_key(s) for s in task.subgraph)
    return None if None in nested else (task.path, nested)


def _step_key(superstep: Superstep) -> Hashable | None:
    keys = tuple(_task_key(t) for t in superstep.tasks)
    return None if not keys or None in keys else keys


# --- message trajectories -----------------------------------------------------------------


def render_messages(messages: list[dict[str, Any]], level: Compression, tally: Tally) -> str:
    """OpenAI-format messages, one entry per message, tool calls on indented lines."""
    names = {
        call.get("id"): _call_parts(call)[0]
        for message in messages
        for call in message.get("tool_calls") or []
    }
    keep = level.keep * 4 if level.keep else None
    entries: list[str] = []
    for start, period, count in runs(messages, _message_key, level):
        entries.extend(_message(m, names, level, tally) for m in messages[start : start + period])
        if count > 1:
            tally.loops += 1
            entries.append(
                f"[the {period} message(s) above repeat {count - 1} more time(s) with the same "
                "tools; those repetitions are not shown]"
            )
    return "\n".join(with_elision(entries, keep, "messages", tally, lambda _, e: e))


def _message(
    message: dict[str, Any], names: dict[str, str], level: Compression, tally: Tally
) -> str:
    role = message.get("role", "unknown")
    text = render_value(message_text(message), level, tally)
    if role == "tool":
        call_id = message.get("tool_call_id")
        name = message.get("name") or (names.get(call_id) if call_id else None) or ""
        ident = f"[{call_id}]" if call_id else ""
        label = " ".join(escape(str(p)) for p in ("tool", name, ident) if p)
        return f"{label}: {text}"
    shown = escape(str(role))
    lines = [f"{shown}: {text}" if text else f"{shown}:"]
    for call in message.get("tool_calls") or []:
        name, args = _call_parts(call)
        ident = f" [{escape(str(call['id']))}]" if call.get("id") else ""
        lines.append(f"  calls {escape(str(name))}({render_value(args, level, tally)}){ident}")
    return "\n".join(lines)


def _call_parts(call: dict[str, Any]) -> tuple[str, Any]:
    if "function" in call:
        function = call["function"]
        arguments = function.get("arguments")
        with contextlib.suppress(json.JSONDecodeError):
            arguments = json.loads(arguments) if isinstance(arguments, str) else arguments
        return function.get("name", ""), arguments
    return call.get("name", ""), call.get("args")


def _message_key(message: dict[str, Any]) -> Hashable | None:
    """Tool-calling messages repeat when they use the same tools; others never do."""
    calls = message.get("tool_calls") or []
    if calls:
        return ("assistant", tuple(_call_parts(c)[0] for c in calls))
    if message.get("role") == "tool":
        return ("tool", message.get("name"))
    return None


def render_trajectory(value: Any, level: Compression, tally: Tally) -> str:
    """Any coerced trajectory (graph, messages, or a plain value) as prompt text."""
    if isinstance(value, ThreadTrajectory | GraphTrajectory):
        return render_graph(value, level, tally)
    if isinstance(value, list) and all(isinstance(m, dict) and "role" in m for m in value):
        return render_messages(value, level, tally)
    return render_value(value, level, tally)


def render_fitted(value: Any, budget: int | None) -> Rendered:
    """A coerced trajectory (or any value) as text within ``budget`` characters."""
    return fit(lambda level, tally: render_trajectory(value, level, tally), budget)
