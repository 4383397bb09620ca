"""While a saver's writes lag, the eval node's wait reads each settled checkpoint once.

The node waits until every task that ran earlier in its invocation has its writes saved
(see :mod:`lg_eval.nodes._thread`). A checkpoint found with all its writes stays so, so
the polls that follow must not read it again: only the checkpoint still missing writes
is read on each poll. A real SQLite saver counts its reads by checkpoint id and holds the
writes of the invocation's first ``count`` superstep back until the node has polled that
checkpoint three more times.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypedDict

import aiosqlite
from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph

from lg_eval.evaluators import create_graph_trajectory_match_evaluator
from lg_eval.nodes import EvalNode, Evaluations, from_config
from tests.nodes.held_savers import HeldAsyncSqliteSaver, HeldSqliteSaver, Reads, checkpoint_of

STEPS = 20  # supersteps of `count` before the eval node: its ancestors in this invocation
FIRST_READS = 2  # the node's first look at a checkpoint: its tuple, then get_state
HELD_UNTIL = FIRST_READS + 3  # the held writes land once the node polled 3 more times
HOLD_AT_MOST = 5.0  # seconds, well inside the node's checkpoint_timeout of 10


class Counting(TypedDict, total=False):
    n: int
    evaluations: Evaluations


def first_count_held(
    reads: Reads, config: RunnableConfig, writes: Sequence[tuple[str, Any]], waited: float
) -> bool:
    """The first ``count`` superstep's write (``n`` = 1) waits until the node has read its
    checkpoint HELD_UNTIL times (or HOLD_AT_MOST seconds pass)."""
    first = any(channel == "n" and value == 1 for channel, value in writes)
    return first and reads[checkpoint_of(config)] < HELD_UNTIL and waited < HOLD_AT_MOST


def counter_graph(saver: Any, steps: int = STEPS) -> Any:
    """``__start__ -> count`` ``steps`` times ``-> evaluate``, the eval node reading its
    thread."""
    compiled: list[Any] = []
    strict = create_graph_trajectory_match_evaluator()
    node = EvalNode(
        [strict], source="thread", graph=lambda: compiled[0], reference=from_config("reference")
    )

    def count(state: Counting) -> Counting:
        return {"n": state.get("n", 0) + 1}

    def again(state: Counting) -> str:
        return "count" if state["n"] < steps else "evaluate"

    builder = StateGraph(Counting)
    builder.add_node("count", count)
    builder.add_node("evaluate", node)
    builder.add_edge(START, "count")
    builder.add_conditional_edges("count", again, ["count", "evaluate"])
    builder.add_edge("evaluate", END)
    compiled.append(builder.compile(checkpointer=saver))
    return compiled[0]


def counting_config(steps: int = STEPS) -> dict[str, Any]:
    """The thread, and the route LangGraph runs: the node sees its turn up to its own
    superstep (``__start__`` then the STEPS ``count`` supersteps)."""
    reference = {
        "trajectory": {"inputs": [], "results": [], "steps": [["__start__"] + ["count"] * steps]}
    }
    return {"configurable": {"thread_id": "counting", "reference": reference}}


def check(history: list[Any], reads: Counter[str | None], values: dict[str, Any]) -> None:
    """The node scored the whole route, and read every settled ancestor once (its tuple
    and its state), the held one on every poll."""
    assert [(e["key"], e["score"]) for e in values["evaluations"]] == [
        ("graph_trajectory_strict_match", True)
    ]
    # newest first: the end, the node's own checkpoint, the STEPS - 1 count checkpoints
    # after the first, the first count's (held), the input's
    ids = [snapshot.config["configurable"]["checkpoint_id"] for snapshot in history]
    assert [s.metadata["step"] for s in history] == list(range(STEPS + 1, -2, -1))
    settled, first_count, start = ids[2 : STEPS + 1], ids[STEPS + 1], ids[STEPS + 2]
    assert [reads[i] for i in settled] == [FIRST_READS] * (STEPS - 1)
    assert reads[first_count] >= HELD_UNTIL
    assert reads[start] == FIRST_READS


def test_settled_checkpoints_are_read_once_while_a_write_lags(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "counting.sqlite", check_same_thread=False)
    try:
        saver = HeldSqliteSaver(conn, first_count_held)
        graph = counter_graph(saver)
        cfg = counting_config()
        graph.invoke({"n": 0}, cfg)
        reads = Counter(saver.reads)
        check(list(graph.get_state_history(cfg)), reads, graph.get_state(cfg).values)
    finally:
        conn.close()


async def test_settled_checkpoints_are_read_once_while_a_write_lags_when_awaited(
    tmp_path: Path,
) -> None:
    async with aiosqlite.connect(tmp_path / "counting_async.sqlite") as conn:
        saver = HeldAsyncSqliteSaver(conn, first_count_held)
        graph = counter_graph(saver)
        cfg = counting_config()
        await graph.ainvoke({"n": 0}, cfg)
        reads = Counter(saver.reads)
        history = [s async for s in graph.aget_state_history(cfg)]
        check(history, reads, (await graph.aget_state(cfg)).values)
