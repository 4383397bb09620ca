"""A support agent that refunds only what a human approved (issue 30's user scenario).

Demonstrates human review of a proposed tool call: the model calls
``lookup_order``, then proposes ``refund``; before the refund runs, the
``approval`` node asks a human with ``interrupt()`` and routes with
``Command(goto=...)``: on approval to ``tools`` (a ``ToolNode`` with both
tools), on rejection back to ``agent`` with a tool message answering the call
in the tool's place, marked with ``add_notification_metadata`` as LangChain's
``HumanInTheLoopMiddleware`` marks its own.

``build(regressed=True)`` is the same graph with a bug: ``approval`` always
routes to ``tools``, so a rejected refund is executed anyway.

Graph: ``__start__ -> agent -> (tools | approval -> (tools | agent))* -> __end__``.

Default script (thread turns):

1. input ``{"messages": [("user", "Please refund order 42")]}`` -> ``agent`` calls
   ``lookup_order(order_id="42")`` -> ``tools`` -> ``agent`` proposes
   ``refund(order_id="42", amount=30.0)`` -> ``approval`` pauses with
   ``{"question": "Approve this refund?", "tool": "refund", "args": {...}}``.
2. ``Command(resume="approve" | "reject")`` -> ``approval`` routes -> ... -> ``agent``
   answers ``"Your refund request for order 42 is handled."``.
"""

from __future__ import annotations

from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.messages.notification import add_notification_metadata
from langchain_core.tools import tool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.prebuilt import ToolNode
from langgraph.types import Command, interrupt

from graphs._scripted import ScriptedChatModel, ai, scripted_model, tool_call

REQUEST = "Please refund order 42"
QUESTION = "Approve this refund?"
FINAL_ANSWER = "Your refund request for order 42 is handled."
REFUND_ARGS = {"order_id": "42", "amount": 30.0}


@tool
def lookup_order(order_id: str) -> dict[str, Any]:
    """Look an order up: its amount and status."""
    return {"order_id": order_id, "amount": 30.0, "status": "delivered"}


@tool
def refund(order_id: str, amount: float) -> str:
    """Refund an order."""
    return f"Refunded {amount:.2f} for order {order_id}."


def default_model() -> ScriptedChatModel:
    """A fresh scripted model: look the order up, propose the refund, then answer."""
    return scripted_model(
        "support-model",
        ai("support-ai-1", "", tool_call("lookup_order", {"order_id": "42"}, "call-lookup")),
        ai("support-ai-2", "", tool_call("refund", dict(REFUND_ARGS), "call-refund")),
        ai("support-ai-3", FINAL_ANSWER),
    )


def build(
    checkpointer: BaseCheckpointSaver | None = None,
    model: BaseChatModel | None = None,
    *,
    regressed: bool = False,
) -> CompiledStateGraph:
    """Compile the support agent (``regressed=True``: rejected refunds run anyway)."""
    llm = (model or default_model()).bind_tools([lookup_order, refund])

    def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [llm.invoke(state["messages"])]}

    def route(state: MessagesState) -> str:
        last = state["messages"][-1]
        if not isinstance(last, AIMessage) or not last.tool_calls:
            return END
        return "approval" if any(c["name"] == "refund" for c in last.tool_calls) else "tools"

    def approval(state: MessagesState) -> Command[Literal["tools", "agent"]]:
        call = next(c for c in state["messages"][-1].tool_calls if c["name"] == "refund")
        decision = interrupt({"question": QUESTION, "tool": call["name"], "args": call["args"]})
        if decision == "approve" or regressed:
            return Command(goto="tools")
        answer = ToolMessage(
            "The reviewer rejected this refund; it was not made.",
            tool_call_id=call["id"],
            name=call["name"],
            status="error",
        )
        marked = add_notification_metadata(
            answer, source="refund_review", data={"decision": "reject"}
        )
        return Command(goto="agent", update={"messages": [marked]})

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode([lookup_order, refund]))
    builder.add_node("approval", approval)
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", route, ["tools", "approval", END])
    builder.add_edge("tools", "agent")
    return builder.compile(checkpointer=checkpointer)


def build_regressed(
    checkpointer: BaseCheckpointSaver | None = None, model: BaseChatModel | None = None
) -> CompiledStateGraph:
    """The regressed agent, as a factory a dataset can name (``graphs.support:build_regressed``)."""
    return build(checkpointer, model, regressed=True)
