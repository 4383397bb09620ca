"""Benchmark: sweeping many short threads from Postgres, local executor against Ray.

Run with ``python -m tests.benchmarks --only sweep [--quick] [--threads N] [--no-ray]
[--no-trace]`` (``LG_EVAL_PG_DSN`` names the Postgres server; without it only the
SQLite part runs). N is 100,000 by default (10,000 with ``--quick``).

1. Per-thread cost of the parts on 500 played threads (SQLite and Postgres):
   extraction alone (``extract_thread``, fast reader) and evaluation alone
   (``redundancy`` + a custom evaluator over the extracted thread).
2. N threads in Postgres, fast: 10 template threads of the small tool-calling agent of
   ``tests.sweeps.helpers`` are played with the real graph (one turn: agent -> tools ->
   agent, 6 checkpoints each), then their rows (``checkpoints``, ``checkpoint_writes``,
   ``checkpoint_blobs``) are cloned in SQL under new thread ids (``generate_series``).
   A clone must extract exactly as its template (asserted).
3. Whole sweeps of the N threads (list, extract, score, store into a SQLite results
   store, stream the report): ``LocalExecutor(1)`` and ``RayExecutor`` on
   ``ray.init(num_cpus=2)``, in threads/s; the driver's max RSS at 10,000 threads and at
   N (a progress callback reads it during the sweep) and, in a traced local sweep, the
   Python heap peak (``tracemalloc``) at 10,000 threads and at N; the time to stream the
   report and the JSON (every thread) from the store.
4. Ray's overhead: the round trip of a task on an empty partition (one at a time, and
   200 at once), and on 10,000 threads the seconds spent inside tasks against the wall.

Everything runs in its own database on the server (``lg_eval_bench_sweep``), dropped at
the end. On a shared machine the numbers are noisy: run it when it is quiet.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sqlite3
import tempfile
import time
import tracemalloc
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langgraph.checkpoint.sqlite import SqliteSaver

from lg_eval.executors import LocalExecutor
from lg_eval.experiments import open_store
from lg_eval.extract import extract_thread
from lg_eval.play import open_checkpointer
from lg_eval.reports import stream_report
from lg_eval.sweeps import sweep_threads, write_sweep_json
from lg_eval.sweeps._listing import list_threads
from lg_eval.sweeps._worker import PartitionScorer, resolve_evaluators
from tests.sweeps import helpers

GRAPH = "tests.sweeps.helpers:build"
ROOT = Path(__file__).resolve().parents[2]
DATABASE = "lg_eval_bench_sweep"
TEMPLATES = 10
MARK = 10_000


def _rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _play(graph: Any, ids: Sequence[str]) -> None:
    for i, thread_id in enumerate(ids):
        helpers.play(graph, thread_id, {"team": "escalated" if i % 10 == 0 else "base"})


def _parts(graph: Any, ids: Sequence[str]) -> tuple[float, float]:
    """Seconds per thread: extraction, evaluation."""
    from lg_eval.experiments._score import case_outputs, final_messages

    evaluators = resolve_evaluators(helpers.EVALUATORS)
    start = time.perf_counter()
    threads = [extract_thread(graph, {"configurable": {"thread_id": t}}) for t in ids]
    extract_s = (time.perf_counter() - start) / len(ids)
    outputs = [case_outputs(t, final_messages(t)) for t in threads]
    start = time.perf_counter()
    for out in outputs:
        for _, ev in evaluators:
            ev(outputs=out, reference_outputs=None, inputs=None)
    return extract_s, (time.perf_counter() - start) / len(ids)


# ------------------------------------------------------------------ threads in Postgres

_CLONES = {
    "checkpoints": (
        "thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata"
    ),
    "checkpoint_blobs": "thread_id, checkpoint_ns, channel, version, type, blob",
    "checkpoint_writes": (
        "thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob, task_path"
    ),
}


def clone_threads(conn: Any, templates: Sequence[str], groups: int) -> int:
    """Copy every row of the ``templates`` threads ``groups`` times, thread ids
    ``c<group>-<template>``; returns the rows inserted. Checkpoint ids stay (they are
    unique per thread only), so a clone lists, orders and extracts like its template."""
    inserted = 0
    for table, columns in _CLONES.items():
        rest = columns.split(", ", 1)[1]
        cursor = conn.execute(
            f"INSERT INTO {table} ({columns}) SELECT 'c' || lpad(g::text, 7, '0') || '-' ||"
            f" t.thread_id, {', '.join('t.' + c for c in rest.split(', '))}"
            f" FROM {table} t CROSS JOIN generate_series(0, %s - 1) AS g"
            " WHERE t.thread_id = ANY(%s)",
            (groups, list(templates)),
        )
        inserted += cursor.rowcount
    conn.commit()
    return inserted


def assert_clone_equal(graph: Any, template: str, clone: str) -> None:
    """The clone's extraction is the template's, but for the thread id."""
    a = extract_thread(graph, {"configurable": {"thread_id": template}})
    b = extract_thread(graph, {"configurable": {"thread_id": clone}})
    assert b.thread_id == clone, b.thread_id
    same = json.loads(b.model_dump_json().replace(json.dumps(clone), json.dumps(template)))
    assert same == json.loads(a.model_dump_json()), (template, clone)
    assert a.turns and a.to_graph_trajectory().steps == b.to_graph_trajectory().steps


def _server_db(server: str, name: str) -> str:
    base, _, query = server.partition("?")
    return base.rsplit("/", 1)[0] + f"/{name}" + (f"?{query}" if query else "")


def _recreate(server: str, name: str, *, drop_only: bool = False) -> None:
    import psycopg

    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        if not drop_only:
            conn.execute(f"CREATE DATABASE {name}")


# ------------------------------------------------------------------ sweeps


@dataclass
class Marks:
    """The driver's memory when the sweep had scored ``MARK`` threads, and at the end."""

    traced: bool
    rss_at_mark: float | None = None
    heap_at_mark: float | None = None
    heap_at_end: float | None = None

    def __call__(self, scored: int, passed: int, failed: int) -> None:
        if self.rss_at_mark is None and scored >= MARK:
            self.rss_at_mark = _rss_mib()
            if self.traced:
                self.heap_at_mark = tracemalloc.get_traced_memory()[1] / 2**20


