"""``lg-eval run`` and ``lg-eval sweep`` with ``--executor ray``: the progress lines of a log
(stderr not a terminal) show every worker's throughput; the exit codes are the local ones."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from lg_eval.cli import app
from lg_eval.datasets import dump_dataset
from lg_eval.play import open_checkpointer
from tests.experiments.test_ray_distributed import TARGET, approvals
from tests.sweeps import helpers

ROOT = Path(__file__).resolve().parents[2]
WORKER = re.compile(r"^  worker (\S+:\d+): (\d+) partitions, (\d+) items, [\d.]+ s busy, [\d.]+/s$")
PROGRESS = re.compile(r"^\[\d+(/\d+| threads)\] passed \d+, not passed \d+$")
runner = CliRunner()


@pytest.fixture(scope="module")
def local_ray(pg_dsn: str) -> Iterator[None]:
    """One local Ray for the module (after Postgres is known to be there)."""
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False,
             runtime_env={"env_vars": {"PYTHONPATH": str(ROOT)}})  # fmt: skip
    yield
    ray.shutdown()


def last_workers(stderr: str) -> dict[str, tuple[int, int]]:
    """The last block of worker lines: ``{host:pid: (partitions, items)}``."""
    blocks: list[dict[str, tuple[int, int]]] = []
    for line in stderr.splitlines():
        found = WORKER.match(line)
        if found is None:
            if blocks and blocks[-1]:
                blocks.append({})
            continue
        if not blocks:
            blocks.append({})
        blocks[-1][found[1]] = (int(found[2]), int(found[3]))
    return next(b for b in reversed(blocks) if b)


def progress_lines(stderr: str) -> list[str]:
    """The progress lines (Ray may log lines of its own to the driver's stderr)."""
    return [line for line in stderr.splitlines() if PROGRESS.match(line)]


def run_on_ray(path: Path, pg_url: str, *flags: str) -> Any:
    """``lg-eval run`` of ``path`` on Ray, checkpoints and results in ``pg_url``, no cache."""
    command = ["run", str(path), "--graph", TARGET, "--checkpointer", pg_url, "--store", pg_url,
               "--no-cache", "--executor", "ray", *flags]  # fmt: skip
    return runner.invoke(app, command, catch_exceptions=False)


@pytest.mark.postgres
def test_run_on_ray_logs_each_case_and_every_workers_throughput(
    local_ray: None, pg_url: str, tmp_path: Path
) -> None:
    path = dump_dataset(approvals(6), tmp_path / "approvals.yaml")
    result = run_on_ray(path, pg_url, "--partition-size", "2", "--fail-under", "0.5")
    assert result.exit_code == 3, result.output  # the gate is met; one case errors (exit 3)
    lines = progress_lines(result.stderr)
    assert [line.partition("]")[0] for line in lines] == [f"[{i}/6" for i in range(1, 7)]
    assert lines[-1] == "[6/6] passed 3, not passed 3", result.stderr
    workers = last_workers(result.stderr)
    assert sum(items for _, items in workers.values()) == 6, result.stderr
    assert sum(parts for parts, _ in workers.values()) == 3, result.stderr


@pytest.mark.postgres
def test_run_on_ray_below_the_gate_still_exits_1(
    local_ray: None, pg_url: str, tmp_path: Path
) -> None:
    path = dump_dataset(approvals(4), tmp_path / "approvals.yaml")
    result = run_on_ray(path, pg_url, "--quiet", "--fail-under", "0.9")
    assert result.exit_code == 1
    assert progress_lines(result.stderr) == []
    assert not any(WORKER.match(line) for line in result.stderr.splitlines())


@pytest.mark.postgres
def test_sweep_on_ray_logs_every_workers_throughput(local_ray: None, pg_url: str) -> None:
    with open_checkpointer(pg_url) as saver:
        helpers.populate(helpers.build(saver), 6, 6)
    result = runner.invoke(
        app,
        ["sweep", "--graph", "tests.sweeps.helpers:build", "--checkpointer", pg_url,
         "--store", pg_url, "--executor", "ray", "--partition-size", "5", "--quiet"],
        catch_exceptions=False,
    )  # fmt: skip
    assert result.exit_code == 0 and progress_lines(result.stderr) == []
    result = runner.invoke(
        app,
        ["sweep", "--graph", "tests.sweeps.helpers:build", "--checkpointer", pg_url,
         "--store", pg_url, "--executor", "ray", "--partition-size", "5", "--full"],
        catch_exceptions=False,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    lines = progress_lines(result.stderr)  # partitions of 5, 5 and 2, in completion order
    assert len(lines) == 3 and lines[-1].startswith("[12 threads] passed ")
    workers = last_workers(result.stderr)
    assert sum(items for _, items in workers.values()) == 12
    assert sum(parts for parts, _ in workers.values()) == 3


def test_ray_address_without_ray_is_exit_2(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.chdir(tmp_path)
    path = dump_dataset(approvals(1), tmp_path / "approvals.yaml")
    result = runner.invoke(app, ["run", str(path), "--ray-address", "auto"])
    assert result.exit_code == 2
    assert "--ray-address needs --executor ray" in result.stderr
