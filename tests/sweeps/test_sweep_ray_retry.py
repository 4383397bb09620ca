"""A sweep on Ray whose worker is SIGKILLed mid-partition: the partition is scored again
elsewhere, and every thread is stored exactly once, as in an undisturbed local sweep."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lg_eval._evaluator import make_evaluator
from lg_eval._feedback import Feedback
from lg_eval.experiments import open_store
from lg_eval.play import open_checkpointer
from lg_eval.sweeps import sweep_threads
from tests.executors import killing
from tests.sweeps import helpers

GRAPH = "tests.sweeps.helpers:build"


def _steps(*, outputs: Any, **_: Any) -> Feedback:
    """The thread's node steps; in a Ray worker, once armed, its 2nd call kills the worker."""
    killing.die_once(after=2)
    steps = sum(len(turn) for turn in outputs["trajectory"].to_graph_trajectory().steps)
    return Feedback(score=float(steps))


steps = make_evaluator("steps", _steps)
EVALUATORS = ["tests.sweeps.helpers:turns", "tests.sweeps.test_sweep_ray_retry:steps"]


def _rows(result: Any) -> list[tuple[str, str, str, list[tuple[str, Any]], Any]]:
    return sorted(
        (r.case_id, result.checkpoints[r.case_id], r.status, [(s.key, s.score) for s in r.scores],
         r.trajectory)
        for r in result.run.results
    )  # fmt: skip


@pytest.mark.postgres
def test_a_killed_workers_sweep_partition_is_rescored_and_stored_once(
    kill_dir: Path, pg_url: str, tmp_path: Path
) -> None:
    from lg_eval.executors._ray import RayExecutor

    with open_checkpointer(pg_url) as saver:
        helpers.populate(helpers.build(saver), 10, 10)
    kw: dict[str, Any] = {"evaluators": EVALUATORS, "partition_size": 4}
    undisturbed = sweep_threads(GRAPH, pg_url, store=tmp_path / "local.sqlite", **kw)
    killing.arm(kill_dir)
    seen: list[int] = []
    executor = RayExecutor()
    remote = sweep_threads(
        GRAPH, pg_url, store=pg_url, executor=executor, run_id="killed",
        progress=lambda scored, passed, failed: seen.append(scored), **kw,
    )  # fmt: skip
    assert killing.killed(kill_dir) is not None
    assert _rows(remote) == _rows(undisturbed)
    assert len(remote.thread_ids) == 20 == len(set(remote.thread_ids))
    assert seen[-1] == 20 and len(seen) == 5  # five partitions came back, each once
    assert executor.throughput.items == 20
    with open_store(pg_url) as store:
        assert len(store.finished("killed")) == 20
