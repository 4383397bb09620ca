"""Benchmark: threads/s extracted from a local ``langgraph dev``, against the raw fetch.

Run with ``python -m tests.benchmarks --only server [--threads N] [--scenario NAME]``
(N=40 and ``hitl_agent``, two human turns and two resumes, by default). Plays N threads
of the scenario on a fresh ``langgraph dev``, then times, over the same threads: the raw
fetch (the SDK's history call for every namespace plus the runs list, the requests any
reader of the thread must make, counting the empty read that ends each chain of numbered
subgraph calls) and ``extract_server_thread`` (the same requests, restated and
assembled). lg_eval's share is the difference.
"""

from __future__ import annotations

import argparse
import tempfile
import time
import uuid
import warnings
from pathlib import Path
from typing import Any

from langgraph.pregel.remote import RemoteGraph
from langgraph_sdk import get_sync_client

from graphs.scenarios import EVERY_SCENARIO, drive
from lg_eval.server import ServerConnection, extract_server_thread
from tests.server.launch import cli, serving


def _namespaces(client: Any, thread_id: str) -> list[str]:
    """The namespaces any reader of the thread must ask the history for (found before the
    timing): the root, those its tasks name, and their numbered later calls (``ns|1``,
    ...) up to the first empty one, which the history names nowhere."""
    found: list[str] = []
    pending = [""]
    while pending:
        ns = pending.pop()
        if ns in found:
            continue
        found.append(ns)
        states = client.threads.get_history(thread_id, limit=1000, checkpoint={"checkpoint_ns": ns})
        if states and ns:
            base, _, number = ns.rpartition("|")
            pending.append(f"{base}|{int(number) + 1}" if number.isdigit() else f"{ns}|1")
        pending.extend(
            t["checkpoint"]["checkpoint_ns"]
            for s in states
            for t in s["tasks"]
            if t.get("checkpoint")
        )
    return found


def _raw(client: Any, thread_id: str, namespaces: list[str]) -> None:
    for ns in namespaces:
        client.threads.get_history(thread_id, limit=1000, checkpoint={"checkpoint_ns": ns})
    client.runs.list(thread_id, limit=1000)


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="bench_server")
    parser.add_argument("--threads", type=int, default=40)
    parser.add_argument("--scenario", default="hitl_agent", choices=sorted(EVERY_SCENARIO))
    args, _ = parser.parse_known_args(argv)
    command = cli()
    if command is None:
        print("langgraph-cli is not installed; skipped")
        return
    warnings.simplefilter("ignore")
    scenario = EVERY_SCENARIO[args.scenario]
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
        namespaces = {thread_id: _namespaces(client, thread_id) for thread_id in ids}
        for _ in range(2):  # the first pass warms the server's graph cache
            start = time.perf_counter()
            for thread_id in ids:
                _raw(server.sync_client, thread_id, namespaces[thread_id])
            raw = time.perf_counter() - start
            start = time.perf_counter()
            for thread_id in ids:
                extract_server_thread(server, thread_id, graph=graph)
            ours = time.perf_counter() - start
        reads = len(namespaces[ids[0]])
        print(f"threads: {len(ids)} ({scenario.name}, {reads} history reads each)")
        print(f"raw history + runs fetch: {len(ids) / raw:8.1f} threads/s")
        print(f"extract_server_thread:    {len(ids) / ours:8.1f} threads/s")
        print(f"lg_eval adds:             {100 * (ours - raw) / raw:8.1f} %")
