"""Static breakpoint: the graph is compiled with ``interrupt_before=["send_email"]``.

Demonstrates a pause that no node asks for: ``draft_email`` (a model call)
writes the email, the run stops *before* ``send_email`` without any
`interrupt()` value (`get_state(config).next == ("send_email",)`, no
`Interrupt` objects), and the thread is continued with ``invoke(None, config)``.
"""

from __future__ import annotations

from typing import Any, TypedDict

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from graphs._scripted import ScriptedChatModel, ai, reply_text, scripted_model

EMAIL = "Hi team, the offsite moved to Thursday. See you there!"


class EmailState(TypedDict, total=False):
    """What to write, the drafted email and its delivery status."""

    request: str
    email: str
    status: str


def default_model() -> ScriptedChatModel:
    """A fresh scripted model that drafts the email."""
    return scripted_model("breakpoint-model", ai("breakpoint-ai-1", EMAIL))


def send_email(state: EmailState) -> dict[str, Any]:
    """Pretend to deliver the email."""
    return {"status": f"sent: {state['email']}"}


def build(
    checkpointer: BaseCheckpointSaver | None = None, model: BaseChatModel | None = None
) -> CompiledStateGraph:
    """Compile ``draft_email -> send_email`` with a breakpoint before ``send_email``."""
    llm = model or default_model()

    def draft_email(state: EmailState) -> dict[str, Any]:
        prompt = [SystemMessage("Write a short team email."), HumanMessage(state["request"])]
        return {"email": reply_text(llm.invoke(prompt))}

    builder = StateGraph(EmailState)
    builder.add_node("draft_email", draft_email)
    builder.add_node("send_email", send_email)
    builder.add_edge(START, "draft_email")
    builder.add_edge("draft_email", "send_email")
    builder.add_edge("send_email", END)
    return builder.compile(checkpointer=checkpointer, interrupt_before=["send_email"])
