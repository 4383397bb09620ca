"""Quick cases are played back to back and then scored back to back; slow cases, timed
cases and async runs go one at a time. Observed through what the graph and an evaluator
record, in order, on real runs with a real SQLite checkpointer and store."""

from __future__ import annotations

import time
from typing import Any

import pytest

from lg_eval.datasets import dataset_from_dict
from lg_eval.experiments import arun_experiment, run_experiment
from tests.experiments.batched import EVENTS, build


@pytest.fixture(autouse=True)
def fresh_events() -> None:
    EVENTS.clear()


def cases(count: int, delay: float = 0.0) -> Any:
    listed = [
        {
            "id": f"c{n}",
            "turns": [{"input": {"text": f"c{n}", "delay": delay}}],
            "evaluators": ["tests.experiments.batched:noting"],
        }
        for n in range(count)
    ]
    return dataset_from_dict({"name": "b", "cases": listed}, allows_code=True)


def played_then_scored(*groups: range) -> list[str]:
    return [e for g in groups for e in [*(f"play c{n}" for n in g), *(f"score c{n}" for n in g)]]


def test_quick_cases_are_scored_in_batches_of_eight(
    where: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("lg_eval.experiments._batches.BATCH_SECONDS", 60.0)
    run = run_experiment(build, cases(10), concurrency=1, **where)
    assert played_then_scored(range(8), range(8, 10)) == EVENTS
    assert [r.status for r in run.results] == ["passed"] * 10


def test_a_batch_ends_once_it_has_run_its_time(where: Any) -> None:
    run_experiment(build, cases(3, delay=0.06), concurrency=1, **where)  # each > 0.05 s
    assert played_then_scored(range(1), range(1, 2), range(2, 3)) == EVENTS


def test_with_a_timeout_each_case_runs_alone(where: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("lg_eval.experiments._batches.BATCH_SECONDS", 60.0)
    run_experiment(build, cases(3), concurrency=1, timeout=30, **where)
    assert played_then_scored(range(1), range(1, 2), range(2, 3)) == EVENTS


async def test_an_async_run_is_not_batched(where: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("lg_eval.experiments._batches.BATCH_SECONDS", 60.0)
    await arun_experiment(build, cases(3), concurrency=1, **where)
    assert played_then_scored(range(1), range(1, 2), range(2, 3)) == EVENTS


def test_a_held_case_latency_leaves_out_the_time_it_was_held(
    where: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("lg_eval.experiments._batches.BATCH_SECONDS", 60.0)
    start = time.perf_counter()
    run = run_experiment(build, cases(8, delay=0.02), concurrency=1, **where)
    elapsed = time.perf_counter() - start
    latencies = [r.latency_s for r in run.results]
    assert played_then_scored(range(8)) == EVENTS  # one batch: each case waited for the rest
    assert all(latency >= 0.02 for latency in latencies)
    assert sum(latencies) < elapsed  # held time counted would add up to several runs' worth
