"""The terminal trajectory table prints thread text as the characters it is."""

from __future__ import annotations

import io
from typing import TypedDict

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from rich.console import Console

from lg_eval import extract_thread
from lg_eval._display import print_trajectory, trajectory_text

HOSTILE = "[link=http://x]click[/link] \x1b[31mred\x1b]8;;http://x\x07"


class State(TypedDict, total=False):
    text: str


def echo(state: State) -> State:
    return {"text": state["text"]}


def test_markup_and_escape_sequences_in_a_thread_are_shown_not_obeyed() -> None:
    graph = StateGraph(State).add_node(echo).add_edge(START, "echo")
    app = graph.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t\x1b[2J"}}  # a screen-clearing escape
    app.invoke({"text": HOSTILE}, config)
    out = io.StringIO()
    print_trajectory(extract_thread(app, config), console=Console(file=out, width=300))
    printed = out.getvalue()
    assert "\x1b" not in printed and "\x07" not in printed
    assert "[link=http://x]click[/link]" in printed  # rich markup printed as written
    assert "\\u001b[31mred\\u001b]8;;http://x\\u0007" in printed  # values: JSON escapes
    assert "thread t␛[2J" in printed  # plain text: control characters as Control Pictures


def hostile_thread():
    graph = StateGraph(State).add_node(echo).add_edge(START, "echo")
    app = graph.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t\x1b[2J"}}
    app.invoke({"text": HOSTILE}, config)
    return extract_thread(app, config)


def test_str_of_a_thread_is_its_table_as_plain_text() -> None:
    thread = hostile_thread()
    text = str(thread)
    assert text == trajectory_text(thread)
    lines = text.splitlines()
    assert lines[0].strip() == "thread t␛[2J"
    header = [cell.strip() for cell in lines[2].split("┃")[1:-1]]
    assert header == ["#", "started by", "steps", "status", "result / pause"]
    assert "__start__ → echo" in text and "completed" in text
    assert "\x1b" not in text and "\x07" not in text
    assert all(line == line.rstrip() for line in lines)


def test_rich_print_of_a_thread_renders_the_same_table() -> None:
    thread = hostile_thread()
    out = io.StringIO()
    Console(file=out, width=88, color_system=None).print(thread)
    shown = "\n".join(line.rstrip() for line in out.getvalue().splitlines()).strip("\n")
    assert shown == str(thread)
    assert repr(thread).startswith("ThreadTrajectory(thread_id=")