def _sweep(url: str, store: Path, executor: Any, n: int, *, traced: bool = False,
           partition_size: int = 100) -> tuple[float, Marks, Any]:  # fmt: skip
    marks = Marks(traced)
    if traced:
        tracemalloc.start()
    start = time.perf_counter()
    result = sweep_threads(
        GRAPH,
        url,
        evaluators=helpers.EVALUATORS,
        store=store,
        executor=executor,
        incremental=False,
        partition_size=partition_size,
        progress=marks,
        limit=n,
    )
    elapsed = time.perf_counter() - start
    if traced:
        marks.heap_at_end = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
    assert result.scored == n and result.counts.passed + result.counts.failed == n, result.counts
    return n / elapsed, marks, result


def _memory_line(label: str, marks: Marks, n: int) -> str:
    line = f"  {label}: driver max RSS {marks.rss_at_mark or 0:.0f} MiB at {MARK:,}"
    line += f", {_rss_mib():.0f} MiB at {n:,}"
    if marks.traced:
        end = marks.heap_at_end or 0
        line += f"; Python heap peak {marks.heap_at_mark or 0:.1f} MiB at {MARK:,}, {end:.1f} MiB"
        line += f" at {n:,}"
    return line


def _empty(partition: Sequence[Any]) -> int:
    return len(partition)


@dataclass
class Timed:
    """A partition scorer that also says how long it ran inside its task."""

    inner: Any

    def __call__(self, partition: Sequence[tuple[str, str]]) -> tuple[float, int]:
        start = time.perf_counter()
        out = self.inner(partition)
        return time.perf_counter() - start, len(out)


def _ray_overhead(dsn: str, executor: Any) -> None:
    executor_map = executor.map_partitions
    list(executor_map(_empty, [[]] * 20))  # warm
    start = time.perf_counter()
    for _ in range(50):
        list(executor_map(_empty, [[]]))
    one = (time.perf_counter() - start) / 50
    start = time.perf_counter()
    list(executor_map(_empty, [[]] * 200))
    many = (time.perf_counter() - start) / 200
    print(
        f"ray: empty task round trip {one * 1e3:.1f} ms one at a time, "
        f"{many * 1e3:.2f} ms each with 200 in flight (max_in_flight 4)"
    )
    with open_checkpointer(dsn) as saver:
        heads = [(h.thread_id, h.checkpoint_id)
                 for page in list_threads(saver, page_size=1000) for h in page][:MARK]  # fmt: skip
    scorer = Timed(
        PartitionScorer(
            run_id="bench", graph=GRAPH, evaluators=helpers.EVALUATORS, checkpointer=dsn
        )
    )
    parts = [heads[i : i + 100] for i in range(0, len(heads), 100)]
    start = time.perf_counter()
    inside = sum(seconds for seconds, _ in executor_map(scorer, parts))
    wall = time.perf_counter() - start
    print(
        f"ray: {len(heads):,} threads in {len(parts)} tasks of 100: wall {wall:.1f} s, "
        f"inside tasks {inside:.1f} s over 2 workers ({inside / (2 * wall):.0%} busy), "
        f"{(2 * wall - inside) / len(parts) * 1e3:.1f} ms per task outside the scorer"
    )


