"""Recorded answers reach the new graph in order, also when one node asked several times,
at the top level or inside a subgraph (whose parent checkpoint keeps only the last
``Command(resume=...)`` value); and thread text is rendered so it cannot act."""

from __future__ import annotations

import json
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.types import Command, interrupt
from rich.console import Console

from lg_eval.replay import ReplayedThread, ReplayResult, replay_threads


def _ask(state: MessagesState) -> dict[str, Any]:
    first = interrupt("ok?")
    second = interrupt("really?")
    return {"messages": [("human", f"{first}/{second}")]}


def _more(state: MessagesState) -> dict[str, Any]:
    return {"messages": [("ai", "one more step")]}


def _graph(*, nested: bool, more: bool, checkpointer: Any) -> Any:
    inner = StateGraph(MessagesState)
    inner.add_node("ask", _ask)
    inner.add_edge(START, "ask")
    if more:
        inner.add_node("more", _more)
        inner.add_edge("ask", "more")
    builder = StateGraph(MessagesState)
    builder.add_node("agent", lambda state: {"messages": [("ai", "let me check")]})
    builder.add_edge(START, "agent")
    if nested:
        builder.add_node("inner", inner.compile())
        builder.add_edge("agent", "inner")
        return builder.compile(checkpointer=checkpointer)
    if more:
        builder.add_node("more", _more)
    builder.add_node("ask", _ask)
    builder.add_edge("agent", "ask")
    if more:
        builder.add_edge("ask", "more")
    return builder.compile(checkpointer=checkpointer)


@pytest.mark.parametrize(("nested", "added"), [(True, "+ inner:more"), (False, "+ more")])
def test_a_node_asked_twice_gets_both_answers_in_order(nested: bool, added: str) -> None:
    production = InMemorySaver()
    old = _graph(nested=nested, more=False, checkpointer=production)
    config: Any = {"configurable": {"thread_id": "a"}}
    old.invoke({"messages": [("human", "refund please")]}, config)
    old.invoke(Command(resume="yes"), config)
    old.invoke(Command(resume="sure"), config)
    target = InMemorySaver()
    result = replay_threads(
        lambda checkpointer: _graph(nested=nested, more=True, checkpointer=checkpointer),
        production,
        baseline=lambda checkpointer: _graph(nested=nested, more=False, checkpointer=checkpointer),
        target=target,
        evaluators=["redundancy"],
        run="r",
    )
    [row] = result.threads
    assert (row.status, row.diff, row.unused_answers) == ("replayed", [added], 0)
    new = _graph(nested=nested, more=True, checkpointer=target)
    messages = new.get_state({"configurable": {"thread_id": "replay:r:a"}}).values["messages"]
    assert [m.content for m in messages[-2:]] == ["yes/sure", "one more step"]


def test_thread_text_cannot_act_on_the_terminal_or_in_the_json() -> None:
    hostile = "t\x1b[2J\u202eevil"
    row = ReplayedThread(thread_id=hostile, status="stopped", fork="last-interrupt",
                         reason=f"the new graph asks {hostile!r}")  # fmt: skip
    result = ReplayResult(graph="g", fork="last-interrupt", target="memory://", threads=[row])
    console = Console(record=True, width=200, force_terminal=True)
    console.print(result.table())
    shown = console.export_text()
    assert "\x1b" not in shown and "\u202e" not in shown and "t␛[2J\\u202eevil" in shown
    text = result.to_json()
    assert "\u202e" not in text and "\\u202e" in text
    assert json.loads(text)["threads"][0]["thread_id"] == hostile
