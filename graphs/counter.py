"""Two nodes and no model: ``add`` (x + 1) then ``double`` (2x).

The smallest graph a case can run, for measuring what a harness adds per case
(``tests/benchmarks/bench_footprint.py``) and what a run imports (``tests/test_startup.py``).
"""

from __future__ import annotations

from typing import Any, TypedDict

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph


class Count(TypedDict):
    x: int


def build(checkpointer: BaseCheckpointSaver[Any] | None = None) -> CompiledStateGraph:
    builder = StateGraph(Count)
    builder.add_node("add", lambda state: {"x": state["x"] + 1})
    builder.add_node("double", lambda state: {"x": state["x"] * 2})
    builder.add_edge(START, "add")
    builder.add_edge("add", "double")
    builder.add_edge("double", END)
    return builder.compile(checkpointer=checkpointer)
