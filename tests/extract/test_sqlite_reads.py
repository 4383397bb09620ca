"""How many storage round trips the fast reader makes for a SqliteSaver thread."""

from __future__ import annotations

from typing import Any

from graphs.scenarios import SCENARIOS
from lg_eval._effects import Core
from lg_eval.extract import extract_thread
from lg_eval.extract.fast import read_fast


def effects_of(core: Core[Any]) -> tuple[Any, int]:
    """Run ``core`` as ``drive`` does, counting the effects it yields."""
    count = 0
    try:
        effect = next(core)
        while True:
            count += 1
            effect = core.send(effect.run())
    except StopIteration as stop:
        return stop.value, count


def test_a_short_thread_stopped_mid_thread_is_read_in_one_round_trip(sqlite_saver: Any) -> None:
    graph = SCENARIOS["weather"].played(sqlite_saver, "a")  # an interrupt: two turns
    extract_thread(graph, {"configurable": {"thread_id": "a"}})  # finds the database file
    records, count = effects_of(read_fast(graph, sqlite_saver, "a", None))
    assert len(records.by_ns[""]) > 2
    assert count == 1
