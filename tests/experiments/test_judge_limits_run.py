"""``judge_limits=``: a run's judge calls held to the provider's limits, the limiter's
counters kept in the run record, cache hits spending no budget (local runner, a local
executor object, a sweep, the CLI, and on Ray across workers)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from lg_eval.cli import app
from lg_eval.datasets import dataset_from_dict
from lg_eval.errors import InvalidOptionError
from lg_eval.executors import LocalExecutor
from lg_eval.experiments import open_store, run_experiment
from lg_eval.sweeps import sweep_threads
from tests.experiments.graphs import build_agent
from tests.experiments.judged import JUDGE, MODEL
from tests.sweeps import helpers

TARGET = "tests.experiments.graphs:build_agent"


def judged(n: int) -> Any:
    """``n`` cases judged by :data:`judge`, each with its own prompt (no two share a cache key)."""
    cases = []
    for i in range(n):
        turns = [{"input": {"messages": [{"role": "user", "content": f"Weather in city {i}?"}]}}]
        cases.append({"id": f"c{i}", "turns": turns, "evaluators": [JUDGE]})
    return dataset_from_dict({"name": "judged", "cases": cases}, allows_code=True)


@pytest.fixture(autouse=True)
def fresh_model() -> None:
    MODEL.script.calls.clear()


def test_judge_calls_are_held_to_max_concurrent(where: dict[str, Any]) -> None:
    run = run_experiment(
        build_agent, judged(4), concurrency=4, judge_limits={"max_concurrent": 1},
        **{**where, "judge_cache": False},
    )  # fmt: skip
    assert [r.status for r in run.results] == ["passed"] * 4
    assert run.info.config["judge_limits"]["max_concurrent"] == 1
    limiter = run.info.config["judge_limiter"]
    assert (limiter["requests"], limiter["max_in_flight"]) == (4, 1)
    assert limiter["tokens"] == 4 * 120  # each reply's usage: 100 in, 20 out


def test_cache_hits_spend_no_rate_budget(where: dict[str, Any]) -> None:
    limits = {"requests_per_minute": 100}
    run_experiment(build_agent, judged(3), judge_limits=limits, run_id="first", **where)
    again = run_experiment(build_agent, judged(3), judge_limits=limits, run_id="again", **where)
    assert len(MODEL.calls) == 3
    assert again.info.config["judge_cache"]["hits"] == 3
    assert again.info.config["judge_limiter"]["requests"] == 0


def test_bad_judge_limits_are_refused_naming_the_field_before_anything_runs(
    where: dict[str, Any],
) -> None:
    with pytest.raises(InvalidOptionError, match="requests_per_minute"):
        run_experiment(build_agent, judged(1), judge_limits={"requests_per_minute": 0}, **where)
    with open_store(where["store"]) as store:
        assert store.runs() == []


def test_a_local_executor_object_shares_one_limiter_across_partitions(
    where: dict[str, Any],
) -> None:
    run = run_experiment(
        TARGET, judged(6), concurrency=2, executor=LocalExecutor(2), partition_size=2,
        judge_limits={"max_concurrent": 1}, **{**where, "judge_cache": False},
    )  # fmt: skip
    assert [r.status for r in run.results] == ["passed"] * 6
    limiter = run.info.config["judge_limiter"]
    assert (limiter["requests"], limiter["max_in_flight"]) == (6, 1)


def test_a_sweep_holds_its_judge_calls_to_the_limits(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'threads.sqlite'}"
    from lg_eval.play import open_checkpointer

    with open_checkpointer(url) as saver:
        graph = helpers.build(saver)
        for n in range(5):
            helpers.play(graph, f"t{n}")
    result = sweep_threads(
        helpers.GRAPH, url, evaluators=[JUDGE], store=tmp_path / "results.sqlite",
        judge_limits={"max_concurrent": 1}, judge_cache=False,
        executor=LocalExecutor(2), partition_size=2,
    )  # fmt: skip
    assert result.scored == 5
    assert len(MODEL.calls) == 5
    config = result.info.config
    assert config["judge_limits"]["max_concurrent"] == 1
    limiter = config["judge_limiter"]
    assert (limiter["requests"], limiter["max_in_flight"], limiter["tokens"]) == (5, 1, 5 * 120)


def test_the_cli_passes_judge_limits_and_refuses_a_zero_rate(
    where: dict[str, Any], tmp_path: Path
) -> None:
    data = tmp_path / "judged.json"
    data.write_text(json.dumps(judged(2).model_dump(mode="json", exclude_none=True)))
    common = ["run", str(data), "--graph", TARGET, "--store", where["store"], "--quiet"]
    common += ["--checkpointer", where["checkpointer"], "--no-cache"]
    done = CliRunner().invoke(app, [*common, "--judge-concurrency", "1", "--judge-tpm", "5000"])
    assert done.exit_code == 0, done.output
    with open_store(where["store"]) as store:
        (info,) = store.runs()
    assert info.config["judge_limits"]["max_concurrent"] == 1
    assert info.config["judge_limits"]["tokens_per_minute"] == 5000
    assert info.config["judge_limiter"]["requests"] == 2
    refused = CliRunner().invoke(app, [*common, "--judge-rpm", "0"])
    assert refused.exit_code == 2
    assert "--judge-rpm" in refused.output
