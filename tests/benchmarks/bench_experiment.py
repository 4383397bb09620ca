"""Benchmark: the experiment runner against a plain ``invoke`` loop playing the same turns.

Run with ``make bench`` or ``python -m tests.benchmarks --only experiment [--quick]``.
1,000 cases (100 with ``--quick``) of the human-in-the-loop email agent
(``graphs.hitl_agent``: ``create_agent`` + ``HumanInTheLoopMiddleware``) with a
deterministic chat model: each case sends a request, the agent proposes
``send_email``, the case approves it, the agent answers. Three deterministic
evaluators score each case (graph trajectory, tool calls, exact answer).

In one process, on one SQLite checkpointer file (opened the same way for both),
it times the plain loop (``invoke(input)``, ``invoke(Command(resume=...))`` per
thread: play only) and ``run_experiment`` (play, extract, score, store in the
results SQLite file), alternating which goes first over ``--rounds`` rounds; the
median of each counts (wall and CPU). Goal: runner / plain <= 1.10 (wall).

Both sides compile the graph once: the plain loop builds it on the checkpointer, and the
runner is given it compiled (``build()``) and binds it once to the run's checkpointer.
``--target factory`` hands the runner the factory instead, which it calls once per case
by design (each case gets its own graph); that build is lg_eval-independent user code and
is shown as a phase.

After the timed rounds, a sequential pass over up to ``PHASE_CASES`` of the runner's
threads times each piece of lg_eval's extra work on its own (the player's state checks,
extraction, the evaluators, the store's serialization and write, the factory build), in
ms per case and as a share of the plain loop's time per case.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langgraph.types import Command

from graphs import hitl_agent
from lg_eval._effects import drive
from lg_eval.datasets import Dataset
from lg_eval.experiments import ExperimentRun, open_store, run_experiment
from lg_eval.experiments._case import thread_id_for
from lg_eval.experiments.scoring import (
    EvaluatorResolver,
    case_outputs,
    final_messages,
    reference_of,
)
from lg_eval.extract.thread import extraction
from lg_eval.play import open_checkpointer

GOAL = 1.10
ROUNDS = 3
PHASE_CASES = 200
ANSWER = "Done: I emailed Bob."
APPROVE = {"decisions": [{"type": "approve"}]}
STEPS = [
    ["__start__", "model", "HumanInTheLoopMiddleware.after_model", "__interrupt__"],
    ["tools", "model", "HumanInTheLoopMiddleware.after_model"],
]  # fmt: skip


class EmailModel(BaseChatModel):
    """Proposes ``send_email`` for a new request and answers once the tool has run."""

    @property
    def _llm_type(self) -> str:
        return "bench-email"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> EmailModel:
        return self

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        if isinstance(messages[-1], ToolMessage):
            reply = AIMessage(ANSWER)
        else:
            call = {"name": "send_email", "args": hitl_agent.REPLY_TO_BOB, "id": "call_email"}
            reply = AIMessage("", tool_calls=[call])
        return ChatResult(generations=[ChatGeneration(message=reply)])


def build(checkpointer: Any = None) -> Any:
    return hitl_agent.build(checkpointer, model=EmailModel())


def user(n: int) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": f"Answer Bob, please ({n})."}]}


def turns(n: int) -> list[dict[str, Any]]:
    return [{"input": user(n)}, {"resume": APPROVE}]


def dataset(cases: int) -> Dataset:
    expected = {
        "trajectory": {"steps": STEPS},
        "tool_calls": [{"name": "send_email", "args": {"to": "bob@example.com"}}],
        "output": ANSWER,
    }
    return Dataset.model_validate(
        {
            "name": "bench-hitl",
            "cases": [
                {"id": f"c{n}", "turns": turns(n), "expected": expected} for n in range(cases)
            ],
        }
    )  # fmt: skip


Timing = tuple[float, float]
"""Wall seconds, and CPU seconds of the whole process (all threads)."""


def plain_loop(url: str, cases: int, prefix: str) -> Timing:
    """Play every case's turns with ``invoke`` on the checkpointer (no lg_eval involved)."""
    with open_checkpointer(url) as saver:
        graph = build(saver)
        start, cpu = time.perf_counter(), time.process_time()
        for n in range(cases):
            config: Any = {"configurable": {"thread_id": f"{prefix}-{n}"}}
            graph.invoke(user(n), config)
            graph.invoke(Command(resume=APPROVE), config)
        return time.perf_counter() - start, time.process_time() - cpu


def runner(
    url: str, store: Path, data: Dataset, run_id: str, concurrency: int, target: Any
) -> tuple[Timing, ExperimentRun]:
    start, cpu = time.perf_counter(), time.process_time()
    run = run_experiment(
        target, data, checkpointer=url, store=store, run_id=run_id, concurrency=concurrency,
        judge_cache=False,
    )  # fmt: skip
    elapsed = time.perf_counter() - start, time.process_time() - cpu
    statuses = {r.status for r in run.results}
    assert statuses == {"passed"}, f"unexpected statuses {statuses}: {run.results[0]}"
    assert len(run.results) == len(data.cases)
    return elapsed, run


def _per_case(seconds: float, cases: int) -> float:
    return seconds / cases * 1000


