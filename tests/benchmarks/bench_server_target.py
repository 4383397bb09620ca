"""Benchmark: cases/s of a dataset run against a deployed assistant, against raw runs.

Run with ``python -m tests.benchmarks --only server_target [--cases N]`` (N=16 by default).
On a fresh ``langgraph dev``, plays the golden case ``hitl-agent-approve-then-reject``
(two inputs, two resumes) N times, four at a time, three ways: the four runs alone
(a thread created, the runs sent through LangGraph's ``RemoteGraph``); the same runs with
the requests a player and a reader must make (the thread's state before and after each
turn, its history and runs list); and ``run_experiment`` on
:func:`lg_eval.server.server_target`, which makes those requests, then scores and stores
each case. lg_eval's share is the difference between the last two.
"""

from __future__ import annotations

import argparse
import tempfile
import time
import uuid
import warnings
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from langgraph.pregel.remote import RemoteGraph
from langgraph_sdk import get_sync_client

from graphs.scenarios import EVERY_SCENARIO, drive
from lg_eval.datasets import load_dataset
from lg_eval.experiments import run_experiment
from lg_eval.server import server_target
from tests.server.launch import cli, serving

CASE = "hitl-agent-approve-then-reject"
CONCURRENCY = 4
GOLDEN = Path(__file__).resolve().parents[2] / "examples" / "golden" / "workflows.yaml"


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="bench_server_target")
    parser.add_argument("--cases", type=int, default=16)
    args, _ = parser.parse_known_args(argv)
    command = cli()
    if command is None:
        print("langgraph-cli is not installed; skipped")
        return
    warnings.simplefilter("ignore")
    scenario = EVERY_SCENARIO["hitl_agent"]
    golden = load_dataset(GOLDEN)
    dataset = golden.model_copy(update={"cases": [c for c in golden.cases if c.id == CASE]})
    with (
        tempfile.TemporaryDirectory() as home,
        serving(Path(home), command) as url,
        ThreadPoolExecutor(CONCURRENCY) as pool,
    ):
        client = get_sync_client(url=url)
        remote = RemoteGraph(scenario.name, url=url)

        def runs_only(_: int) -> None:
            thread_id = str(uuid.uuid4())
            client.threads.create(thread_id=thread_id)
            drive(remote, thread_id, scenario.turns)

        def with_reads(_: int) -> None:
            thread_id = str(uuid.uuid4())
            config: Any = {"configurable": {"thread_id": thread_id}}
            client.threads.create(thread_id=thread_id)
            client.threads.get_state(thread_id, subgraphs=True)
            for turn in scenario.turns:
                remote.invoke(turn.input, config)
                client.threads.get_state(thread_id, subgraphs=True)
            client.threads.get_history(thread_id, limit=1000, checkpoint={"checkpoint_ns": ""})
            client.runs.list(thread_id, limit=1000)

        cpu: dict[str, float] = {}

        def timed(case: Callable[[int], None]) -> float:
            start, busy = time.perf_counter(), time.process_time()
            list(pool.map(case, range(args.cases)))
            cpu[case.__name__] = time.process_time() - busy
            return time.perf_counter() - start

        for _ in range(2):  # the first pass warms the server and the clients
            raw, reads = timed(runs_only), timed(with_reads)
            start, busy = time.perf_counter(), time.process_time()
            run = run_experiment(
                server_target(url, scenario.name, graph=scenario.build()),
                dataset,
                checkpointer="memory://",
                store=Path(home) / f"results-{uuid.uuid4()}.sqlite",
                repetitions=args.cases,
                concurrency=CONCURRENCY,
                judge_cache=False,
            )
            ours = time.perf_counter() - start
            cpu["run_experiment"] = time.process_time() - busy
        statuses = {result.status for result in run.results}
        print(f"cases: {args.cases} ({CASE}, 4 runs each), {CONCURRENCY} at a time")
        print(f"RemoteGraph runs only:        {args.cases / raw:6.2f} cases/s")
        print(f"runs + the player's reads:    {args.cases / reads:6.2f} cases/s")
        print(f"run_experiment on the server: {args.cases / ours:6.2f} cases/s ({statuses})")
        print(f"lg_eval adds to the requests: {100 * (ours - reads) / reads:6.1f} %")
        for name, seconds in cpu.items():
            print(f"CPU in this process, {name}: {1000 * seconds / args.cases:6.1f} ms/case")
