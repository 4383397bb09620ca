"""What the readers keep per compiled graph lives no longer than the graph: a run whose
target is a factory builds a fresh graph for every case, and none of them may outlive it."""

from __future__ import annotations

import gc
import weakref
from typing import Any

import pytest

from graphs.scenarios import SCENARIOS
from lg_eval.extract import extract_thread
from tests.extract.live import check, record


@pytest.mark.parametrize("scenario", ["weather", "research"])  # an interrupt; subgraphs
def test_graphs_extracted_from_are_freed_once_the_caller_drops_them(
    saver: Any, scenario: str
) -> None:
    alive = []
    for n in range(3):
        graph, live = record(SCENARIOS[scenario], saver, f"t{n}")  # a fresh graph, as per case
        check(extract_thread(graph, {"configurable": {"thread_id": f"t{n}"}}), live)
        alive.append(weakref.ref(graph))
        del graph
    gc.collect()
    assert [ref() for ref in alive] == [None, None, None]
