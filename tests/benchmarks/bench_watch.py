"""Benchmark: what a watch reads while nothing changes, on 100,000 threads.

Run with ``python -m tests.benchmarks --only watch [--quick] [--threads N]``
(``LG_EVAL_PG_DSN`` names the Postgres server; without it only SQLite runs). N is 100,000
by default (10,000 with ``--quick``).

The threads are 10 played threads of the small tool-calling agent of
``tests.sweeps.helpers`` (6 root checkpoints each), cloned in SQL under new ids. The watch
samples 0.1% of them (``sample=0.001``), so its first poll lists every thread but scores
only a hundred; then it is polled while nothing is written. Measured:

1. the first poll (a listing of every thread: what a sweep per poll would read each time);
2. an idle poll: its wall time (median of 200), the queries it makes and, on SQLite, the
   virtual-machine steps SQLite ran for them (a progress handler every 100 steps; the
   listing's steps for comparison), which is what "reads no thread" means;
3. on Postgres, the read an idle poll skips: the query of new checkpoints when the
   server's snapshot moved (something was committed somewhere), planned with
   ``EXPLAIN (ANALYZE, BUFFERS)``, without and with an index on ``checkpoint_id``
   (the watch's ``margin`` is 5 s here, and the clones are older: see ``_postgres``);
4. one thread changed among N: the poll that finds and scores it.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from langgraph.checkpoint.sqlite import SqliteSaver

from lg_eval.play import open_checkpointer
from lg_eval.sweeps import Watch
from lg_eval.sweeps._listing import checkpoint_bound, in_sample
from tests.benchmarks.bench_sweep import DATABASE, _recreate, _server_db, clone_threads
from tests.sweeps import helpers

GRAPH = "tests.sweeps.helpers:build"
TEMPLATES = [f"tpl-{i:02d}" for i in range(10)]
POLLS = 200
PG_MARGIN = 5.0
_SCANS = ("Seq Scan", "Index Only Scan", "Index Scan", "Bitmap Heap Scan")


def _median_ms(action: Callable[[], Any], times: int) -> float:
    taken = []
    for _ in range(times):
        start = time.perf_counter()
        action()
        taken.append(time.perf_counter() - start)
    return statistics.median(taken) * 1e3


def _watch(saver: Any, store: Path, margin: float = 60.0) -> Watch:
    return Watch(
        GRAPH, saver, store=f"sqlite:///{store}", name="bench", sample=0.001,
        evaluators=helpers.EVALUATORS, judge_cache=False, margin=margin,
    )  # fmt: skip


def _first_and_idle(watch: Watch, label: str, steps: Callable[[], int] | None) -> None:
    start = time.perf_counter()
    first = watch.poll()
    took = time.perf_counter() - start
    at_first = steps() if steps else 0
    print(f"{label}: first poll (lists every thread) {took:.2f} s, {first.scored} scored (sample)")
    feed = watch._source.changes  # type: ignore[union-attr]
    queries = feed.queries
    before = steps() if steps else 0
    idle_ms = _median_ms(watch.poll, POLLS)
    per_poll = (feed.queries - queries) / POLLS
    line = f"{label}: idle poll {idle_ms:.2f} ms (median of {POLLS}), {per_poll:g} queries"
    if steps is not None:
        vm = (steps() - before) * 100 / POLLS
        line += f", ~{vm:,.0f} SQLite VM steps (the listing: ~{at_first * 100:,.0f})"
    print(line)
    print(
        f"{label}: at --every 30, {2 * per_poll:g} queries a minute reading 0 threads, "
        f"against {2:g} listings of every thread a minute for a sweep per look"
    )


def _one_change(watch: Watch, graph: Any, label: str) -> None:
    for i in range(10_000):  # a new thread in the watch's 0.1% sample
        thread_id = f"new-{i:05d}"
        if watch.sample is None or in_sample(thread_id, watch.sample):
            break
    helpers.play(graph, thread_id)
    start = time.perf_counter()
    found = watch.poll()
    print(
        f"{label}: one new thread among the others: the poll that scores it "
        f"{(time.perf_counter() - start) * 1e3:.0f} ms ({found.scored} scored)"
    )


def _sqlite(tmp: Path, n: int) -> None:
    conn = sqlite3.connect(tmp / "threads.sqlite", check_same_thread=False)
    saver = SqliteSaver(conn)
    graph = helpers.build(saver)
    for thread_id in TEMPLATES:
        helpers.play(graph, thread_id)
    start = time.perf_counter()
    helpers.clone_sqlite(conn, TEMPLATES, n // len(TEMPLATES) - 1)
    rows = conn.execute("SELECT COUNT(*) FROM checkpoints").fetchone()[0]
    took = time.perf_counter() - start
    print(f"sqlite: {n:,} threads ({rows:,} checkpoints) cloned in {took:.1f} s")
    counted = [0]

    def count() -> int:
        counted[0] += 1
        return 0

    conn.set_progress_handler(count, 100)
    with _watch(saver, tmp / "sqlite-results.sqlite") as watch:
        _first_and_idle(watch, "sqlite", lambda: counted[0])
        conn.set_progress_handler(None, 0)
        _one_change(watch, graph, "sqlite")
    conn.close()


def _explain(conn: Any, sql: str, params: Sequence[Any]) -> str:
    with conn.cursor() as cur:
        cur.execute(f"EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) {sql}", params)
        row = cur.fetchone()
    plan = (row["QUERY PLAN"] if isinstance(row, dict) else row[0])[0]
    top = plan["Plan"]
    node = top
    while "Plans" in node and node.get("Node Type") not in _SCANS:
        node = node["Plans"][0]
    pages = top.get("Shared Hit Blocks", 0) + top.get("Shared Read Blocks", 0)
    return (
        f"{plan['Execution Time']:.2f} ms, {node.get('Node Type')}, "
        f"{node.get('Actual Rows', 0):,} rows found, {pages:,} pages of 8 KiB read"
    )


def _postgres(dsn: str, tmp: Path, n: int) -> None:
    with open_checkpointer(dsn) as saver:
        graph = helpers.build(saver)
        for thread_id in TEMPLATES:
            helpers.play(graph, thread_id)
        start = time.perf_counter()
        rows = clone_threads(saver.conn, TEMPLATES, n // len(TEMPLATES) - 1)
        with saver.conn.cursor() as cur:
            cur.execute("ANALYZE")
        print(
            f"postgres: {n:,} threads ({rows:,} rows) cloned in {time.perf_counter() - start:.1f} s"
        )
        # The clones keep their templates' checkpoint ids, made seconds ago: a poll reads
        # again the checkpoints of the last `margin` seconds, so wait that long first, as a
        # store idle for a minute would be (with the 60 s default: every clone, every poll).
        time.sleep(PG_MARGIN + 1)
        with _watch(saver, tmp / "pg-results.sqlite", margin=PG_MARGIN) as watch:
            _first_and_idle(watch, "postgres", None)
            # the previous poll's time less the margin, in a store idle for longer: no row is
            # newer, the rows read are the cost of finding that out
            bound = checkpoint_bound(datetime.now(UTC))
            sql = (
                "SELECT DISTINCT thread_id FROM checkpoints"
                " WHERE checkpoint_ns = '' AND checkpoint_id > %s"
            )
            skipped = _explain(saver.conn, sql, [bound])
            print(f"postgres: the read an idle poll skips, no index: {skipped}")
            with saver.conn.cursor() as cur:
                cur.execute("CREATE INDEX bench_checkpoint_id ON checkpoints (checkpoint_id)")
                cur.execute("ANALYZE checkpoints")
            print(f"postgres: the same with the index: {_explain(saver.conn, sql, [bound])}")
            _one_change(watch, graph, "postgres")


def main(argv: Sequence[str] = ()) -> None:
    parser = argparse.ArgumentParser(prog="bench_watch")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--threads", type=int, default=None)
    args, _ = parser.parse_known_args(list(argv))
    n = args.threads or (10_000 if args.quick else 100_000)
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        _sqlite(tmp, n)
        server = os.environ.get("LG_EVAL_PG_DSN")
        if not server:
            print("LG_EVAL_PG_DSN is not set: the Postgres part is skipped")
            return
        _recreate(server, DATABASE)
        try:
            _postgres(_server_db(server, DATABASE), tmp, n)
        finally:
            _recreate(server, DATABASE, drop_only=True)


if __name__ == "__main__":
    main()
