"""Readable terminal views of trajectories (``rich`` tables).

``print(thread)`` shows :func:`trajectory_text`; ``rich.print(thread)`` and
:func:`print_trajectory` show :func:`trajectory_table` in colour.

Text from threads is written by strangers: every cell is a ``rich.text.Text``
(never parsed as markup) with control characters shown visibly, so a message
holding ``[link=...]`` or an ANSI escape prints as the characters it is.
"""

from __future__ import annotations

import io
import json
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from lg_eval._trajectory import ResumedMode, ThreadTrajectory, Turn
from lg_eval._visible import visible

MAX_CELL = 90


def _short(value: Any, limit: int = MAX_CELL) -> str:
    """One line of at most ``limit`` characters for a value of any kind."""
    try:
        text = (
            value if isinstance(value, str) else json.dumps(value, default=str, ensure_ascii=False)
        )
    except (TypeError, ValueError):
        text = repr(value)
    text = visible(" ".join(text.split()))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _started_by(turn: Turn) -> str:
    if turn.kind == "input":
        return f"input {_short(turn.input, 60)}"
    if turn.kind == "resume":
        return f"resume {_short(turn.resume_by_node, 60)}"
    return "continue (invoke None)"


def _outcome(turn: Turn) -> str:
    if turn.status == "interrupted":
        if turn.breakpoint:
            return f"breakpoint before {', '.join(turn.next_nodes)}"
        return "interrupt " + _short([i.value for i in turn.interrupts], 60)
    if turn.status == "error":
        return f"error {_short(turn.error, 60)}"
    return _short(_last_message_text(turn.result))


def _last_message_text(result: Any) -> Any:
    """A messages state's result shown as its last message's text; other results as they are."""
    messages = result.get("messages") if isinstance(result, dict) else None
    last = messages[-1] if isinstance(messages, list) and messages else None
    content = last.get("content") if isinstance(last, dict) else getattr(last, "content", None)
    return content if isinstance(content, str) else result


def trajectory_table(trajectory: ThreadTrajectory, resumed: ResumedMode = "omit") -> Table:
    """A table with one row per turn: what started it, the nodes that ran, how it ended."""
    flat = trajectory.to_graph_trajectory(resumed=resumed)
    title = Text(f"thread {visible(str(trajectory.thread_id))}")
    table = Table(title=title, show_lines=True, expand=False)
    table.add_column("#", justify="right")
    table.add_column("started by", overflow="fold", max_width=40)
    table.add_column("steps", overflow="fold")
    table.add_column("status")
    table.add_column("result / pause", overflow="fold", max_width=50)
    for turn, steps in zip(trajectory.turns, flat.steps, strict=True):
        table.add_row(
            str(turn.index + 1),
            Text(_started_by(turn)),
            Text(" → ".join(visible(step) for step in steps)),
            turn.status,
            Text(_outcome(turn)),
        )
    return table


def trajectory_text(
    trajectory: ThreadTrajectory, resumed: ResumedMode = "omit", width: int = 88
) -> str:
    """:func:`trajectory_table` and any extraction warnings as plain text (no colour codes),
    what ``str(thread)`` and ``print(thread)`` show."""
    buffer = io.StringIO()
    console = Console(file=buffer, width=width, color_system=None, highlight=False)
    print_trajectory(trajectory, console=console, resumed=resumed)
    return "\n".join(line.rstrip() for line in buffer.getvalue().splitlines()).strip("\n")


def print_trajectory(
    trajectory: ThreadTrajectory, console: Console | None = None, resumed: ResumedMode = "omit"
) -> None:
    """Print :func:`trajectory_table`, then any extraction warnings."""
    console = console or Console()
    console.print(trajectory_table(trajectory, resumed=resumed))
    for warning in trajectory.warnings:
        console.print(Text("warning: ", style="yellow") + Text(visible(warning)))
