"""Benchmark: threads/s extracted from a local ``langgraph dev``, against the raw fetch.

Run with ``python -m tests.benchmarks --only server [--threads N]`` (N=40 by default).
Plays N ``hitl_agent`` threads (two human turns, two resumes) on a fresh ``langgraph
dev``, then times, over the same threads: the raw fetch (the SDK's history call for
every namespace plus the runs list, what any reader must ask for) and
``extract_server_thread`` (the same requests, restated and assembled). lg_eval's share
is the difference.
"""

from __future__ import annotations

import argparse
import tempfile
import time
import uuid
import warnings
from pathlib import Path

from langgraph.pregel.remote import RemoteGraph
from langgraph_sdk import get_sync_client

from graphs.scenarios import EVERY_SCENARIO, drive
from lg_eval.server import ServerConnection, extract_server_thread
from tests.server.launch import cli, serving


def _raw(client: object, thread_id: str) -> None:
    threads = client.threads  # type: ignore[attr-defined]
    threads.get_history(thread_id, limit=1000, checkpoint={"checkpoint_ns": ""})
    client.runs.list(thread_id, limit=1000)  # type: ignore[attr-defined]


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="bench_server")
    parser.add_argument("--threads", type=int, default=40)
    args, _ = parser.parse_known_args(argv)
    command = cli()
    if command is None:
        print("langgraph-cli is not installed; skipped")
        return
    warnings.simplefilter("ignore")
    scenario = EVERY_SCENARIO["hitl_agent"]
    with tempfile.TemporaryDirectory() as home, serving(Path(home), command) as url:
        client = get_sync_client(url=url)
        ids = []
        for _ in range(args.threads):
            thread_id = str(uuid.uuid4())
            client.threads.create(thread_id=thread_id)
            drive(RemoteGraph(scenario.name, url=url), thread_id, scenario.turns)
            ids.append(thread_id)
        server = ServerConnection(url)
        graph = scenario.build()
        for _ in range(2):  # the first pass warms the server's graph cache
            start = time.perf_counter()
            for thread_id in ids:
                _raw(server.sync_client, thread_id)
            raw = time.perf_counter() - start
            start = time.perf_counter()
            for thread_id in ids:
                extract_server_thread(server, thread_id, graph=graph)
            ours = time.perf_counter() - start
        print(f"threads: {len(ids)} (hitl_agent, 2 human turns)")
        print(f"raw history + runs fetch: {len(ids) / raw:8.1f} threads/s")
        print(f"extract_server_thread:    {len(ids) / ours:8.1f} threads/s")
        print(f"lg_eval adds:             {100 * (ours - raw) / raw:8.1f} %")
