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
results SQLite file), alternating which goes first over ``ROUNDS`` rounds; the
best time of each counts. Goal: runner / plain <= 1.10.
"""

from __future__ import annotations

import argparse
import os
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
from lg_eval.datasets import Dataset
from lg_eval.experiments import run_experiment
from lg_eval.play import open_checkpointer

GOAL = 1.10
ROUNDS = 3
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


def runner(url: str, store: Path, data: Dataset, run_id: str, concurrency: int) -> Timing:
    start, cpu = time.perf_counter(), time.process_time()
    run = run_experiment(
        build, data, checkpointer=url, store=store, run_id=run_id, concurrency=concurrency,
        judge_cache=False,
    )  # fmt: skip
    elapsed = time.perf_counter() - start, time.process_time() - cpu
    statuses = {r.status for r in run.results}
    assert statuses == {"passed"}, f"unexpected statuses {statuses}: {run.results[0]}"
    assert len(run.results) == len(data.cases)
    return elapsed


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="bench_experiment")
    parser.add_argument("--quick", action="store_true", help="100 cases instead of 1,000")
    parser.add_argument("--concurrency", type=int, default=4, help="the runner's (default 4)")
    args, _ = parser.parse_known_args(argv)
    cases = 100 if args.quick else 1_000
    data = dataset(cases)
    with tempfile.TemporaryDirectory() as folder:
        url = f"sqlite:///{Path(folder) / 'checkpoints.sqlite'}"
        store = Path(folder) / "results.sqlite"
        os.chdir(folder)  # the default .lg_eval files, if any, stay in the temporary folder
        plain_loop(url, 10, "warm")  # imports, first compile, SQLite tables
        runner(url, store, dataset(10), "warm", args.concurrency)
        timings: dict[str, list[Timing]] = {"plain": [], "runner": []}
        jobs: list[tuple[str, Callable[[int], Timing]]] = [
            ("plain", lambda r: plain_loop(url, cases, f"plain{r}")),
            ("runner", lambda r: runner(url, store, data, f"run{r}", args.concurrency)),
        ]
        for round_ in range(ROUNDS):
            for name, job in jobs if round_ % 2 == 0 else reversed(jobs):
                timings[name].append(job(round_))
    plain, ran = min(timings["plain"]), min(timings["runner"])
    plain_cpu = min(cpu for _, cpu in timings["plain"])
    ran_cpu = min(cpu for _, cpu in timings["runner"])
    ratio = ran[0] / plain[0]
    print(f"{cases} HITL cases (2 turns each), 3 evaluators, SQLite checkpointer; best of {ROUNDS}")
    print(f"  plain invoke loop   {plain[0]:7.2f} s wall  ({plain[0] / cases * 1000:6.2f} ms/case)"
          f"  {plain_cpu:6.2f} s CPU")  # fmt: skip
    print(f"  run_experiment      {ran[0]:7.2f} s wall  ({ran[0] / cases * 1000:6.2f} ms/case)"
          f"  {ran_cpu:6.2f} s CPU  concurrency={args.concurrency}")  # fmt: skip
    verdict = "PASS" if ratio <= GOAL else "FAIL"
    print(f"  wall ratio          {ratio:7.3f}   goal <= {GOAL:.2f}: {verdict}")
    print(f"  CPU ratio           {ran_cpu / plain_cpu:7.3f}   (lg_eval's extra work: extract, "
          "score, store)")  # fmt: skip


if __name__ == "__main__":
    main()
