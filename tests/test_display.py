"""The terminal trajectory table prints thread text as the characters it is."""

from __future__ import annotations

import io
from typing import TypedDict

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from rich.console import Console

from lg_eval import extract_thread
from lg_eval.display import print_trajectory

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
