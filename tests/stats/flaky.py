"""A flaky agent whose nondeterminism is seeded: it answers well with probability ``p``.

Each (case, repetition) draws one number from ``random.Random(f"{seed}:{case}:{rep}")``;
the draw decides whether the graph takes its ``good`` or ``bad`` branch. The same version
(``p``, ``seed``) gives the same runs every time; two versions use two seeds, so their
noise is independent, as a changed agent's is.
"""

from __future__ import annotations

import random
from typing import Any, TypedDict

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from lg_eval.datasets import Dataset

GOOD = [["__start__", "decide", "good"]]


class State(TypedDict, total=False):
    question: str
    ok: bool


def draw(seed: int, thread_id: str) -> float:
    """The seeded draw of a runner thread ``run:case:repetition:attempt``."""
    _, case, repetition, _ = thread_id.rsplit(":", 3)
    return random.Random(f"{seed}:{case}:{repetition}").random()


def flaky(p: float, seed: int) -> Any:
    """A factory ``f(checkpointer=...)`` of the version that passes with probability ``p``."""

    def build(checkpointer: BaseCheckpointSaver[Any] | None = None) -> CompiledStateGraph:
        def decide(state: State, config: RunnableConfig) -> dict[str, Any]:
            return {"ok": draw(seed, config["configurable"]["thread_id"]) < p}

        builder = StateGraph(State)
        builder.add_node("decide", decide)
        builder.add_node("good", lambda state: {})
        builder.add_node("bad", lambda state: {})
        builder.add_edge(START, "decide")
        builder.add_conditional_edges("decide", lambda s: "good" if s["ok"] else "bad")
        builder.add_edge("good", END)
        builder.add_edge("bad", END)
        return builder.compile(checkpointer=checkpointer)

    return build


def dataset(cases: int = 5) -> Dataset:
    """``cases`` cases expecting the good branch."""
    return Dataset.model_validate(
        {
            "name": "flaky",
            "cases": [
                {
                    "id": f"q{i}",
                    "turns": [{"input": {"question": f"q{i}"}}],
                    "expected": {"trajectory": {"steps": GOOD}},
                }
                for i in range(cases)
            ],
        }
    )
