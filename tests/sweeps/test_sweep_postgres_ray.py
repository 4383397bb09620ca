"""Postgres end to end, and the Ray executor giving exactly the local executor's results."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lg_eval.executors._ray import RayExecutor
from lg_eval.play import open_checkpointer
from lg_eval.sweeps import sweep_threads
from tests.sweeps import helpers

ROOT = Path(__file__).resolve().parents[2]
GRAPH = "tests.sweeps.helpers:build"


def _summary(result: Any) -> list[tuple[str, str, str, list[tuple[str, Any]]]]:
    return sorted(
        (r.case_id, result.checkpoints[r.case_id], r.status, [(s.key, s.score) for s in r.scores])
        for r in result.run.results
    )


@pytest.mark.postgres
def test_postgres_sweep_local_and_ray_agree(pg_url: str, tmp_path: Path) -> None:
    with open_checkpointer(pg_url) as saver:
        graph = helpers.build(saver)
        boundary = helpers.populate(graph, 10, 10)
        helpers.resume(graph, "new-01")
    kw: dict[str, Any] = {"evaluators": helpers.EVALUATORS, "partition_size": 4}
    local = sweep_threads(GRAPH, pg_url, store=tmp_path / "local.sqlite", **kw)
    assert len(local.thread_ids) == 20
    recent = sweep_threads(GRAPH, pg_url, store=tmp_path / "f.sqlite", since=boundary,
                           metadata={"team": "escalated"}, **kw)  # fmt: skip
    assert sorted(recent.thread_ids) == ["new-00", "new-03", "new-06", "new-09"]

    import ray

    ray.init(num_cpus=2, include_dashboard=False,
             runtime_env={"env_vars": {"PYTHONPATH": str(ROOT)}})  # fmt: skip
    try:
        remote = sweep_threads(GRAPH, pg_url, store=f"{pg_url}", executor=RayExecutor(), **kw)
        assert _summary(remote) == _summary(local)
        assert remote.run.info.config["executor"] == "RayExecutor"
        with open_checkpointer(pg_url) as saver:
            helpers.resume(helpers.build(saver), "old-02")
        again = sweep_threads(GRAPH, pg_url, store=pg_url, executor=RayExecutor(), **kw)
        assert again.thread_ids == ["old-02"]
    finally:
        ray.shutdown()
