"""Benchmark: what the one scoring step costs over calling the evaluators by hand.

Run with ``python -m tests.benchmarks --only scoring [--quick] [--rounds N]``.

On one extracted thread of the small tool-calling agent of ``tests.sweeps.helpers``
(one turn: agent -> tools -> agent):

1. **Deterministic evaluators, sync.** Three evaluators (``graph_trajectory_strict_match``,
   ``tool_order`` and the sweep helpers' ``turns``) scored N times by hand (the thread's
   outputs built, each evaluator called with ``outputs=`` / ``reference_outputs=``, the
   feedback dicts kept) against ``experiments.score_thread`` driven sync (the same calls
   through ``lg_eval.scoring``, read, verdicts, rows, the recorded tool calls and
   trajectory, usage and status). Microseconds per thread and the ratio.
2. **Judges that wait, awaited.** Three async evaluators that each wait 20 ms (a model's
   latency) scored by awaiting them one after another against ``score_thread`` awaited
   (``adrive``), which awaits them together: milliseconds per thread and the ratio.

Each side runs in alternating rounds; the median round is reported. On a shared machine
the numbers are noisy: run it when it is quiet.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver

from lg_eval._effects import Core, adrive, drive, sleep
from lg_eval._evaluator import make_evaluator
from lg_eval._trajectory import ThreadTrajectory
from lg_eval.evaluators import resolve_evaluator
from lg_eval.experiments import CaseEvaluator, CaseResult, score_thread
from lg_eval.experiments._score import case_outputs, final_messages, recorded_tool_calls
from lg_eval.extract import extract_thread
from tests.sweeps import helpers

LATENCY = 0.02


def _thread() -> ThreadTrajectory:
    saver = InMemorySaver()
    graph = helpers.build(saver)
    helpers.play(graph, "bench")
    return extract_thread(graph, {"configurable": {"thread_id": "bench"}})


def _waits(**_: Any) -> Core[dict[str, Any]]:
    """A judge's shape: its model call is an effect (a wait here), awaited when driven async."""
    yield sleep(LATENCY)
    return {"score": True}


def _median_round(rounds: int, sides: dict[str, Callable[[], float]]) -> dict[str, float]:
    times: dict[str, list[float]] = {name: [] for name in sides}
    for index in range(rounds):
        order = list(sides) if index % 2 == 0 else list(reversed(sides))
        for name in order:
            times[name].append(sides[name]())
    return {name: statistics.median(values) for name, values in times.items()}


def _sync_sides(thread: ThreadTrajectory, n: int) -> dict[str, Callable[[], float]]:
    calls = recorded_tool_calls(final_messages(thread)) or []
    reference = {
        "trajectory": thread.to_graph_trajectory().model_dump(),
        "tool_calls": [call["name"] for call in calls],
    }
    names = ["graph_trajectory_strict_match", "tool_order", "tests.sweeps.helpers:turns"]
    evaluators = [CaseEvaluator(*resolve_evaluator(name)) for name in names]

    def by_hand() -> float:
        started = time.perf_counter()
        for _ in range(n):
            outputs = case_outputs(thread, final_messages(thread))
            kept = [e.evaluator(outputs=outputs, reference_outputs=reference) for e in evaluators]
            assert len(kept) == 3
        return (time.perf_counter() - started) / n

    def scoring_step() -> float:
        started = time.perf_counter()
        for _ in range(n):
            result = CaseResult(run_id="r", case_id="c", status="error", thread_id="bench")
            drive(score_thread(result, thread, evaluators, reference=reference, thresholds={}))
            assert [row.passed for row in result.scores] == [True, True, True]
        return (time.perf_counter() - started) / n

    return {"by hand": by_hand, "score_thread": scoring_step}


def _async_sides(thread: ThreadTrajectory, n: int) -> dict[str, Callable[[], float]]:
    evaluators = [
        CaseEvaluator(f"judge_{i}", make_evaluator(f"judge_{i}", _waits)) for i in range(3)
    ]
    outputs = case_outputs(thread, final_messages(thread))

    async def one_after_another() -> None:
        for _ in range(n):
            for item in evaluators:
                await item.evaluator.aevaluate(outputs=outputs)

    async def together() -> None:
        for _ in range(n):
            result = CaseResult(run_id="r", case_id="c", status="error", thread_id="bench")
            await adrive(score_thread(result, thread, evaluators, thresholds={}))
            assert [row.passed for row in result.scores] == [True, True, True]

    def timed(run: Callable[[], Any]) -> Callable[[], float]:
        def side() -> float:
            started = time.perf_counter()
            asyncio.run(run())
            return (time.perf_counter() - started) / n

        return side

    return {"awaited in turn": timed(one_after_another), "score_thread": timed(together)}


def main(argv: Sequence[str] = ()) -> None:
    parser = argparse.ArgumentParser(prog="bench_scoring")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--rounds", type=int, default=5)
    args, _ = parser.parse_known_args(list(argv))
    thread = _thread()
    sync_n, async_n = (300, 10) if args.quick else (2000, 40)

    sync = _median_round(args.rounds, _sync_sides(thread, sync_n))
    hand, step = sync["by hand"], sync["score_thread"]
    print(f"three deterministic evaluators, {sync_n} threads per round, median of {args.rounds}")
    print("| side | µs per thread | ratio |")
    print("|---|---:|---:|")
    print(f"| by hand | {hand * 1e6:.0f} | 1.00× |")
    print(f"| score_thread (sync) | {step * 1e6:.0f} | {step / hand:.2f}× |")

    awaited = _median_round(args.rounds, _async_sides(thread, async_n))
    turn, together = awaited["awaited in turn"], awaited["score_thread"]
    print(f"\nthree judges waiting {LATENCY * 1000:.0f} ms each, {async_n} threads per round")
    print("| side | ms per thread | ratio |")
    print("|---|---:|---:|")
    print(f"| awaited one after another | {turn * 1000:.1f} | 1.00× |")
    print(f"| score_thread (awaited together) | {together * 1000:.1f} | {together / turn:.2f}× |")


if __name__ == "__main__":
    main()
