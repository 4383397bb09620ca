"""Benchmark: ``lg-eval view`` on a run of 100,000 cases, time to first page.

Run with ``python -m tests.benchmarks --only viewer [--cases N]``. The store is a SQLite
results store: the 7 results of the reports' support run (scores, a judge's reasoning,
played turns, trajectories) written once through ``ResultStore.write``, then cloned in SQL
under new case ids until the run holds N cases (100,000 by default), with a second,
small run of the same dataset so the runs list draws a trend, and a copy of the big run
with some statuses and scores changed (``run-b``) to compare it with. The viewer is started on
the store (which adds its indexes), and each page is fetched over HTTP from a cold
server: the runs list, the run's first page (counts, evaluator table, three charts,
the 50 worst cases), a filtered page, a search, a deep page, a case, and the
comparisons (the small run against the big one, the big one against its copy, and a
deep page of that). The first fetch of a page counts its run's aggregates (kept for a
finished run); "again" is the median of 4 more. Each is timed on the clock and in CPU
seconds of the process (the server runs in it), and the process's max RSS is printed.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import tempfile
import time
import urllib.request
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from lg_eval.experiments import ResultStore, open_store
from lg_eval.viewer import make_viewer
from tests.reports.conftest import RUN_ID, info, make_support_run


def build_store(path: Path, cases: int) -> None:
    run = make_support_run()
    with open_store(path) as store:
        store.begin_run(run.info)
        store.write(list(enumerate(run.results)))
        small = run.model_copy(
            update={"info": info("run-small", run.info.started_at.replace(day=1))}
        )
        store.begin_run(small.info)
        store.write(
            [(i, r.model_copy(update={"run_id": "run-small"})) for i, r in enumerate(run.results)]
        )
        copies = -(-cases // len(run.results))
        store.execute_many(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)"
            " INSERT INTO lg_eval_cases SELECT c.run_id, c.case_id || '-' || n.i, c.repetition,"
            " c.ordinal + n.i * 100, c.status, c.latency_s * (1 + n.i % 7), c.tokens, c.cost,"
            " c.model_calls, c.finished_at, c.result FROM lg_eval_cases c, n WHERE c.run_id = ?",
            [(copies - 1, RUN_ID)],
        )
        store.execute_many(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)"
            " INSERT INTO lg_eval_scores SELECT s.run_id, s.case_id || '-' || n.i, s.repetition,"
            " s.idx, s.evaluator, s.key, s.score, s.passed, s.row FROM lg_eval_scores s, n"
            " WHERE s.run_id = ?",
            [(copies - 1, RUN_ID)],
        )
        clone_run(store, RUN_ID, RUN_B, run.info.started_at.replace(year=2031))


RUN_B = "run-b"


def clone_run(store: ResultStore, run_id: str, clone: str, started: datetime) -> None:
    """``run_id`` copied under ``clone``, started at ``started``, with every 10th case's
    status turned (passed to failed and back) and every 7th case's scores lowered by 0.25,
    so that a comparison finds cases of every kind."""
    store.begin_run(info(clone, started))
    store.execute_many(
        "INSERT INTO lg_eval_cases SELECT ?, case_id, repetition, ordinal, CASE WHEN"
        " (ordinal / 100) % 10 = 3 THEN (CASE status WHEN 'passed' THEN 'failed' WHEN 'failed' THEN"
        " 'passed' ELSE status END) ELSE status END, latency_s, tokens, cost, model_calls,"
        " finished_at, result FROM lg_eval_cases WHERE run_id = ?",
        [(clone, run_id)],
    )
    store.execute_many(
        "INSERT INTO lg_eval_scores SELECT ?, s.case_id, s.repetition, s.idx, s.evaluator,"
        " s.key, CASE WHEN c.ordinal % 7 = 5 AND s.score IS NOT NULL THEN s.score - 0.25"
        " ELSE s.score END, s.passed, s.row FROM lg_eval_scores s JOIN lg_eval_cases c ON"
        " c.run_id = s.run_id AND c.case_id = s.case_id AND c.repetition = s.repetition"
        " WHERE s.run_id = ?",
        [(clone, run_id)],
    )


def fetch(url: str) -> tuple[float, float]:
    """Seconds to fetch ``url``: on the clock, and of this process's CPU (the server runs
    in it: the CPU time does not grow when other processes share the machine)."""
    start, cpu = time.perf_counter(), time.process_time()
    with urllib.request.urlopen(url, timeout=120) as response:
        response.read()
        assert response.status == 200, url
    return time.perf_counter() - start, time.process_time() - cpu


def main(argv: Sequence[str] = ()) -> None:
    parser = argparse.ArgumentParser(prog="bench_viewer")
    parser.add_argument("--cases", type=int, default=100_000)
    args, _ = parser.parse_known_args(list(argv))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "results.sqlite"
        start = time.perf_counter()
        build_store(path, args.cases)
        with open_store(path) as store:
            total = sum(store.status_counts(RUN_ID).values())
        print(f"store: {total} cases of run {RUN_ID} built in {time.perf_counter() - start:.1f}s")
        start = time.perf_counter()
        server = make_viewer(f"sqlite:///{path}")
        print(f"viewer opened (indexes added) in {time.perf_counter() - start:.2f}s")
        server.start()
        base = server.url.rstrip("/")
        pages = {
            "runs list": "/",
            "run, first page": f"/run?id={RUN_ID}",
            "run, tag filter": f"/run?id={RUN_ID}&tag=hitl",
            "run, search": f"/run?id={RUN_ID}&q=refund-happy-777",
            "run, page 1000": f"/run?id={RUN_ID}&page=1000",
            "case": f"/case?run={RUN_ID}&id=refund-over-limit-500",
            "compare, 7 against 100k": f"/compare?a=run-small&b={RUN_ID}",
            "compare, 100k against 100k": f"/compare?a={RUN_ID}&b={RUN_B}",
            "compare, page 100": f"/compare?a={RUN_ID}&b={RUN_B}&change=unchanged&page=100",
        }
        try:
            for name, page in pages.items():
                first, first_cpu = fetch(base + page)
                times = [fetch(base + page) for _ in range(4)]
                median = statistics.median(t for t, _ in times) * 1000
                cpu = statistics.median(c for _, c in times) * 1000
                print(
                    f"{name:28s} first {first * 1000:6.0f} ms (cpu {first_cpu * 1000:5.0f})"
                    f"   again {median:6.0f} ms (cpu {cpu:5.0f})"
                )
        finally:
            server.stop()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"max RSS {rss:.0f} MiB")


if __name__ == "__main__":
    main()
