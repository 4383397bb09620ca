"""Run the mid-case crash test's experiment: ``python -m tests.experiments.mid_case_run DIR
RUN_ID [KILL_AT]``.

Each case is a four-turn conversation on ``model -> tool``. Every node run appends
``<node>:<case>:<text>`` (fsynced) to ``DIR/calls.log`` before it does anything else, so
the test counts every model and tool call across a ``kill -9`` and the resumed run. With
``KILL_AT`` (``model`` or ``tool``) the first run SIGKILLs itself in that node during
turn 2 of case ``chat-1``, once turns 0 and 1 of that case are finished.
"""

from __future__ import annotations

import operator
import os
import signal
import sys
from pathlib import Path
from typing import Annotated, Any, TypedDict

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from lg_eval.datasets import Dataset
from lg_eval.experiments import run_experiment
from tests.experiments.graphs import record_start

TURNS = ["hello", "order 42", "refund it", "thanks"]
CASES = ["chat-0", "chat-1", "chat-2"]
KILLED_CASE, KILLED_TURN = "chat-1", 2


class ChatState(TypedDict, total=False):
    case: str
    text: str
    log: Annotated[list[str], operator.add]


def build(folder: Path, kill_at: str | None) -> Any:
    """A factory for the chat graph; ``kill_at`` names the node that kills the process."""
    calls = folder / "calls.log"

    def call(node: str, state: ChatState) -> None:
        record_start(calls, f"{node}:{state['case']}:{state['text']}")
        killing = (state["case"], state["text"]) == (KILLED_CASE, TURNS[KILLED_TURN])
        if node == kill_at and killing:
            os.kill(os.getpid(), signal.SIGKILL)

    def factory(checkpointer: BaseCheckpointSaver[Any] | None = None) -> CompiledStateGraph:
        def model(state: ChatState) -> dict[str, Any]:
            call("model", state)
            return {"log": [f"model saw {state['text']}"]}

        def tool(state: ChatState) -> dict[str, Any]:
            call("tool", state)
            return {"log": [f"tool ran for {state['text']}"]}

        builder = StateGraph(ChatState)
        builder.add_node("model", model)
        builder.add_node("tool", tool)
        builder.add_edge(START, "model")
        builder.add_edge("model", "tool")
        builder.add_edge("tool", END)
        return builder.compile(checkpointer=checkpointer)

    return factory


def dataset() -> Dataset:
    return Dataset.model_validate(
        {
            "name": "chats",
            "cases": [
                {
                    "id": case,
                    "turns": [{"input": {"case": case, "text": text}} for text in TURNS],
                    "expected": {"max_steps": 8},
                }
                for case in CASES
            ],
        }
    )


def main(folder: Path, run_id: str, kill_at: str | None = None, checkpointer: str = "") -> None:
    run_experiment(
        build(folder, kill_at),
        dataset(),
        checkpointer=checkpointer or f"sqlite:///{folder / 'checkpoints.sqlite'}",
        store=folder / "results.sqlite",
        run_id=run_id,
        concurrency=1,
        judge_cache=False,
        scoring="inline",
    )


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2], *sys.argv[3:5])
