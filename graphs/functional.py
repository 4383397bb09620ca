"""Functional API workflow: `@entrypoint` with `@task`s and an interrupt.

Demonstrates LangGraph's Functional API: the ``essay_workflow`` entrypoint calls
the ``write_draft`` task (the model call), then pauses with `interrupt()` for a
human review, then calls the ``revise`` task. On resume the entrypoint re-runs
from the top but the finished ``write_draft`` result is replayed from the
checkpoint, so the model is called only once.

Turns: input ``{"topic": ...}`` -> interrupt
``{"question": "Please review the draft", "draft": <draft>}``;
``Command(resume=<feedback>)`` -> returns ``{"draft", "feedback", "final"}``.
"""

from __future__ import annotations

from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.func import entrypoint, task
from langgraph.pregel import Pregel
from langgraph.types import interrupt

from graphs._scripted import ScriptedChatModel, ai, reply_text, scripted_model

DRAFT = "Cats are independent, curious and quietly affectionate."


def default_model() -> ScriptedChatModel:
    """A fresh scripted model that writes the draft."""
    return scripted_model("functional-model", ai("functional-ai-1", DRAFT))


@task
def revise(draft: str, feedback: str) -> str:
    """Apply the reviewer's feedback (deterministic)."""
    return f"{draft} [revised: {feedback}]"


def build(
    checkpointer: BaseCheckpointSaver | None = None, model: BaseChatModel | None = None
) -> Pregel:
    """Create the ``essay_workflow`` entrypoint (a compiled `Pregel` graph)."""
    llm = model or default_model()

    @task
    def write_draft(topic: str) -> str:
        prompt = [SystemMessage("Write a one-sentence essay."), HumanMessage(topic)]
        return reply_text(llm.invoke(prompt))

    @entrypoint(checkpointer=checkpointer)
    def essay_workflow(inputs: dict[str, Any]) -> dict[str, Any]:
        draft = write_draft(inputs["topic"]).result()
        feedback = interrupt({"question": "Please review the draft", "draft": draft})
        final = revise(draft, feedback).result()
        return {"draft": draft, "feedback": feedback, "final": final}

    return essay_workflow