def _stream_costs(store: Path, result: Any, out: Path) -> None:
    with open_store(store) as results:
        start = time.perf_counter()
        stream_report(results, result.info.run_id)
        report_s = time.perf_counter() - start
    start = time.perf_counter()
    write_sweep_json(result, out)
    json_s = time.perf_counter() - start
    print(
        f"  report streamed from the store in {report_s:.1f} s; JSON of every thread "
        f"({out.stat().st_size / 2**20:.0f} MiB) in {json_s:.1f} s"
    )


def main(argv: Sequence[str] = ()) -> None:
    parser = argparse.ArgumentParser(prog="bench_sweep")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--no-ray", action="store_true")
    parser.add_argument("--no-trace", action="store_true", help="skip the traced sweep")
    args, _ = parser.parse_known_args(list(argv))
    n = args.threads or (10_000 if args.quick else 100_000)
    played = [f"t-{i:06d}" for i in range(300 if args.quick else 500)]
    with tempfile.TemporaryDirectory() as tmp:
        conn = sqlite3.connect(Path(tmp) / "cp.sqlite", check_same_thread=False)
        graph = helpers.build(SqliteSaver(conn))
        _play(graph, played)
        extract_s, eval_s = _parts(graph, played)
        print(
            f"sqlite, per thread: extraction {extract_s * 1e3:.2f} ms, evaluation "
            f"{eval_s * 1e3:.3f} ms (2 evaluators)"
        )
        conn.close()
        server = os.environ.get("LG_EVAL_PG_DSN")
        if not server:
            print("LG_EVAL_PG_DSN is not set: the Postgres sweeps are skipped")
            return
        _recreate(server, DATABASE)
        dsn = _server_db(server, DATABASE)
        try:
            _postgres(dsn, Path(tmp), n, played, args)
        finally:
            _recreate(server, DATABASE, drop_only=True)


def _postgres(dsn: str, tmp: Path, n: int, played: Sequence[str], args: Any) -> None:
    templates = [f"tpl-{i:02d}" for i in range(TEMPLATES)]
    with open_checkpointer(dsn) as saver:
        graph = helpers.build(saver)
        _play(graph, played)
        extract_s, eval_s = _parts(graph, played)
        print(
            f"postgres, per thread: extraction {extract_s * 1e3:.2f} ms, evaluation "
            f"{eval_s * 1e3:.3f} ms"
        )
        _play(graph, templates)
        groups = (n - len(played) - TEMPLATES) // TEMPLATES
        start = time.perf_counter()
        rows = clone_threads(saver.conn, templates, groups)
        with saver.conn.cursor() as cur:
            cur.execute("ANALYZE")
        total = len(played) + TEMPLATES * (groups + 1)
        print(
            f"cloned {TEMPLATES} templates into {TEMPLATES * groups:,} threads ({rows:,} rows)"
            f" in {time.perf_counter() - start:.1f} s; {total:,} threads in Postgres"
        )
        for i in (0, 3, TEMPLATES - 1):
            assert_clone_equal(graph, templates[i], f"c{groups - 1:07d}-{templates[i]}")
        print("  a clone extracts exactly as its template: checked on 3 templates")
    n = total
    rate, marks, result = _sweep(dsn, tmp / "local.sqlite", LocalExecutor(1), n)
    print(f"postgres local x1: {rate:7.0f} threads/s over {n:,} threads")
    print(_memory_line("local", marks, n))
    _stream_costs(tmp / "local.sqlite", result, tmp / "local.json")
    if not args.no_trace:
        _, marks, _ = _sweep(dsn, tmp / "traced.sqlite", LocalExecutor(1), n, traced=True)
        print(_memory_line("local, traced", marks, n))
    if args.no_ray:
        return
    import ray

    ray.init(
        num_cpus=2, include_dashboard=False, runtime_env={"env_vars": {"PYTHONPATH": str(ROOT)}}
    )
    try:
        from lg_eval.executors._ray import RayExecutor

        _ray_overhead(dsn, RayExecutor())
        _sweep(dsn, tmp / "warm.sqlite", RayExecutor(), 2000)  # worker start-up
        rate, marks, _ = _sweep(dsn, tmp / "ray.sqlite", RayExecutor(), n)
        print(f"postgres ray (2 CPUs): {rate:7.0f} threads/s over {n:,} threads")
        print(_memory_line("ray", marks, n))
    finally:
        ray.shutdown()


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
