"""The crash test's experiment: simulated support conversations, one of them killed.

Every agent node, tool and simulated-user call is logged (fsynced, :data:`tests.play.
support.LOG`) before it does anything else, so a test counts every call across a
``kill -9`` and the resumed run. With ``kill=(case, node, text)`` the run SIGKILLs itself
in that node on that case's turn whose user message is ``text``, once the checkpoint the
node runs from is saved.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph.state import CompiledStateGraph

from lg_eval.datasets import Dataset, dataset_from_dict
from lg_eval.experiments import run_experiment
from tests.experiments.mid_case_run import saved
from tests.play import support

CASES = ("chat-0", "chat-1", "chat-2")
Kill = tuple[str, str, str]
"""``(case, node, the user's message)``: where the first run kills itself."""


def build(kill: Kill | None) -> Any:
    """A factory for the support agent; ``kill`` names the node run that kills the process."""

    def factory(checkpointer: BaseCheckpointSaver[Any] | None = None) -> CompiledStateGraph:
        def hook(node: str, state: dict[str, Any], config: RunnableConfig) -> None:
            case = str(config["configurable"]["thread_id"]).split(":")[1]
            said = [m for m in state["messages"] if m.type == "human"][-1].content
            if kill == (case, node, said) and checkpointer is not None:
                step = config["metadata"]["langgraph_step"]
                saved(checkpointer, config, lambda t: t.metadata["step"] >= step - 1)
                os.kill(os.getpid(), signal.SIGKILL)

        return support.build(checkpointer, hook=hook)

    return factory


def dataset() -> Dataset:
    user = {
        "persona": "a customer whose blender arrived broken",
        "goal": "a refund for order 42",
        "model": "tests.play.support:customer_model",
    }
    cases = [{"id": case, "user": user} for case in CASES]
    return dataset_from_dict({"name": "support", "cases": cases}, allows_code=True)


def main(folder: Path, run_id: str, checkpointer: str, kill: Kill | None = None) -> None:
    """Run (or resume) the experiment ``run_id`` with its results in ``folder``."""
    support.LOG[:] = [folder / "calls.log"]
    try:
        run_experiment(
            build(kill),
            dataset(),
            checkpointer=checkpointer,
            store=folder / "results.sqlite",
            run_id=run_id,
            concurrency=1,
            judge_cache=False,
        )
    finally:
        support.LOG[:] = []
