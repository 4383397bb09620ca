"""Benchmark: counterfactual replay of production threads, per thread and at scale.

Run with ``python -m tests.benchmarks --only replay [--quick]``.

For N production threads (100, 400 and 1,600; 50 and 200 with ``--quick``) of the refund
agent of ``tests.replay.helpers`` in a SQLite file (one request each, answered at its
review unless the thread is still waiting):

1. the seconds per thread of playing them (what the production graph cost to write them);
2. ``replay_threads`` with v2 from the last interrupt into an in-memory target: seconds
   per thread (list, fork, copy, run the new graph with the recorded answers, extract and
   score both), asserting the changed threads;
3. the same replay named, into a SQLite target, then again: the second pass reuses every
   fork (the new graph does not run), seconds per thread.

Per-thread cost that stays flat as N grows is the linear claim. On a shared machine the
numbers are noisy: run it when it is quiet.
"""

from __future__ import annotations

import argparse
import sqlite3
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from langgraph.checkpoint.sqlite import SqliteSaver

from lg_eval.replay import replay_threads
from tests.replay import helpers

EVALUATORS = ["redundancy", "tests.replay.helpers:nodes"]


def _changed(n: int) -> list[str]:
    return sorted(helpers.thread_id(i) for i in range(151, n) if not helpers.waiting(i))


def _one(n: int, folder: Path) -> dict[str, float]:
    conn = sqlite3.connect(folder / f"prod-{n}.sqlite", check_same_thread=False)
    conn.execute("PRAGMA synchronous=OFF")
    saver = SqliteSaver(conn)
    started = time.perf_counter()
    helpers.populate(helpers.build(saver), n)
    played = time.perf_counter() - started

    started = time.perf_counter()
    result = replay_threads(helpers.build_v2, saver, evaluators=EVALUATORS)
    replayed = time.perf_counter() - started
    assert result.changed_thread_ids == _changed(n)

    target = f"sqlite:///{folder / f'replay-{n}.sqlite'}"
    replay_threads(helpers.build_v2, saver, evaluators=EVALUATORS, target=target, run="b")
    started = time.perf_counter()
    again = replay_threads(helpers.build_v2, saver, evaluators=EVALUATORS, target=target, run="b")
    reused = time.perf_counter() - started
    assert all(t.reused for t in again.threads)
    conn.close()
    return {"play": played / n, "replay": replayed / n, "reuse": reused / n}


def main(argv: Sequence[str] = ()) -> None:
    parser = argparse.ArgumentParser(prog="bench_replay")
    parser.add_argument("--quick", action="store_true")
    args, _ = parser.parse_known_args(list(argv))
    sizes = (50, 200) if args.quick else (100, 400, 1600)
    print("| threads | play (ms/thread) | replay (ms/thread) | reuse (ms/thread) |")
    print("|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            row = _one(n, Path(tmp))
            print(
                f"| {n:,} | {row['play'] * 1000:.1f} | {row['replay'] * 1000:.1f} | "
                f"{row['reuse'] * 1000:.1f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
