"""Research assistant built from nested subgraphs with interrupts at two depths.

Demonstrates compiled subgraphs used as nodes (two levels deep) and interrupts
raised inside them, so checkpoint namespaces such as ``researcher:<task id>``
and ``researcher:<id>|deep_dive:<id>`` appear and node paths look like
``researcher:approve_sources`` and ``researcher:deep_dive:verify``.

Top level: ``plan -> researcher -> write`` ("plan" and "write" call the model).

* ``researcher`` subgraph: ``search -> approve_sources -> summarize``, then
  ``deep_dive`` when the input has ``deep=True`` (otherwise it ends).
  ``approve_sources`` interrupts with
  ``{"question": "Approve these sources?", "sources": [...]}`` and expects the
  list of approved sources as the resume value.
* ``deep_dive`` subgraph (nested in ``researcher``): ``dig -> verify``;
  ``verify`` interrupts with
  ``{"question": "Do these findings hold up?", "findings": [...]}`` and expects a
  free-text verdict.
"""

from __future__ import annotations

from typing import Any, TypedDict

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import interrupt

from graphs._scripted import ScriptedChatModel, ai, reply_text, scripted_model

PLAN = "1. Find recent surveys. 2. Check the strongest claims."
REPORT = "Solid-state batteries: promising energy density, manufacturing still immature."


class ResearchState(TypedDict, total=False):
    """Top-level state; the subgraphs share the keys they need."""

    topic: str
    deep: bool
    plan: str
    sources: list[str]
    approved_sources: list[str]
    summary: str
    findings: list[str]
    verdict: str
    report: str


class ResearcherState(TypedDict, total=False):
    """State of the `researcher` subgraph."""

    topic: str
    deep: bool
    sources: list[str]
    approved_sources: list[str]
    summary: str
    findings: list[str]
    verdict: str


class DeepDiveState(TypedDict, total=False):
    """State of the nested `deep_dive` subgraph."""

    approved_sources: list[str]
    findings: list[str]
    verdict: str


def default_model() -> ScriptedChatModel:
    """A fresh scripted model: the plan, then the final report."""
    return scripted_model("research-model", ai("research-ai-1", PLAN), ai("research-ai-2", REPORT))


def search(state: ResearcherState) -> dict[str, Any]:
    """Pretend web search: three deterministic source URLs for the topic."""
    slug = state["topic"].lower().replace(" ", "-")
    return {"sources": [f"https://example.org/{slug}/{n}" for n in (1, 2, 3)]}


def approve_sources(state: ResearcherState) -> dict[str, Any]:
    """Ask a human which sources to keep (resume value: list of approved URLs)."""
    approved = interrupt({"question": "Approve these sources?", "sources": state["sources"]})
    return {"approved_sources": list(approved)}


def summarize(state: ResearcherState) -> dict[str, Any]:
    """Summarize the approved sources (deterministic)."""
    return {"summary": f"{len(state['approved_sources'])} approved sources on {state['topic']}."}


def dig(state: DeepDiveState) -> dict[str, Any]:
    """Extract one finding per approved source (deterministic)."""
    return {"findings": [f"Claim checked in {src}" for src in state["approved_sources"]]}


def verify(state: DeepDiveState) -> dict[str, Any]:
    """Ask a human whether the findings hold up (resume value: a verdict string)."""
    verdict = interrupt({"question": "Do these findings hold up?", "findings": state["findings"]})
    return {"verdict": verdict}


def build_deep_dive() -> CompiledStateGraph:
    """The innermost subgraph: ``dig -> verify``."""
    builder = StateGraph(DeepDiveState)
    builder.add_node("dig", dig)
    builder.add_node("verify", verify)
    builder.add_edge(START, "dig")
    builder.add_edge("dig", "verify")
    builder.add_edge("verify", END)
    return builder.compile()


def build_researcher() -> CompiledStateGraph:
    """The researcher subgraph: ``search -> approve_sources -> summarize [-> deep_dive]``."""
    builder = StateGraph(ResearcherState)
    builder.add_node("search", search)
    builder.add_node("approve_sources", approve_sources)
    builder.add_node("summarize", summarize)
    builder.add_node("deep_dive", build_deep_dive())
    builder.add_edge(START, "search")
    builder.add_edge("search", "approve_sources")
    builder.add_edge("approve_sources", "summarize")
    builder.add_conditional_edges(
        "summarize", lambda s: "deep_dive" if s.get("deep") else END, ["deep_dive", END]
    )
    builder.add_edge("deep_dive", END)
    return builder.compile()


def build(
    checkpointer: BaseCheckpointSaver | None = None, model: BaseChatModel | None = None
) -> CompiledStateGraph:
    """Compile the research assistant (``plan -> researcher -> write``)."""
    llm = model or default_model()

    def plan(state: ResearchState) -> dict[str, Any]:
        prompt = [
            SystemMessage("Write a two-step research plan for the topic."),
            HumanMessage(state["topic"]),
        ]
        return {"plan": reply_text(llm.invoke(prompt))}

    def write(state: ResearchState) -> dict[str, Any]:
        notes = (
            f"Topic: {state['topic']}\nPlan: {state['plan']}\nSummary: {state['summary']}\n"
            f"Verdict: {state.get('verdict', 'not verified')}"
        )
        prompt = [SystemMessage("Write a one-sentence research report."), HumanMessage(notes)]
        return {"report": reply_text(llm.invoke(prompt))}

    builder = StateGraph(ResearchState)
    builder.add_node("plan", plan)
    builder.add_node("researcher", build_researcher())
    builder.add_node("write", write)
    builder.add_edge(START, "plan")
    builder.add_edge("plan", "researcher")
    builder.add_edge("researcher", "write")
    builder.add_edge("write", END)
    return builder.compile(checkpointer=checkpointer)
