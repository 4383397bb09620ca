"""The example graphs of ``graphs/`` as a LangGraph Server serves them (``langgraph.json``).

Each scenario is a graph factory taking the run config: the server calls it for every run
and every state read, and each thread gets its own graph, built once, so the scripted
chat models keep their place in the script across the thread's runs (one model per
thread, as a local run of the scenario has).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from langgraph.pregel import Pregel

from graphs.scenarios import EVERY_SCENARIO

_lock = threading.Lock()
_built: dict[tuple[str, str], Pregel] = {}


def factory(name: str) -> Callable[[Any], Pregel]:
    """The factory the server calls for scenario ``name``: one graph per thread id."""
    build = EVERY_SCENARIO[name].build

    def make(config: Any) -> Pregel:
        thread_id = str(((config or {}).get("configurable") or {}).get("thread_id", ""))
        with _lock:
            graph = _built.get((name, thread_id))
            if graph is None:
                graph = _built[(name, thread_id)] = build()
            return graph

    make.__name__ = f"make_{name}"
    return make


for _name in EVERY_SCENARIO:
    globals()[_name] = factory(_name)
