"""Host graphs for EvalNode tests: the weather agent with an eval node after the model.

Graph: ``__start__ -> agent -> evaluate -> (tools -> agent ...)* -> __end__``;
the scripted model calls ``get_weather(city="sf")`` (the tool interrupts for a
human answer), then answers. Two turns: the question, then the resume.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langchain_core.messages import AIMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command

from graphs import weather
from graphs.scenarios import user
from lg_eval.nodes import EvalMessagesState

QUESTION = {"messages": [user(weather.QUESTION, "weather-human-1")]}
RESUME = Command(resume=weather.HUMAN_ANSWER)
EXPECTED_TOOLS = ["get_weather"]


def config(thread_id: str = "host", **configurable: Any) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id, **configurable}}


def weather_host(
    node: Any,
    *,
    checkpointer: BaseCheckpointSaver | None = None,
    state: type = EvalMessagesState,
    node_name: str = "evaluate",
) -> CompiledStateGraph:
    """The weather agent with ``node`` between the model and the tool router."""
    llm = weather.default_model()
    tools_by_name = {t.name: t for t in weather.TOOLS}

    def agent(state: dict[str, Any]) -> dict[str, Any]:
        return {"messages": [llm.invoke(state["messages"])]}

    def tools(state: dict[str, Any]) -> dict[str, Any]:
        results = []
        for call in state["messages"][-1].tool_calls:
            result = tools_by_name[call["name"]].invoke(call)
            result.id = f"tool-{call['id']}"
            results.append(result)
        return {"messages": results}

    def route(state: dict[str, Any]) -> str:
        last = state["messages"][-1]
        return "tools" if isinstance(last, AIMessage) and last.tool_calls else END

    builder = StateGraph(state)
    builder.add_node("agent", agent)
    builder.add_node(node_name, node)
    builder.add_node("tools", tools)
    builder.add_edge(START, "agent")
    builder.add_edge("agent", node_name)
    builder.add_conditional_edges(node_name, route, ["tools", END])
    builder.add_edge("tools", "agent")
    return builder.compile(checkpointer=checkpointer)


def aware_host(make_node: Callable[[Callable[[], Any]], Any], **options: Any) -> Any:
    """``weather_host`` whose node is built with a reference to the compiled graph."""
    compiled: list[CompiledStateGraph] = []
    graph = weather_host(make_node(lambda: compiled[0]), **options)
    compiled.append(graph)
    return graph


def run_both_turns(graph: CompiledStateGraph, cfg: dict[str, Any], **kwargs: Any) -> None:
    graph.invoke(QUESTION, cfg, **kwargs)
    graph.invoke(RESUME, cfg, **kwargs)


async def arun_both_turns(graph: CompiledStateGraph, cfg: dict[str, Any]) -> None:
    await graph.ainvoke(QUESTION, cfg)
    await graph.ainvoke(RESUME, cfg)


def evaluate_checkpoints(graph: CompiledStateGraph, cfg: dict[str, Any]) -> list[str]:
    """Ids of the checkpoints the eval node ran at (planned ``evaluate``), oldest first."""
    history = list(graph.get_state_history(cfg))
    return [
        s.config["configurable"]["checkpoint_id"]
        for s in reversed(history)
        if s.next == ("evaluate",)
    ]
