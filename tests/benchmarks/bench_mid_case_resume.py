"""Benchmark: what mid-case resume costs a case, by its number of turns.

Run with ``python -m tests.benchmarks --only mid_case_resume [--turns 10,40,160]``. Each
case alternates an input that stops for a human and the human's answer on the
``model -> ask -> tool`` graph of the crash tests, played on a SQLite checkpointer. For
each length: the time to play it, the bytes of checkpoint metadata (with the turn tags
the player writes, and of the same case played with them removed), and the time a
resumed run takes to find that every turn is finished (``play_case(..., resume=True)``:
one state read, then a walk along the thread's lineage).
"""

from __future__ import annotations

import argparse
import math
import sqlite3
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langgraph.checkpoint.sqlite import SqliteSaver

from lg_eval.datasets import Case
from lg_eval.play import play_case
from tests.experiments.mid_case_run import build

TAG_KEYS = ("lg_eval_turn", "lg_eval_turns", "lg_eval_sent")


def case_of(turns: int) -> Case:
    script: list[dict[str, Any]] = []
    for n in range(turns // 2):
        script.append({"input": {"case": "bench", "text": f"approve request {n}"}})
        script.append({"resume": f"yes {n}"})
    return Case.model_validate({"id": "bench", "turns": script})


def measure(turns: int) -> tuple[float, int, int, float]:
    """Play time (s), metadata bytes, metadata bytes without the tags, resume time (s)."""
    with tempfile.TemporaryDirectory() as folder:
        conn = sqlite3.connect(Path(folder) / "c.sqlite", check_same_thread=False)
        graph = build(Path(folder), None)(SqliteSaver(conn))
        case = case_of(turns)
        start = time.perf_counter()
        play_case(graph, case, thread_id="t")
        played = time.perf_counter() - start
        start = time.perf_counter()
        play_case(graph, case, thread_id="t", resume=True)
        resumed = time.perf_counter() - start
        (tagged,) = conn.execute("SELECT sum(length(metadata)) FROM checkpoints").fetchone()
        strip = "json_remove(metadata, " + ", ".join(f"'$.{k}'" for k in TAG_KEYS) + ")"
        (bare,) = conn.execute(f"SELECT sum(length({strip})) FROM checkpoints").fetchone()
        conn.close()
    return played, int(tagged), int(bare), resumed


def main(argv: Sequence[str] = ()) -> None:
    parser = argparse.ArgumentParser(prog="bench_mid_case_resume")
    parser.add_argument("--turns", default="10,40,160")
    args, _ = parser.parse_known_args(argv)
    lengths = [int(n) for n in args.turns.split(",")]
    print("| turns | play (s) | metadata, tagged | metadata, untagged | resume, finished (s) |")
    print("|---|---|---|---|---|")
    rows = []
    for turns in lengths:
        played, tagged, bare, resumed = measure(turns)
        rows.append((turns, tagged, resumed))
        print(
            f"| {turns} | {played:.2f} | {tagged / 1024:.0f} KiB | {bare / 1024:.0f} KiB "
            f"| {resumed:.3f} |",
            flush=True,
        )
    (t0, m0, r0), (t1, m1, r1) = rows[0], rows[-1]
    grow = math.log(t1 / t0)
    print(
        f"growth exponent {t0} -> {t1} turns: metadata {math.log(m1 / m0) / grow:.2f}, "
        f"resume {math.log(r1 / r0) / grow:.2f}"
    )


if __name__ == "__main__":
    main()
