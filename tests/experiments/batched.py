"""A graph and an evaluator that record, in order, when each case is played and scored;
named ``tests.experiments.batched:noting`` in datasets (one module object for the tests and
for the runner's ``module:attr`` import)."""

from __future__ import annotations

import time
from typing import Any, TypedDict

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph

EVENTS: list[str] = []


class Echo(TypedDict, total=False):
    text: str
    delay: float
    answer: str


def build(checkpointer: BaseCheckpointSaver[Any] | None = None) -> Any:
    def echo(state: Echo) -> Echo:
        EVENTS.append(f"play {state['text']}")
        time.sleep(state.get("delay", 0.0))
        return {"answer": state["text"].upper()}

    builder = StateGraph(Echo)
    builder.add_node("echo", echo)
    builder.add_edge(START, "echo")
    builder.add_edge("echo", END)
    return builder.compile(checkpointer=checkpointer)


def noting(outputs: Any, reference_outputs: Any = None, inputs: Any = None) -> bool:
    """Records that the case was scored (its input text), passes."""
    EVENTS.append(f"score {inputs[0]['text']}")
    return True
