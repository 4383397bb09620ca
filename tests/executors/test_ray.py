"""RayExecutor on a local Ray: results, per-worker throughput, retries after a worker dies."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.executors import killing

ray = pytest.importorskip("ray")
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def kill_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One local Ray for the module; its workers can be told to die (tests.executors.killing)."""
    where = tmp_path_factory.mktemp("kill")
    env = {"PYTHONPATH": str(ROOT), killing.KILL_DIR: str(where)}
    ray.init(num_cpus=2, include_dashboard=False, runtime_env={"env_vars": env})
    yield where
    ray.shutdown()


def _executor(**kw: Any) -> Any:
    from lg_eval.executors._ray import RayExecutor

    return RayExecutor(**kw)


def test_throughput_counts_every_item_once_per_worker_that_ran_it(kill_dir: Path) -> None:
    executor = _executor()
    parts = [[i, i + 1, i + 2] for i in range(0, 60, 3)]
    out = list(executor.map_partitions(killing.sum_with_pid, parts))
    assert sorted(total for total, _ in out) == sorted(sum(p) for p in parts)
    ran = {who for _, who in out}
    workers = executor.throughput.workers()
    assert {w.worker for w in workers} == ran
    assert len(workers) == len(ran)
    assert sum(w.items for w in workers) == 60
    assert sum(w.partitions for w in workers) == 20
    assert all(w.busy_s > 0 for w in workers)
    assert executor.throughput.items == 60


def test_an_exception_in_fn_is_raised_on_the_driver_and_not_retried(
    kill_dir: Path, tmp_path: Path
) -> None:
    log = tmp_path / "attempts"

    def fail(partition: int) -> int:
        with open(log, "a") as f:
            f.write(f"{partition}\n")
        raise ValueError(f"partition {partition} is bad")

    with pytest.raises(ValueError, match="partition 7 is bad"):
        list(_executor().map_partitions(fail, [7]))
    assert log.read_text() == "7\n"


def test_a_partition_whose_worker_was_killed_is_run_again(kill_dir: Path) -> None:
    executor = _executor()
    killing.arm(kill_dir)
    parts = [[i] * 5 for i in range(12)]
    out = list(executor.map_partitions(killing.sum_with_pid, parts))
    dead = killing.killed(kill_dir)
    assert dead is not None and dead != killing.worker_id()  # a worker died, not the driver
    assert sorted(total for total, _ in out) == [5 * i for i in range(12)]
    assert executor.throughput.items == 60  # the dead attempt is not counted
    assert sum(w.partitions for w in executor.throughput.workers()) == 12


def test_no_retries_means_a_killed_worker_fails_the_map(kill_dir: Path) -> None:
    (kill_dir / "killed").unlink(missing_ok=True)
    killing.arm(kill_dir)
    with pytest.raises(ray.exceptions.WorkerCrashedError):
        list(_executor(max_retries=0).map_partitions(killing.sum_with_pid, [[1], [2], [3], [4]]))
