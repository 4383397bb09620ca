"""Map-reduce summarization with `Send` fan-out.

Demonstrates dynamic parallelism: ``split`` cuts the document into sentences and
a conditional edge returns one ``Send("summarize_chunk", {"index": i, "chunk": c})``
per sentence, so ``summarize_chunk`` runs once per chunk in a single superstep.
Their results are merged by an ``operator.add`` reducer and ``combine`` (the only
model call) writes the final summary from the chunk notes, sorted by index.

Everything except the model reply is computed from the input, so the run is
deterministic. One turn, no interrupts.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Send

from graphs._scripted import ScriptedChatModel, ai, reply_text, scripted_model

DOCUMENT = (
    "LangGraph runs stateful graphs. Checkpointers save every step. "
    "Interrupts pause a thread for a human."
)
SUMMARY = "LangGraph runs checkpointed graphs that can pause for humans."


class MapReduceState(TypedDict, total=False):
    """Document in, per-chunk notes (merged by concatenation) and summary out."""

    document: str
    chunks: list[str]
    notes: Annotated[list[dict[str, Any]], operator.add]
    summary: str


class ChunkInput(TypedDict):
    """What each `Send` hands to ``summarize_chunk``."""

    index: int
    chunk: str


def default_model() -> ScriptedChatModel:
    """A fresh scripted model that writes the combined summary."""
    return scripted_model("map-reduce-model", ai("map-reduce-ai-1", SUMMARY))


def split(state: MapReduceState) -> dict[str, Any]:
    """Split the document into sentences."""
    sentences = [s.strip() for s in state["document"].split(". ")]
    return {"chunks": [s if s.endswith(".") else s + "." for s in sentences if s]}


def fan_out(state: MapReduceState) -> list[Send]:
    """One `Send` per chunk, carrying its position."""
    return [
        Send("summarize_chunk", {"index": i, "chunk": c}) for i, c in enumerate(state["chunks"])
    ]


def summarize_chunk(item: ChunkInput) -> dict[str, Any]:
    """Note the chunk's word count and first word (deterministic)."""
    words = item["chunk"].split()
    note = f"{len(words)} words, starts with {words[0]!r}"
    return {"notes": [{"index": item["index"], "note": note}]}


def build(
    checkpointer: BaseCheckpointSaver | None = None, model: BaseChatModel | None = None
) -> CompiledStateGraph:
    """Compile ``split -> summarize_chunk x N (Send) -> combine``."""
    llm = model or default_model()

    def combine(state: MapReduceState) -> dict[str, Any]:
        notes = sorted(state["notes"], key=lambda n: n["index"])
        listing = "\n".join(
            f"{n['index']}: {state['chunks'][n['index']]} ({n['note']})" for n in notes
        )
        prompt = [SystemMessage("Combine these notes into one sentence."), HumanMessage(listing)]
        return {"summary": reply_text(llm.invoke(prompt))}

    builder = StateGraph(MapReduceState)
    builder.add_node("split", split)
    builder.add_node("summarize_chunk", summarize_chunk)
    builder.add_node("combine", combine)
    builder.add_edge(START, "split")
    builder.add_conditional_edges("split", fan_out, ["summarize_chunk"])
    builder.add_edge("summarize_chunk", "combine")
    builder.add_edge("combine", END)
    return builder.compile(checkpointer=checkpointer)
