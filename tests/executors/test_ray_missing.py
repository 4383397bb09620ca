"""Without Ray installed, executor='ray' is refused before anything is recorded."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from lg_eval.errors import InvalidOptionError
from lg_eval.executors._ray import RayExecutor
from lg_eval.experiments import open_store, run_experiment
from tests.experiments.conftest import ask, dataset


@pytest.fixture
def no_ray(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError


@pytest.mark.usefixtures("no_ray")
def test_a_ray_executor_names_the_missing_install() -> None:
    with pytest.raises(InvalidOptionError, match=r"needs Ray: pip install 'lg-eval\[ray\]'"):
        RayExecutor()


@pytest.mark.usefixtures("no_ray")
def test_a_ray_run_without_ray_records_no_run(tmp_path: Path) -> None:
    store = tmp_path / "results.sqlite"
    cases = [{"id": "a", "turns": ask("a"), "expected": {"output": "A"}}]
    with pytest.raises(InvalidOptionError, match="needs Ray"):
        run_experiment(
            "tests.experiments.graphs:build_echo",
            dataset("e", cases),
            checkpointer=f"sqlite:///{tmp_path / 'checkpoints.sqlite'}",
            store=store,
            executor="ray",
        )
    opened = open_store(store)
    try:
        assert opened.runs() == []
    finally:
        opened.close()
