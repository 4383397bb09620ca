"""A finished run leaves nothing per case in the process: what stays allocated once its
result is dropped is the same after 40 cases as after 160 (traced with tracemalloc)."""

from __future__ import annotations

import gc
import tracemalloc
from pathlib import Path
from typing import Any

from lg_eval.datasets import Dataset
from lg_eval.experiments import run_experiment

STEPS = {"trajectory": {"steps": [["__start__", "add", "double"]]}}


def _held_after_run(cases: int, where: dict[str, Any], tmp_path: Path) -> int:
    data = Dataset.model_validate(
        {
            "name": f"held-{cases}",
            "evaluators": ["graph_trajectory_strict_match"],
            "cases": [
                {"id": f"c{n}", "turns": [{"input": {"x": n}}], "expected": STEPS}
                for n in range(cases)
            ],
        }
    )
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        run = run_experiment(  # a factory: every case plays on a graph built for it
            "graphs.counter:build", data, **{**where, "store": tmp_path / f"r{cases}.sqlite"}
        )
        assert (len(run.results), run.pass_rate) == (cases, 1.0)
        del run
        gc.collect()
        return tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()


def test_what_a_run_leaves_allocated_does_not_grow_with_its_cases(
    where: dict[str, Any], tmp_path: Path
) -> None:
    _held_after_run(10, where, tmp_path)  # imports and first-use caches
    small = _held_after_run(40, where, tmp_path)
    large = _held_after_run(160, where, tmp_path)
    assert (large - small) / 120 < 1024, (small, large)  # a case's graph alone is ~100 KiB
