"""Benchmark: sweeping many short threads, local executor against Ray.

Run with ``python -m tests.benchmarks --only sweep [--quick] [--threads N] [--no-ray]``.
Plays N threads (2,000; 300 with ``--quick``) of the small tool-calling agent of
``tests.sweeps.helpers`` (one turn: agent -> tools -> agent, 6 checkpoints each) on a
SQLite checkpointer (and on Postgres when ``LG_EVAL_PG_DSN`` is set), then measures:

* per-thread cost of the parts: extraction alone (``extract_thread``, fast reader),
  evaluation alone (``redundancy`` + a custom evaluator over the extracted thread);
* whole sweeps (list, extract, score, store) with ``LocalExecutor(1)``,
  ``LocalExecutor(2)`` and ``RayExecutor`` on ``ray.init(num_cpus=2)``, in threads/s;
* the driver's peak RSS (``ru_maxrss``) and the Python heap peak of a local sweep
  (``tracemalloc``), so that memory does not grow with the number of threads.
"""

from __future__ import annotations

import argparse
import os
import resource
import sqlite3
import tempfile
import time
import tracemalloc
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langgraph.checkpoint.sqlite import SqliteSaver

from lg_eval.executors import LocalExecutor
from lg_eval.extract import extract_thread
from lg_eval.play import open_checkpointer
from lg_eval.sweeps import sweep_threads
from lg_eval.sweeps.worker import resolve_evaluators
from tests.sweeps import helpers

GRAPH = "tests.sweeps.helpers:build"
ROOT = Path(__file__).resolve().parents[2]


def _rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _populate(graph: Any, n: int) -> None:
    for i in range(n):
        helpers.play(graph, f"t-{i:06d}", {"team": "escalated" if i % 10 == 0 else "base"})


def _parts(graph: Any, n: int) -> tuple[float, float]:
    """Seconds per thread: extraction, evaluation."""
    ids = [f"t-{i:06d}" for i in range(min(n, 500))]
    evaluators = resolve_evaluators(helpers.EVALUATORS)
    start = time.perf_counter()
    threads = [extract_thread(graph, {"configurable": {"thread_id": t}}) for t in ids]
    extract_s = (time.perf_counter() - start) / len(ids)
    from lg_eval.experiments.scoring import case_outputs, final_messages

    outputs = [case_outputs(t, final_messages(t)) for t in threads]
    start = time.perf_counter()
    for out in outputs:
        for _, ev in evaluators:
            ev(outputs=out, reference_outputs=None, inputs=None)
    return extract_s, (time.perf_counter() - start) / len(ids)


def _sweep(url: str, store: Path, executor: Any, n: int) -> float:
    start = time.perf_counter()
    result = sweep_threads(GRAPH, url, evaluators=helpers.EVALUATORS, store=store,
                           executor=executor, incremental=False, partition_size=100)  # fmt: skip
    elapsed = time.perf_counter() - start
    assert len(result.run.results) == n, len(result.run.results)
    return n / elapsed


def main(argv: Sequence[str] = ()) -> None:
    parser = argparse.ArgumentParser(prog="bench_sweep")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--no-ray", action="store_true")
    args, _ = parser.parse_known_args(list(argv))
    n = args.threads or (300 if args.quick else 2000)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "cp.sqlite"
        conn = sqlite3.connect(path, check_same_thread=False)
        graph = helpers.build(SqliteSaver(conn))
        start = time.perf_counter()
        _populate(graph, n)
        print(f"played {n} threads in {time.perf_counter() - start:.1f} s", flush=True)
        extract_s, eval_s = _parts(graph, n)
        print(f"per thread: extraction {extract_s * 1e3:.2f} ms, evaluation "
              f"{eval_s * 1e3:.3f} ms (2 evaluators)")  # fmt: skip
        conn.close()
        url = f"sqlite:///{path}"
        rate = _sweep(url, Path(tmp) / "r1.sqlite", LocalExecutor(1), n)
        print(f"sqlite local x1: {rate:7.0f} threads/s")
        tracemalloc.start()
        _sweep(url, Path(tmp) / "r0.sqlite", LocalExecutor(1), n)
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
        print(f"  Python heap peak of a local sweep of {n} threads: {peak:.1f} MiB")
        rate = _sweep(url, Path(tmp) / "r2.sqlite", LocalExecutor(2), n)
        print(f"sqlite local x2: {rate:7.0f} threads/s  (driver max RSS {_rss_mib():.0f} MiB)")
        server = os.environ.get("LG_EVAL_PG_DSN")
        dsn = _own_database(server) if server else None
        if dsn:
            with open_checkpointer(dsn) as saver:
                _populate(helpers.build(saver), n)
            rate = _sweep(dsn, Path(tmp) / "p1.sqlite", LocalExecutor(2), n)
            print(f"postgres local x2: {rate:7.0f} threads/s")
        if args.no_ray:
            if server and dsn:
                _drop_database(server, dsn)
            return
        import ray

        ray.init(num_cpus=2, include_dashboard=False,
                 runtime_env={"env_vars": {"PYTHONPATH": str(ROOT)}})  # fmt: skip
        try:
            from lg_eval.executors.ray import RayExecutor

            _sweep(url, Path(tmp) / "warm.sqlite", RayExecutor(), n)  # worker start-up
            rate = _sweep(url, Path(tmp) / "r3.sqlite", RayExecutor(), n)
            print(f"sqlite ray (2 CPUs): {rate:7.0f} threads/s  (driver max RSS "
                  f"{_rss_mib():.0f} MiB)")  # fmt: skip
            if dsn:
                _sweep(dsn, Path(tmp) / "pw.sqlite", RayExecutor(), n)
                rate = _sweep(dsn, Path(tmp) / "p3.sqlite", RayExecutor(), n)
                print(f"postgres ray (2 CPUs): {rate:7.0f} threads/s")
        finally:
            ray.shutdown()
            if server and dsn:
                _drop_database(server, dsn)


def _own_database(server: str) -> str:
    """A fresh database on the server (never the shared test tables)."""
    import secrets

    import psycopg

    name = f"lg_eval_bench_{secrets.token_hex(4)}"
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    base, _, query = server.partition("?")
    return base.rsplit("/", 1)[0] + f"/{name}" + (f"?{query}" if query else "")


def _drop_database(server: str, dsn: str) -> None:
    import psycopg

    name = dsn.partition("?")[0].rsplit("/", 1)[1]
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
