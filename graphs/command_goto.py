"""Routing with ``Command(goto=..., update=...)`` returned from a node.

Demonstrates edgeless routing: ``triage`` asks the model to classify a support
request and returns ``Command(goto="billing" | "technical", update={"route": ...})``,
so the route and a state update come from the same node result. The return
annotation ``Command[Literal["billing", "technical"]]`` tells LangGraph the
possible destinations.

Default script: two turns on one thread, first a billing request, then a
technical one, each a single model call.
"""

from __future__ import annotations

from typing import Any, Literal, TypedDict

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command

from graphs._scripted import ScriptedChatModel, ai, reply_text, scripted_model


class SupportState(TypedDict, total=False):
    """A support request, the chosen route and the reply."""

    request: str
    route: str
    reply: str


def default_model() -> ScriptedChatModel:
    """A fresh scripted model: classifies one billing, then one technical request."""
    return scripted_model(
        "command-goto-model", ai("goto-ai-1", "billing"), ai("goto-ai-2", "technical")
    )


def billing(state: SupportState) -> dict[str, Any]:
    """Canned billing reply."""
    return {"reply": f"Billing: we will refund the duplicate charge ({state['request']})"}


def technical(state: SupportState) -> dict[str, Any]:
    """Canned technical reply."""
    return {"reply": f"Technical: a ticket was opened ({state['request']})"}


def build(
    checkpointer: BaseCheckpointSaver | None = None, model: BaseChatModel | None = None
) -> CompiledStateGraph:
    """Compile ``triage -> billing | technical`` routed by `Command(goto=...)`."""
    llm = model or default_model()

    def triage(state: SupportState) -> Command[Literal["billing", "technical"]]:
        prompt = [
            SystemMessage("Classify the request. Answer with one word: billing or technical."),
            HumanMessage(state["request"]),
        ]
        label = reply_text(llm.invoke(prompt)).strip().lower()
        route = "billing" if "billing" in label else "technical"
        return Command(goto=route, update={"route": route})

    builder = StateGraph(SupportState)
    builder.add_node("triage", triage)
    builder.add_node("billing", billing)
    builder.add_node("technical", technical)
    builder.add_edge(START, "triage")
    builder.add_edge("billing", END)
    builder.add_edge("technical", END)
    return builder.compile(checkpointer=checkpointer)
