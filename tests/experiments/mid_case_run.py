"""The mid-case crash tests' experiment: cases on ``model -> ask -> tool``, one of them killed.

Every model and tool run appends ``<node>:<case>:<turn text>`` (fsynced) to
``DIR/calls.log`` before it does anything else, so a test counts every call across a
``kill -9`` and the resumed run. ``ask`` stops for a human (``interrupt()``) when the text
starts with ``approve``. With ``kill=(case, text, node)`` the run SIGKILLs itself in that
node on that case's turn, once the checkpoint the node runs from is saved (``ask``: once the
human's answer is; LangGraph saves in the background, and without the wait what a kill
leaves would depend on timing).
"""

from __future__ import annotations

import operator
import os
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypedDict

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import interrupt

from lg_eval.datasets import Dataset
from lg_eval.experiments import run_experiment
from tests.experiments.graphs import record_start

CHAT = ["hello", "order 42", "refund it", "thanks"]
APPROVAL = [{"input": "hello"}, {"input": "approve refund"}, {"resume": "yes"}, {"input": "thanks"}]
CASES = {"chat-0": CHAT, "chat-1": CHAT, "approval": APPROVAL}

Kill = tuple[str, str, str]
"""``(case, turn text, node)``: where the first run kills itself."""


class ChatState(TypedDict, total=False):
    case: str
    text: str
    log: Annotated[list[str], operator.add]


def build(folder: Path, kill: Kill | None) -> Any:
    """A factory for the graph; ``kill`` names the node run that kills the process."""
    calls = folder / "calls.log"

    def factory(checkpointer: BaseCheckpointSaver[Any] | None = None) -> CompiledStateGraph:
        def call(node: str, state: ChatState, config: RunnableConfig) -> None:
            record_start(calls, f"{node}:{state['case']}:{state['text']}")
            if kill == (state["case"], state["text"], node) and checkpointer is not None:
                step = config["metadata"]["langgraph_step"]
                saved(checkpointer, config, lambda t: t.metadata["step"] >= step - 1)
                os.kill(os.getpid(), signal.SIGKILL)

        def model(state: ChatState, config: RunnableConfig) -> dict[str, Any]:
            call("model", state, config)
            return {"log": [f"model saw {state['text']}"]}

        def ask(state: ChatState, config: RunnableConfig) -> dict[str, Any]:
            if not state["text"].startswith("approve"):
                return {}
            answer = interrupt({"question": state["text"]})
            if kill == (state["case"], state["text"], "ask") and checkpointer is not None:
                saved(
                    checkpointer,
                    config,
                    lambda t: "__resume__" in {w[1] for w in t.pending_writes or []},
                )
                os.kill(os.getpid(), signal.SIGKILL)  # the answer is saved, nothing after it
            return {"log": [f"human said {answer}"]}

        def tool(state: ChatState, config: RunnableConfig) -> dict[str, Any]:
            call("tool", state, config)
            return {"log": [f"tool ran for {state['text']}"]}

        builder = StateGraph(ChatState)
        builder.add_node("model", model)
        builder.add_node("ask", ask)
        builder.add_node("tool", tool)
        builder.add_edge(START, "model")
        builder.add_edge("model", "ask")
        builder.add_edge("ask", "tool")
        builder.add_edge("tool", END)
        return builder.compile(checkpointer=checkpointer)

    return factory


def saved(
    checkpointer: BaseCheckpointSaver[Any],
    config: RunnableConfig,
    ready: Callable[[CheckpointTuple], bool],
) -> None:
    """Wait until the thread's latest saved checkpoint is ``ready`` (the one this task runs
    from, or one holding the human's answer)."""
    thread: Any = {"configurable": {"thread_id": config["configurable"]["thread_id"]}}
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        latest = checkpointer.get_tuple(thread)
        if latest is not None and ready(latest):
            return
        time.sleep(0.01)


def dataset() -> Dataset:
    def turn(script: str | dict[str, str], case: str) -> dict[str, Any]:
        if isinstance(script, str):
            return {"input": {"case": case, "text": script}}
        if "input" in script:
            return {"input": {"case": case, "text": script["input"]}}
        return dict(script)

    return Dataset.model_validate(
        {
            "name": "chats",
            "cases": [
                {"id": case, "turns": [turn(t, case) for t in turns], "expected": {"max_steps": 16}}
                for case, turns in CASES.items()
            ],
        }
    )


def main(folder: Path, run_id: str, checkpointer: str, kill: Kill | None = None) -> None:
    """Run (or resume) the experiment ``run_id`` with its results in ``folder``."""
    run_experiment(
        build(folder, kill),
        dataset(),
        checkpointer=checkpointer,
        store=folder / "results.sqlite",
        run_id=run_id,
        concurrency=1,
        judge_cache=False,
    )
