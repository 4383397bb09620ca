"""An eval node reads its thread right even when the saver stores writes late.

LangGraph saves a task's writes (and a resume's) in the background, each on its own,
not ordered with the checkpoints after them: on a loaded machine the checkpoint a node
runs at can be saved while the writes of an earlier superstep of the same invocation
are not yet. A real SQLite saver whose ``put_writes`` lags stands for that machine;
the node must still see the resume that started its turn and the tasks that ran.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import aiosqlite
from langchain_core.runnables import RunnableConfig

from lg_eval.evaluators import create_graph_trajectory_match_evaluator
from lg_eval.nodes import EvalNode, from_config
from tests.nodes.held_savers import HeldAsyncSqliteSaver, HeldSqliteSaver, Reads
from tests.nodes.hosts import QUESTION, RESUME, aware_host, config

LAG = 0.4


def late(
    reads: Reads, config: RunnableConfig, writes: Sequence[tuple[str, Any]], waited: float
) -> bool:
    """Every write is stored ``LAG`` seconds late."""
    return waited < LAG


def host(saver: Any) -> Any:
    prefix = create_graph_trajectory_match_evaluator(trajectory_match_mode="prefix")
    return aware_host(
        lambda app: EvalNode(
            [prefix], source="thread", graph=app, reference=from_config("reference")
        ),
        checkpointer=saver,
    )


def records(values: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [(r["turn"], r["key"], r["score"], r["comment"]) for r in values["evaluations"]]


# The route of each turn as the live run streams it: the question runs agent, evaluate
# and tools, which pauses for the human; the resume finishes tools, then agent, evaluate.
EXPECTED = [
    (0, "graph_trajectory_prefix_match", True, None),
    (1, "graph_trajectory_prefix_match", True, None),
]


def reference_config() -> dict[str, Any]:
    route = [["__start__", "agent", "evaluate", "tools", "__interrupt__"], ["agent", "evaluate"]]
    return config(reference={"trajectory": {"inputs": [], "results": [], "steps": route}})


def test_writes_saved_late_are_waited_for(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "late.sqlite", check_same_thread=False)
    try:
        saver = HeldSqliteSaver(conn)
        graph = host(saver)
        cfg = reference_config()
        graph.invoke(QUESTION, cfg)
        saver.hold = late
        graph.invoke(RESUME, cfg)
        saver.hold = None
        assert records(graph.get_state(cfg).values) == EXPECTED
    finally:
        conn.close()


async def test_writes_saved_late_are_waited_for_when_awaited(tmp_path: Path) -> None:
    async with aiosqlite.connect(tmp_path / "late_async.sqlite") as conn:
        saver = HeldAsyncSqliteSaver(conn)
        graph = host(saver)
        cfg = reference_config()
        await graph.ainvoke(QUESTION, cfg)
        saver.hold = late
        await graph.ainvoke(RESUME, cfg)
        saver.hold = None
        assert records((await graph.aget_state(cfg)).values) == EXPECTED
