"""Threads to sweep: a small tool-calling agent played on many threads, with metadata, at
known times (the weather graph's scripted model is one script per graph, not per thread)."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

from langchain_core.messages import AIMessage, ToolMessage
from langgraph.graph import END, START, MessagesState, StateGraph

from lg_eval._evaluator import make_evaluator
from lg_eval._feedback import Feedback


def _turns(*, outputs: Any, **_: Any) -> Feedback:
    """Deterministic and reference-free: the thread's turn count, passing at <= 1."""
    n = len(outputs["trajectory"].turns)
    return Feedback(score=1.0 / n if n else 0.0, comment=f"{n} turns")


turns = make_evaluator("turns", _turns)


def _expects_city(*, outputs: Any, reference_outputs: Any = None, **_: Any) -> Feedback:
    """A user's evaluator reading a reference it does not declare: a swept thread has
    none, so it raises on every thread."""
    return Feedback(score=reference_outputs["city"] in str(outputs["output"]))


expects_city = make_evaluator("expects_city", _expects_city)
EVALUATORS = ["redundancy", "tests.sweeps.helpers:turns"]
GRAPH = "tests.sweeps.helpers:build"


def _agent(state: MessagesState) -> dict[str, Any]:
    last = state["messages"][-1]
    if isinstance(last, ToolMessage):
        return {"messages": [AIMessage(f"It is {last.content} there.")]}
    call = {"name": "get_weather", "args": {"city": str(last.content)}, "id": "call-1"}
    return {"messages": [AIMessage("", tool_calls=[call])]}


def _tools(state: MessagesState) -> dict[str, Any]:
    last = state["messages"][-1]
    assert isinstance(last, AIMessage)
    call = last.tool_calls[0]
    return {"messages": [ToolMessage("sunny", tool_call_id=call["id"])]}


def _route(state: MessagesState) -> str:
    last = state["messages"][-1]
    return "tools" if isinstance(last, AIMessage) and last.tool_calls else END


def build(checkpointer: Any = None) -> Any:
    """agent -> (tools -> agent)* -> END; deterministic, any number of threads."""
    builder = StateGraph(MessagesState)
    builder.add_node("agent", _agent)
    builder.add_node("tools", _tools)
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", _route, ["tools", END])
    builder.add_edge("tools", "agent")
    return builder.compile(checkpointer=checkpointer, name="weather")


def play(graph: Any, thread_id: str, metadata: dict[str, Any] | None = None) -> None:
    """One turn: the user asks about a city."""
    config: Any = {"configurable": {"thread_id": thread_id}, "metadata": metadata or {}}
    graph.invoke({"messages": [("user", "sf")]}, config)


def resume(graph: Any, thread_id: str) -> None:
    """Another turn on the thread: it gets newer checkpoints."""
    graph.invoke({"messages": [("user", "nyc")]}, {"configurable": {"thread_id": thread_id}})


def populate(graph: Any, n_old: int = 12, n_new: int = 12) -> datetime:
    """``n_old`` threads ``old-*``, then (after the returned time) ``n_new`` threads ``new-*``;
    every third thread has metadata ``team=escalated``."""
    for i in range(n_old):
        play(graph, f"old-{i:02d}", {"team": "escalated" if i % 3 == 0 else "base"})
    time.sleep(0.02)
    boundary = datetime.now(UTC)
    time.sleep(0.02)
    for i in range(n_new):
        play(graph, f"new-{i:02d}", {"team": "escalated" if i % 3 == 0 else "base"})
    return boundary


def clone_sqlite(conn: Any, templates: list[str], groups: int) -> list[str]:
    """Copy the SqliteSaver rows of ``templates`` ``groups`` times in SQL, as threads
    ``c<group>-<template>`` (checkpoint ids kept: they are unique per thread only);
    returns the new thread ids. Thousands of threads in a second, without playing them."""
    marks = ", ".join("?" for _ in templates)
    series = "WITH RECURSIVE g(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM g WHERE n + 1 < ?)"
    for table, columns in (
        ("checkpoints", "checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint,"
                        " metadata"),
        ("writes", "checkpoint_ns, checkpoint_id, task_id, idx, channel, type, value"),
    ):  # fmt: skip
        conn.execute(
            f"{series} INSERT INTO {table} (thread_id, {columns}) SELECT 'c' ||"
            f" printf('%07d', g.n) || '-' || t.thread_id, {columns} FROM {table} t, g"
            f" WHERE t.thread_id IN ({marks})",
            [groups, *templates],
        )
    conn.commit()
    return [f"c{g:07d}-{t}" for g in range(groups) for t in templates]