def phases(url: str, folder: Path, data: Dataset, run: ExperimentRun) -> dict[str, float]:
    """Milliseconds per case of each piece of lg_eval's work, timed alone, sequentially."""
    cases = data.cases[:PHASE_CASES]
    n = len(cases)
    found: dict[str, float] = {}
    with open_checkpointer(url) as saver:
        graph = build(saver)
        configs: list[Any] = [
            {"configurable": {"thread_id": thread_id_for(run.info.run_id, case.id, 0, 1)}}
            for case in cases
        ]
        start = time.perf_counter()
        for config in configs:  # the player: one check of a fresh thread, one after each turn
            fresh = {"configurable": {"thread_id": config["configurable"]["thread_id"] + "-x"}}
            graph.get_state(fresh, subgraphs=True)
            graph.get_state(config, subgraphs=True)
            graph.get_state(config, subgraphs=True)
        found["player state checks (3 get_state)"] = _per_case(time.perf_counter() - start, n)
        start = time.perf_counter()
        threads = [drive(extraction(graph, config)) for config in configs]
        found["extraction (reads the checkpointer)"] = _per_case(time.perf_counter() - start, n)
        resolver = EvaluatorResolver(data)
        start = time.perf_counter()
        for case, thread in zip(cases, threads, strict=True):
            outputs = case_outputs(thread, final_messages(thread))
            for item in resolver.for_case(case):
                reference = item.reference if item.own_reference else reference_of(case.expected)
                item.evaluator(outputs=outputs, reference_outputs=reference, inputs=[])
        found["3 evaluators"] = _per_case(time.perf_counter() - start, n)
        start = time.perf_counter()
        with open_store(folder / "phase-store.sqlite") as store:
            store.write(list(enumerate(run.results[:n])))
        found["store (serialize + one batch write)"] = _per_case(time.perf_counter() - start, n)
        start = time.perf_counter()
        for _ in cases:
            build(saver)
        found["graph build (factory targets only)"] = _per_case(time.perf_counter() - start, n)
    return found


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="bench_experiment")
    parser.add_argument("--quick", action="store_true", help="100 cases instead of 1,000")
    parser.add_argument("--concurrency", type=int, default=4, help="the runner's (default 4)")
    parser.add_argument("--rounds", type=int, default=ROUNDS, help=f"default {ROUNDS}")
    parser.add_argument(
        "--target", choices=("compiled", "factory"), default="compiled",
        help="what the runner is given: the compiled graph (default) or the factory",
    )  # fmt: skip
    args, _ = parser.parse_known_args(argv)
    cases = 100 if args.quick else 1_000
    data = dataset(cases)
    target: Any = build() if args.target == "compiled" else build
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        url = f"sqlite:///{folder / 'checkpoints.sqlite'}"
        store = folder / "results.sqlite"
        os.chdir(folder)  # the default .lg_eval files, if any, stay in the temporary folder
        plain_loop(url, 10, "warm")  # imports, first compile, SQLite tables
        runner(url, store, dataset(10), "warm", args.concurrency, target)
        timings: dict[str, list[Timing]] = {"plain": [], "runner": []}
        last: list[ExperimentRun] = []

        def run_job(r: int) -> Timing:
            elapsed, run = runner(url, store, data, f"run{r}", args.concurrency, target)
            last[:] = [run]
            return elapsed

        jobs: list[tuple[str, Callable[[int], Timing]]] = [
            ("plain", lambda r: plain_loop(url, cases, f"plain{r}")),
            ("runner", run_job),
        ]
        for round_ in range(args.rounds):
            for job_name, job in jobs if round_ % 2 == 0 else reversed(jobs):
                timings[job_name].append(job(round_))
        per_phase = phases(url, folder, data, last[0])
    pairs = list(zip(timings["plain"], timings["runner"], strict=True))
    ratios = [r[0] / p[0] for p, r in pairs]  # each round's runner against its own plain loop
    cpu_ratios = [r[1] / p[1] for p, r in pairs]
    plain = statistics.median(w for w, _ in timings["plain"])
    ran = statistics.median(w for w, _ in timings["runner"])
    plain_cpu = statistics.median(c for _, c in timings["plain"])
    ran_cpu = statistics.median(c for _, c in timings["runner"])
    ratio = statistics.median(ratios)
    print(f"{cases} HITL cases (2 turns each), 3 evaluators, SQLite checkpointer; runner "
          f"target: {args.target}; medians of {args.rounds} interleaved rounds")  # fmt: skip
    print(f"  plain invoke loop   {plain:7.2f} s wall  ({_per_case(plain, cases):6.2f} ms/case)"
          f"  {plain_cpu:6.2f} s CPU")  # fmt: skip
    print(f"  run_experiment      {ran:7.2f} s wall  ({_per_case(ran, cases):6.2f} ms/case)"
          f"  {ran_cpu:6.2f} s CPU  concurrency={args.concurrency}")  # fmt: skip
    verdict = "PASS" if ratio <= GOAL else "FAIL"
    print(f"  RATIO runner/plain  {ratio:7.3f} wall   goal <= {GOAL:.2f}: {verdict}")
    print(f"                      {statistics.median(cpu_ratios):7.3f} CPU  (median per-round)")
    print("  per-round ratios, wall: " + ", ".join(f"{r:.3f}" for r in ratios)
          + "; CPU: " + ", ".join(f"{r:.3f}" for r in cpu_ratios))  # fmt: skip
    print(f"  lg_eval's work, timed alone over {min(cases, PHASE_CASES)} cases "
          "(ms/case; % of the plain loop's ms/case):")  # fmt: skip
    plain_ms = _per_case(plain, cases)
    for phase, ms in per_phase.items():
        print(f"    {phase:38s} {ms:7.3f} ms  {ms / plain_ms:6.1%}")


if __name__ == "__main__":
    main()
