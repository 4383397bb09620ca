"""A node that fails on its first attempt, and a retry that resumes the thread.

Demonstrates an errored turn: ``fetch`` raises `FlakyServiceError` the first
time it runs (a per-graph attempt counter held in `build`'s closure), so
``invoke`` raises and the checkpoint keeps ``next == ("fetch",)`` with the error
recorded on the task. Calling ``invoke(None, config)`` retries from the failed
node only (``prepare`` is not re-run) and the run completes.

Nodes: ``prepare -> fetch -> answer`` ("answer" calls the model).
"""

from __future__ import annotations

from typing import Any, TypedDict

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from graphs._scripted import ScriptedChatModel, ai, reply_text, scripted_model

ANSWER = "Three results found for 'langgraph checkpointers'."


class FlakyServiceError(RuntimeError):
    """The pretend search service is unavailable."""


class SearchState(TypedDict, total=False):
    """Query, normalized query, fetched results and the model's answer."""

    query: str
    normalized: str
    results: list[str]
    answer: str


def default_model() -> ScriptedChatModel:
    """A fresh scripted model that writes the answer."""
    return scripted_model("flaky-model", ai("flaky-ai-1", ANSWER))


def prepare(state: SearchState) -> dict[str, Any]:
    """Normalize the query."""
    return {"normalized": " ".join(state["query"].lower().split())}


def build(
    checkpointer: BaseCheckpointSaver | None = None,
    model: BaseChatModel | None = None,
    *,
    failures: int = 1,
) -> CompiledStateGraph:
    """Compile ``prepare -> fetch -> answer``; ``fetch`` fails its first `failures` attempts."""
    llm = model or default_model()
    attempts = 0

    def fetch(state: SearchState) -> dict[str, Any]:
        nonlocal attempts
        attempts += 1
        if attempts <= failures:
            raise FlakyServiceError(f"search service unavailable (attempt {attempts})")
        return {"results": [f"{state['normalized']} result {n}" for n in (1, 2, 3)]}

    def answer(state: SearchState) -> dict[str, Any]:
        listing = "\n".join(state["results"])
        prompt = [
            SystemMessage("Answer in one sentence from these results."),
            HumanMessage(listing),
        ]
        return {"answer": reply_text(llm.invoke(prompt))}

    builder = StateGraph(SearchState)
    builder.add_node("prepare", prepare)
    builder.add_node("fetch", fetch)
    builder.add_node("answer", answer)
    builder.add_edge(START, "prepare")
    builder.add_edge("prepare", "fetch")
    builder.add_edge("fetch", "answer")
    builder.add_edge("answer", END)
    return builder.compile(checkpointer=checkpointer)
