"""Approval workflows: parallel interrupts, and one node that interrupts twice.

`build()` demonstrates two interrupts pending *at the same time*: after
``draft`` (which calls the model), ``legal_review`` and ``finance_review`` run in
the same superstep and both call `interrupt()`. A single
``Command(resume={legal_interrupt_id: ..., finance_interrupt_id: ...})`` answers
both, then ``finalize`` joins them.

Each reviewer interrupts with
``{"reviewer": "legal" | "finance", "question": ..., "draft": <draft text>}`` and
expects ``{"approved": bool, "comment": str}`` back.

`build_double_check()` demonstrates a node that calls `interrupt()` twice in
sequence (``confirm_payment``), so it needs two resumes and is re-run from the
top each time, then ``pay``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypedDict

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import interrupt

from graphs._scripted import ScriptedChatModel, ai, reply_text, scripted_model

DRAFT = "Proposal: buy 3 laptops for the design team, total 4,500 EUR."


class ApprovalState(TypedDict, total=False):
    """Request, model-written draft, the two reviews and the outcome."""

    request: str
    draft: str
    legal: dict[str, Any]
    finance: dict[str, Any]
    decision: str


def default_model() -> ScriptedChatModel:
    """A fresh scripted model that writes the draft."""
    return scripted_model("approval-model", ai("approval-ai-1", DRAFT))


def _review(reviewer: str, question: str) -> Callable[[ApprovalState], dict[str, Any]]:
    """A reviewer node that interrupts with the draft and stores the answer."""

    def review(state: ApprovalState) -> dict[str, Any]:
        answer = interrupt({"reviewer": reviewer, "question": question, "draft": state["draft"]})
        return {reviewer: answer}

    review.__name__ = f"{reviewer}_review"
    return review


def finalize(state: ApprovalState) -> dict[str, Any]:
    """Approved only if both reviewers approved."""
    approved = state["legal"]["approved"] and state["finance"]["approved"]
    return {"decision": "approved" if approved else "rejected"}


def build(
    checkpointer: BaseCheckpointSaver | None = None, model: BaseChatModel | None = None
) -> CompiledStateGraph:
    """Compile ``draft -> (legal_review || finance_review) -> finalize``."""
    llm = model or default_model()

    def draft(state: ApprovalState) -> dict[str, Any]:
        prompt = [
            SystemMessage("Draft a one-line purchase proposal."),
            HumanMessage(state["request"]),
        ]
        return {"draft": reply_text(llm.invoke(prompt))}

    builder = StateGraph(ApprovalState)
    builder.add_node("draft", draft)
    builder.add_node("legal_review", _review("legal", "Is this draft legally sound?"))
    builder.add_node("finance_review", _review("finance", "Is this draft within budget?"))
    builder.add_node("finalize", finalize)
    builder.add_edge(START, "draft")
    builder.add_edge("draft", "legal_review")
    builder.add_edge("draft", "finance_review")
    builder.add_edge(["legal_review", "finance_review"], "finalize")
    builder.add_edge("finalize", END)
    return builder.compile(checkpointer=checkpointer)


class PaymentState(TypedDict, total=False):
    """A payment that needs an account and an explicit confirmation."""

    amount: int
    account: str
    confirmed: bool
    status: str


def confirm_payment(state: PaymentState) -> dict[str, Any]:
    """Ask two questions in sequence: which account, then whether to go ahead."""
    account = interrupt({"question": "Which account should be charged?", "amount": state["amount"]})
    confirmed = interrupt({"question": f"Charge {state['amount']} EUR to {account}?"})
    return {"account": account, "confirmed": bool(confirmed)}


def pay(state: PaymentState) -> dict[str, Any]:
    """Charge the account if the human confirmed."""
    if not state["confirmed"]:
        return {"status": "cancelled"}
    return {"status": f"charged {state['amount']} EUR to {state['account']}"}


def build_double_check(checkpointer: BaseCheckpointSaver | None = None) -> CompiledStateGraph:
    """Compile ``confirm_payment -> pay``, where ``confirm_payment`` interrupts twice."""
    builder = StateGraph(PaymentState)
    builder.add_node("confirm_payment", confirm_payment)
    builder.add_node("pay", pay)
    builder.add_edge(START, "confirm_payment")
    builder.add_edge("confirm_payment", "pay")
    builder.add_edge("pay", END)
    return builder.compile(checkpointer=checkpointer)
