"""A graph a tool invokes (not a declared subgraph, not in a node's closure): LangGraph's
``get_state`` reads its namespace with the root graph's nodes; lg_eval finds the graph
the tool invokes and reads the namespace with it. Expectations come from the stream."""

from __future__ import annotations

import operator
import warnings
from typing import Annotated, Any, TypedDict

import pytest
from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode
from langgraph.types import Command, interrupt

from graphs.scenarios import Scenario, Turn
from lg_eval import ExtractionWarning, extract_thread
from lg_eval.extract._subgraphs import namespace_graph
from tests.extract.live import check, record

CONFIG = {"configurable": {"thread_id": "t"}}


class Notes(TypedDict, total=False):
    notes: Annotated[list[str], operator.add]


def _expert() -> Any:
    """``research -> ask -> write``: node names the calling graph does not have."""
    builder = StateGraph(Notes)
    builder.add_node("research", lambda state: {"notes": ["found"]})
    builder.add_node("ask", lambda state: {"notes": [interrupt("Publish the findings?")]})
    builder.add_node("write", lambda state: {"notes": ["written"]})
    builder.add_edge(START, "research")
    builder.add_edge("research", "ask")
    builder.add_edge("ask", "write")
    return builder.compile()


def build(checkpointer: Any = None) -> Any:
    """``plan -> tools``: ``plan`` calls the ``consult`` tool, which invokes the expert."""
    expert = _expert()

    @tool
    def consult(topic: str) -> str:
        """Ask the expert team about a topic."""
        return ", ".join(expert.invoke({"notes": [topic]})["notes"])

    def plan(state: MessagesState) -> dict[str, Any]:
        call = {"name": "consult", "args": {"topic": "tides"}, "id": "call-1"}
        return {"messages": [AIMessage("", tool_calls=[call])]}

    builder = StateGraph(MessagesState).add_sequence(
        [("plan", plan), ("tools", ToolNode([consult]))]
    )
    return builder.add_edge(START, "plan").compile(checkpointer=checkpointer)


SCENARIO = Scenario(
    "graph_in_tool",
    "A tool invokes a compiled graph whose node asks the human.",
    build,
    [Turn({"messages": [("user", "tides?")]}), Turn(Command(resume="yes"))],
)


@pytest.mark.parametrize("reader", ["fast", "generic"])
def test_a_graph_a_tool_invokes_is_read_with_its_own_nodes(reader: str, saver: Any) -> None:
    graph, live = record(SCENARIO, saver)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ExtractionWarning)
        trajectory = extract_thread(graph, CONFIG, reader=reader)
    check(trajectory, live)
    assert [i.path for i in trajectory.turns[0].interrupts] == ["tools:ask"]
    assert trajectory.turns[1].resume_by_node == {"tools:ask": "yes"}


def test_langgraph_does_not_name_that_graph_and_lg_eval_does(saver: Any) -> None:
    graph = SCENARIO.played(saver)
    ns = next(
        t.config["configurable"]["checkpoint_ns"]
        for t in saver.list(CONFIG)
        if t.config["configurable"]["checkpoint_ns"]
    )
    snapshots = graph.get_state_history({"configurable": {"thread_id": "t", "checkpoint_ns": ns}})
    assert {t.name for s in snapshots for t in s.tasks} <= {"__start__", "plan", "tools"}
    found = namespace_graph(graph, ns)
    assert found is not None and set(found.nodes) == {"__start__", "research", "ask", "write"}
