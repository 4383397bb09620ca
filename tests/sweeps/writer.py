"""A writer process for the watch tests: it creates and resumes travel-agent threads
(:mod:`tests.travel`) on a checkpointer, one command a line on stdin, one reply a line on
stdout, while a watch reads the same checkpointer from another process.

    new T       the request: the run stops at the booking's approval
    approve T   the human approves; the booking runs and the thread finishes
    reject T    the human rejects; the thread finishes
    hold T      the request, in a background thread that stops inside the search tool;
                replies once the run is there (checkpoints written, the run still going)
    release T   lets the held run go on; replies once it stopped at the approval
    quit

Each reply is ``<command> <T> <checkpoint id>``: the thread's newest root checkpoint once
the command's checkpoints are committed (every run is invoked with ``durability="sync"``).
Run as ``python -m tests.sweeps.writer <checkpointer URL>``.
"""

from __future__ import annotations

import sys
import threading
from typing import Any

from lg_eval.play import open_checkpointer
from tests import travel

_OUT = threading.Lock()


def reply(*words: str) -> None:
    with _OUT:
        print(*words, flush=True)


def newest(graph: Any, thread_id: str) -> str:
    config = {"configurable": {"thread_id": thread_id}}
    return str(graph.get_state(config).config["configurable"]["checkpoint_id"])


def main(url: str) -> None:
    graphs: dict[str, Any] = {}
    gates: dict[str, threading.Event] = {}
    held: dict[str, threading.Thread] = {}
    with open_checkpointer(url) as saver:

        def run(thread_id: str, payload: Any) -> None:
            config = {"configurable": {"thread_id": thread_id}}
            graphs[thread_id].invoke(payload, config, durability="sync")

        def hold(thread_id: str) -> None:
            gate = gates[thread_id] = threading.Event()

            def wait() -> None:
                reply("hold", thread_id, newest(graphs[thread_id], thread_id))
                gate.wait()

            graphs[thread_id] = travel.agent([], checkpointer=saver, hold=wait)
            worker = threading.Thread(target=run, args=(thread_id, _request()), daemon=True)
            held[thread_id] = worker
            worker.start()

        for line in sys.stdin:
            command, _, thread_id = line.strip().partition(" ")
            if command == "quit":
                return
            if command == "new":
                graphs[thread_id] = travel.agent([], checkpointer=saver)
                run(thread_id, _request())
            elif command in ("approve", "reject"):
                run(thread_id, travel.APPROVE if command == "approve" else travel.REJECT)
            elif command == "hold":
                hold(thread_id)
                continue  # the held run replies from inside the tool
            elif command == "release":
                gates[thread_id].set()
                held.pop(thread_id).join()
            else:
                raise SystemExit(f"writer: unknown command {line!r}")
            reply(command, thread_id, newest(graphs[thread_id], thread_id))


def _request() -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": travel.REQUEST}]}


if __name__ == "__main__":
    main(sys.argv[1])
