"""Benchmark: the statistics of a run and of two runs, with and without repetitions.

Run with ``python -m tests.benchmarks --only stats [--quick] [--rounds N]``.

1. **compare_runs** of two seeded runs, a boolean and a numeric score per result: 10,000
   cases × 1 repetition (the paired tests per case and pooled over cases) and 1,000 cases ×
   10 repetitions (the pooled tests pair by case over its repetitions).
2. **build_report** of the same 1,000 × 10 run: the pass-rate and mean intervals resample
   cases.

Seconds per call, the median of the rounds. On a shared machine the numbers are noisy: run
it when it is quiet.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime

from lg_eval.experiments import CaseResult, ExperimentRun, RunInfo, ScoreRow, compare_runs
from lg_eval.reports import build_report


def seeded_run(run_id: str, cases: int, repetitions: int, p: float, seed: int) -> ExperimentRun:
    """A run whose results pass with probability ``p`` (a case's own rate drawn around it)."""
    draw = random.Random(seed)
    results = []
    for case in range(cases):
        rate = min(max(draw.gauss(p, 0.2), 0.0), 1.0)
        for repetition in range(repetitions):
            passed = draw.random() < rate
            results.append(
                CaseResult(
                    run_id=run_id,
                    case_id=f"case-{case}",
                    repetition=repetition,
                    status="passed" if passed else "failed",
                    latency_s=draw.random(),
                    scores=[
                        ScoreRow(evaluator="strict", key="strict", score=passed, passed=passed),
                        ScoreRow(evaluator="judge", key="judge", score=round(draw.random(), 2)),
                    ],
                )
            )
    info = RunInfo(
        run_id=run_id,
        dataset="bench",
        dataset_hash="h",
        target="t",
        checkpointer="memory",
        started_at=datetime(2026, 1, 1, tzinfo=UTC),
    )
    return ExperimentRun(info=info, results=results)


def median_seconds(rounds: int, call: Callable[[], object]) -> float:
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        call()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main(argv: Sequence[str] = ()) -> None:
    parser = argparse.ArgumentParser(prog="bench_stats")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--rounds", type=int, default=5)
    args, _ = parser.parse_known_args(list(argv))
    scale = 10 if args.quick else 1
    flat = [seeded_run(f"flat-{s}", 10_000 // scale, 1, p, s) for s, p in ((1, 0.8), (2, 0.75))]
    reps = [seeded_run(f"reps-{s}", 1_000 // scale, 10, p, s) for s, p in ((1, 0.8), (2, 0.75))]
    print(f"median of {args.rounds} rounds")
    print("| work | results per run | s |")
    print("|---|---:|---:|")
    for label, (a, b) in (
        (f"compare_runs, {10_000 // scale} cases × 1", flat),
        (f"compare_runs, {1_000 // scale} cases × 10", reps),
    ):
        seconds = median_seconds(args.rounds, lambda a=a, b=b: compare_runs(a, b))
        print(f"| {label} | {len(a.results)} | {seconds:.3f} |")
    run = reps[0]
    seconds = median_seconds(args.rounds, lambda: build_report(run))
    print(f"| build_report, {1_000 // scale} cases × 10 | {len(run.results)} | {seconds:.3f} |")


if __name__ == "__main__":
    main()
