"""The travel agent (:mod:`tests.travel`) as a LangGraph Server serves it, for the watch.

``langgraph dev`` calls :func:`graph` with each run's config. A run's search tool holds
while the file ``<TRAVEL_GATES>/<thread id>.hold`` exists, until ``<thread id>.go`` does,
and writes ``<thread id>.held`` once it holds: a test keeps a run busy on the server and
knows when it is.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from langgraph.pregel import Pregel

from tests import travel

GATES = "TRAVEL_GATES"


def graph(config: Any) -> Pregel:
    """The compliant agent; its runs hold where the test's files say."""
    thread_id = str(((config or {}).get("configurable") or {}).get("thread_id", ""))
    gates = Path(os.environ[GATES])

    def hold() -> None:
        if not (gates / f"{thread_id}.hold").exists():
            return
        (gates / f"{thread_id}.held").touch()
        while not (gates / f"{thread_id}.go").exists():
            time.sleep(0.05)

    return travel.agent([], hold=hold)
