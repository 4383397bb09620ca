"""A run freezes the heap it starts with (full collections skip the dataset and graph)
and leaves the collector as it found it."""

from __future__ import annotations

import gc
import weakref
from typing import Any

from lg_eval._heap import frozen_heap
from lg_eval.experiments import run_experiment
from tests.experiments.conftest import ask, dataset
from tests.experiments.graphs import build_echo


def _run(where: Any, seen: list[int]) -> None:
    cases = [{"id": "a", "turns": ask("a"), "expected": {"output": "A"}}]
    run_experiment(
        build_echo(),
        dataset("e", cases),
        concurrency=1,
        progress=lambda *_: seen.append(gc.get_freeze_count()),
        **where,
    )


def test_the_heap_is_frozen_while_cases_run_and_unfrozen_after(where: Any) -> None:
    seen: list[int] = []
    _run(where, seen)
    assert (seen[0] > 0, gc.get_freeze_count()) == (True, 0)


def test_a_heap_the_caller_froze_stays_frozen_as_it_was(where: Any) -> None:
    gc.freeze()
    try:
        before = gc.get_freeze_count()
        seen: list[int] = []
        _run(where, seen)
        after = gc.get_freeze_count()  # frozen objects freed by refcount leave the count
        assert (len(seen), 0 < seen[0] <= before, 0 < after <= before) == (1, True, True)
    finally:
        gc.unfreeze()


def test_objects_made_in_the_block_are_still_collected() -> None:
    class Node:
        link: Any = None

    with frozen_heap():
        frozen = gc.get_freeze_count()
        node = Node()
        node.link = node  # a cycle made after the freeze: only the collector frees it
        alive = weakref.ref(node)
        del node
        gc.collect()
        assert (frozen > 0, alive()) == (True, None)
    assert gc.get_freeze_count() == 0


def test_with_the_collector_disabled_nothing_is_frozen() -> None:
    gc.disable()
    try:
        with frozen_heap():
            assert gc.get_freeze_count() == 0
    finally:
        gc.enable()
