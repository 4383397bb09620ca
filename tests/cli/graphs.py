"""A slow one-node graph for the CLI's kill-and-resume test."""

from __future__ import annotations

import time
from typing import Any, TypedDict

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import START, StateGraph


class SlowState(TypedDict, total=False):
    text: str
    delay: float
    echoed: str


def build_slow(checkpointer: BaseCheckpointSaver[Any] | None = None) -> Any:
    """echo: sleeps ``delay`` seconds, then echoes ``text``."""

    def echo(state: SlowState) -> dict[str, Any]:
        time.sleep(state.get("delay", 0.0))
        return {"echoed": state.get("text", "")}

    builder = StateGraph(SlowState).add_node("echo", echo).add_edge(START, "echo")
    return builder.compile(checkpointer=checkpointer)
