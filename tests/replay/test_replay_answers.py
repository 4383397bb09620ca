"""Recorded answers reach the new graph in order, also when one node asked several times,
at the top level or inside a subgraph (whose parent checkpoint keeps only the last
``Command(resume=...)`` value), each only for the question it answered where the
checkpoints keep that question; and thread text is rendered so it cannot act."""

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


def _ask_otherwise(state: MessagesState) -> dict[str, Any]:
    first = interrupt("ok?")
    second = interrupt("truly?")
    return {"messages": [("human", f"{first}/{second}")]}


def _more(state: MessagesState) -> dict[str, Any]:
    return {"messages": [("ai", "one more step")]}


def _graph(*, nested: bool, more: bool, checkpointer: Any, asks: Any = _ask) -> Any:
    inner = StateGraph(MessagesState)
    inner.add_node("ask", asks)
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
    builder.add_node("ask", asks)
    builder.add_edge("agent", "ask")
    if more:
        builder.add_edge("ask", "more")
    return builder.compile(checkpointer=checkpointer)


def _asked_twice(nested: bool) -> InMemorySaver:
    """Thread ``a`` of the graph without ``more``: the node asked ``ok?`` (answered
    ``yes``), then ``really?`` (answered ``sure``)."""
    production = InMemorySaver()
    old = _graph(nested=nested, more=False, checkpointer=production)
    config: Any = {"configurable": {"thread_id": "a"}}
    old.invoke({"messages": [("human", "refund please")]}, config)
    old.invoke(Command(resume="yes"), config)
    old.invoke(Command(resume="sure"), config)
    return production


@pytest.mark.parametrize(("nested", "added"), [(True, "+ inner:more"), (False, "+ more")])
def test_a_node_asked_twice_gets_both_answers_in_order(nested: bool, added: str) -> None:
    production = _asked_twice(nested)
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


@pytest.mark.parametrize(("nested", "node"), [(True, "inner"), (False, "ask")])
def test_a_node_that_now_asks_another_second_question_stops_there(nested: bool, node: str) -> None:
    """LangGraph keeps a task's latest question only (``really?``): the answer to it is
    checked; the first answer, whose question the checkpoints lost, goes by order."""
    production = _asked_twice(nested)
    result = replay_threads(
        lambda checkpointer: _graph(
            nested=nested, more=False, checkpointer=checkpointer, asks=_ask_otherwise
        ),
        production,
        baseline=lambda checkpointer: _graph(nested=nested, more=False, checkpointer=checkpointer),
        evaluators=["redundancy"],
        run="r",
    )
    [row] = result.threads
    assert (row.status, row.graph_calls) == ("stopped", 2)  # continue, then "yes" to "ok?"
    assert [(c.node, c.answered, c.asked, c.answer) for c in row.questions_changed] == [
        (node, "really?", "truly?", "sure")
    ]
    assert row.reason == (
        f"question changed at node {node!r}: the recorded answer was given to 'really?'; "
        "the graph now asks 'truly?'"
    )


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
