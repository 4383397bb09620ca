"""Benchmark: sweeping a local ``langgraph dev``: listing, a full sweep, incremental sweeps.

Run with ``python -m tests.benchmarks --only server_sweep [--threads N]`` (N=300 by
default). Makes N one-turn threads of the tiny ``echo`` graph (``tests/server/guarded.py``,
served without its auth handler), then times: the listing alone (``threads.search`` pages
plus a ``get_state`` per thread) one state read at a time and eight at a time, on loopback
and through a proxy that adds 20 ms per request (a server farther away), the first
sweep (every thread extracted and scored), a sweep that finds nothing new, and one after
five threads got another turn.
"""

from __future__ import annotations

import argparse
import tempfile
import time
import uuid
from pathlib import Path

from lg_eval.server import ServerConnection, list_server_threads
from lg_eval.sweeps import sweep_threads
from tests.server import guarded
from tests.server.echo_threads import another_turn, make_threads
from tests.server.launch import cli, serving
from tests.server.proxy import proxying

LATENCY = 0.02
"""The round trip the proxy adds, to show the listing on a server that is not local."""


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="bench_server_sweep")
    parser.add_argument("--threads", type=int, default=300)
    args, _ = parser.parse_known_args(argv)
    command = cli()
    if command is None:
        print("langgraph-cli is not installed; skipped")
        return
    graphs = {"echo": f"{guarded.__file__}:graph"}
    with tempfile.TemporaryDirectory() as home, serving(Path(home), command, graphs=graphs) as url:
        batch = {"batch": uuid.uuid4().hex}
        made = make_threads(url, batch, args.threads)
        server = ServerConnection(url)
        n = len(made)
        print(f"threads: {n} (echo, one turn each)")
        with proxying(url) as far:
            far.latency = LATENCY
            for where, listing in ((f"{LATENCY * 1000:.0f} ms away", ServerConnection(far.url)),
                                   ("loopback", server)):  # fmt: skip
                for concurrency in (1, 8):
                    start = time.perf_counter()
                    pages = list_server_threads(listing, metadata=batch, concurrency=concurrency)
                    listed = sum(len(page) for page in pages)
                    rate = listed / (time.perf_counter() - start)
                    print(f"listing, {where}, {concurrency} at a time: {rate:8.1f} threads/s")
        store = Path(home) / "results.sqlite"

        def sweep() -> tuple[int, float]:
            start = time.perf_counter()
            result = sweep_threads(
                server=server, metadata=batch, evaluators=["redundancy"], store=store, name="b"
            )
            return result.scored, time.perf_counter() - start

        scored, took = sweep()
        print(f"first sweep ({scored} scored):         {n / took:8.1f} threads/s")
        scored, took = sweep()
        print(f"nothing new ({scored} scored):           {took:8.2f} s")
        another_turn(url, made[:5])
        scored, took = sweep()
        print(f"five changed ({scored} scored):          {took:8.2f} s")
