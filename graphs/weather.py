"""ReAct weather agent whose tool asks a human (the agentevals README scenario).

Demonstrates an interrupt raised *inside a tool*: the `get_weather` tool calls
`langgraph.types.interrupt()` to ask a person for the weather, so the thread
pauses in the "tools" node and the resume re-runs that node.

Graph: ``__start__ -> agent -> (tools -> agent)* -> __end__`` over `MessagesState`.

Default script (thread turns):

1. input ``{"messages": [("user", "what's the weather in sf?")]}`` -> ``agent``
   calls ``get_weather(city="sf")`` -> ``tools`` pauses with the interrupt value
   ``"Tell me the weather for sf"``.
2. ``Command(resume="It's sunny and 75 degrees")`` -> ``tools`` re-runs and returns
   the human's answer -> ``agent`` answers
   ``"The weather in sf is sunny and 75 degrees."``.
"""

from __future__ import annotations

from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import interrupt

from graphs._scripted import ScriptedChatModel, ai, scripted_model, tool_call

QUESTION = "what's the weather in sf?"
HUMAN_ANSWER = "It's sunny and 75 degrees"
FINAL_ANSWER = "The weather in sf is sunny and 75 degrees."


@tool
def get_weather(city: str) -> str:
    """Get the current weather for a city (answered by a human)."""
    return interrupt(f"Tell me the weather for {city}")


TOOLS = [get_weather]


def default_model() -> ScriptedChatModel:
    """A fresh scripted model: one `get_weather` call, then the final answer."""
    return scripted_model(
        "weather-model",
        ai("weather-ai-1", "", tool_call("get_weather", {"city": "sf"}, "call_weather_sf")),
        ai("weather-ai-2", FINAL_ANSWER),
    )


def build(
    checkpointer: BaseCheckpointSaver | None = None, model: BaseChatModel | None = None
) -> CompiledStateGraph:
    """Compile the weather ReAct agent (nodes "agent" and "tools")."""
    llm = (model or default_model()).bind_tools(TOOLS)
    tools_by_name = {t.name: t for t in TOOLS}

    def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [llm.invoke(state["messages"])]}

    def tools(state: MessagesState) -> dict[str, Any]:
        last = state["messages"][-1]
        assert isinstance(last, AIMessage)
        results: list[ToolMessage] = []
        for call in last.tool_calls:
            result = tools_by_name[call["name"]].invoke(call)
            result.id = f"tool-{call['id']}"
            results.append(result)
        return {"messages": results}

    def route(state: MessagesState) -> str:
        last = state["messages"][-1]
        return "tools" if isinstance(last, AIMessage) and last.tool_calls else END

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_node("tools", tools)
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", route, ["tools", END])
    builder.add_edge("tools", "agent")
    return builder.compile(checkpointer=checkpointer)
