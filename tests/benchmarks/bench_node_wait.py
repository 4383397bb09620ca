"""Benchmark: what an eval node's wait for late writes costs in saver reads.

Run with ``python -m tests.benchmarks --only node_wait [--steps 20,80] [--lag 1.0]``.
The graph runs ``count`` for each number of ``--steps`` supersteps, then an eval node
that reads its own thread (``source="thread"``), on a real SQLite saver that stores the
first ``count`` write ``--lag`` seconds late. For each length: the saver's ``get_tuple``
calls during the invocation (those behind ``get_state`` included), the reads of the held
checkpoint alone, and the wall time. A settled checkpoint is read twice (its tuple and
its state) once, so the reads grow with the steps, not with the polls.
"""

from __future__ import annotations

import argparse
import sqlite3
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain_core.runnables import RunnableConfig

from tests.nodes.held_savers import HeldSqliteSaver, Reads
from tests.nodes.test_eval_node_settled_reads import counter_graph, counting_config


def measure(steps: int, lag: float) -> tuple[int, int, float]:
    """Saver reads in all, reads of the held checkpoint, wall time (s)."""

    def held(
        reads: Reads, config: RunnableConfig, writes: Sequence[tuple[str, Any]], waited: float
    ) -> bool:
        return any(c == "n" and v == 1 for c, v in writes) and waited < lag

    with tempfile.TemporaryDirectory() as folder:
        conn = sqlite3.connect(Path(folder) / "c.sqlite", check_same_thread=False)
        saver = HeldSqliteSaver(conn, held)
        graph = counter_graph(saver, steps)
        cfg = counting_config(steps)
        start = time.perf_counter()
        graph.invoke({"n": 0}, cfg)
        elapsed = time.perf_counter() - start
        reads = Reads(saver.reads)
        history = list(graph.get_state_history(cfg))
        first_count = history[steps + 1].config["configurable"]["checkpoint_id"]
        scores = [e["score"] for e in graph.get_state(cfg).values["evaluations"]]
        conn.close()
    assert scores == [True], scores
    return sum(reads.values()), reads[first_count], elapsed


def main(argv: Sequence[str] = ()) -> None:
    parser = argparse.ArgumentParser(prog="bench_node_wait")
    parser.add_argument("--steps", default="20,80")
    parser.add_argument("--lag", type=float, default=1.0)
    args, _ = parser.parse_known_args(argv)
    print(
        f"| supersteps | saver reads | reads of the held checkpoint | wall (s), lag {args.lag} s |"
    )
    print("|---:|---:|---:|---:|")
    for steps in (int(n) for n in args.steps.split(",")):
        total, held, elapsed = measure(steps, args.lag)
        print(f"| {steps} | {total} | {held} | {elapsed:.2f} |", flush=True)


if __name__ == "__main__":
    main()
