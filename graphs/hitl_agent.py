"""Email agent built with `create_agent` and `HumanInTheLoopMiddleware`.

Demonstrates the prebuilt LangChain agent (nodes ``model``, ``tools`` and
``HumanInTheLoopMiddleware.after_model``) where a person approves or rejects
tool calls. ``read_inbox`` runs freely; ``send_email`` is gated
(``allowed_decisions=["approve", "reject"]``), so after the model proposes it the
``HumanInTheLoopMiddleware.after_model`` node interrupts with a ``HITLRequest``::

    {"action_requests": [{"name": "send_email", "args": {...},
                          "description": "Tool execution requires approval\\n\\n..."}],
     "review_configs": [{"action_name": "send_email",
                         "allowed_decisions": ["approve", "reject"]}]}

and is resumed with ``Command(resume={"decisions": [{"type": "approve"}]})`` or
``{"decisions": [{"type": "reject", "message": "..."}]}``. A rejection becomes an
error `ToolMessage` and the model is asked again; the tool never runs.
"""

from __future__ import annotations

from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_core.language_models import BaseChatModel
from langchain_core.tools import tool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph.state import CompiledStateGraph

from graphs._scripted import ScriptedChatModel, ai, scripted_model, tool_call

INBOX = "1 unread: from bob@example.com, 'Lunch on Friday?'"
REPLY_TO_BOB = {"to": "bob@example.com", "subject": "Re: Lunch", "body": "Friday works for me."}
EMAIL_ALL = {"to": "all@example.com", "subject": "Lunch", "body": "Lunch with Bob on Friday."}
ANSWER_1 = "Bob asked about lunch on Friday; I replied that Friday works."
ANSWER_2 = "Understood, I did not email the whole company."
SYSTEM_PROMPT = "You are an email assistant. Use the tools to read and send email."


@tool
def read_inbox() -> str:
    """Read the unread messages in the user's inbox."""
    return INBOX


@tool
def send_email(to: str, subject: str, body: str) -> str:
    """Send an email."""
    return f"Email sent to {to}."


TOOLS = [read_inbox, send_email]


def default_model() -> ScriptedChatModel:
    """A fresh scripted model for the two-request email conversation."""
    return scripted_model(
        "hitl-agent-model",
        ai("hitl-ai-1", "", tool_call("read_inbox", {}, "call_read_inbox")),
        ai("hitl-ai-2", "", tool_call("send_email", REPLY_TO_BOB, "call_email_bob")),
        ai("hitl-ai-3", ANSWER_1),
        ai("hitl-ai-4", "", tool_call("send_email", EMAIL_ALL, "call_email_all")),
        ai("hitl-ai-5", ANSWER_2),
    )


def build(
    checkpointer: BaseCheckpointSaver | None = None, model: BaseChatModel | None = None
) -> CompiledStateGraph:
    """Compile the email agent with human approval of ``send_email``."""
    middleware = HumanInTheLoopMiddleware(
        interrupt_on={"send_email": {"allowed_decisions": ["approve", "reject"]}}
    )
    return create_agent(
        model or default_model(),
        tools=TOOLS,
        system_prompt=SYSTEM_PROMPT,
        middleware=[middleware],
        checkpointer=checkpointer,
    )
