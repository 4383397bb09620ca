"""A small host graph for the eval-node contract: work -> evaluate -> finish, no model.

``run(node)`` runs it on a real SQLite checkpointer (with or without the eval
node) and returns the final state, so a test can compare everything except
``evaluations`` with the run that had no eval node.
"""

from __future__ import annotations

import operator
import sqlite3
from pathlib import Path
from typing import Annotated, Any, TypedDict

from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph

from lg_eval.nodes import Evaluations


class HostState(TypedDict):
    messages: Annotated[list[Any], operator.add]  # what an EvalNode evaluates by default
    log: Annotated[list[str], operator.add]
    count: int
    payload: dict[str, Any]
    evaluations: Evaluations


INPUT: dict[str, Any] = {
    "messages": [{"role": "user", "content": "hi"}],
    "log": ["start"],
    "count": 0,
    "payload": {"items": [1, 2, 3]},
}


def host(node: Any | None, saver: Any) -> Any:
    def work(state: HostState) -> dict[str, Any]:
        reply = {"role": "assistant", "content": "hello"}
        return {"messages": [reply], "log": ["work"], "count": state["count"] + 1}

    def finish(state: HostState) -> dict[str, Any]:
        return {"log": [f"finish:{state['count']}"], "count": state["count"] * 10}

    builder = StateGraph(HostState)
    builder.add_node("work", work)
    builder.add_node("finish", finish)
    builder.add_edge(START, "work")
    if node is None:
        builder.add_edge("work", "finish")
    else:
        builder.add_node("evaluate", node)
        builder.add_edge("work", "evaluate")
        builder.add_edge("evaluate", "finish")
    builder.add_edge("finish", END)
    return builder.compile(checkpointer=saver)


def run(node: Any | None, db: Path, thread_id: str = "t") -> dict[str, Any]:
    """The final state of one run on a SQLite checkpointer stored at ``db``."""
    conn = sqlite3.connect(db, check_same_thread=False)
    try:
        graph = host(node, SqliteSaver(conn))
        config = {"configurable": {"thread_id": thread_id}}
        graph.invoke(dict(INPUT), config)
        return dict(graph.get_state(config).values)
    finally:
        conn.close()


async def arun(node: Any | None, saver: Any, thread_id: str = "t") -> dict[str, Any]:
    graph = host(node, saver)
    config = {"configurable": {"thread_id": thread_id}}
    await graph.ainvoke(dict(INPUT), config)
    return dict((await graph.aget_state(config)).values)


def without_evaluations(state: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in state.items() if k != "evaluations"}
