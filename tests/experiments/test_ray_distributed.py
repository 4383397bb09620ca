"""Experiments on an executor: the same stored results as the local runner, a killed worker's
partition recovered, resuming, and the options a distributed run refuses.

The Ray tests share one local Ray (``num_cpus=2``) per module and a Postgres checkpointer
(``LG_EVAL_PG_DSN``; skipped without it). Results are compared field by field except
what legitimately differs between two runs: ``run_id``, the run id inside ``thread_id``
(``<run_id>:<case>:<repetition>:<attempt>``), ``latency_s``, ``finished_at``, and the ids of
the interrupts a turn was asked (LangGraph hashes them from the task id, which derives from
the checkpoint id, a time-based uuid6; their paths and values are compared).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypedDict

import pytest
from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt

from lg_eval.datasets import dataset_from_dict
from lg_eval.errors import InvalidOptionError
from lg_eval.executors import LocalExecutor
from lg_eval.experiments import ExperimentRun, JudgeCache, open_store, run_experiment
from lg_eval.play import open_checkpointer
from tests.executors import killing
from tests.experiments.conftest import dataset

TARGET = "tests.experiments.test_ray_distributed:build"


class State(TypedDict, total=False):
    text: str
    answer: str


def _ask(state: State) -> dict[str, Any]:
    killing.die_once(after=3)  # in a Ray worker, once armed: mid-partition (its 2nd case)
    reply = interrupt(f"approve {state['text']}?")
    return {"answer": f"{state['text']}:{reply}"}


def _done(state: State) -> dict[str, Any]:
    return {"answer": state["answer"].upper() if state["text"].endswith("0") else state["answer"]}


def build(checkpointer: Any = None) -> Any:
    """ask (interrupts for approval) -> done; deterministic."""
    builder = StateGraph(State)
    builder.add_node("ask", _ask)
    builder.add_node("done", _done)
    builder.add_edge(START, "ask")
    builder.add_edge("ask", "done")
    builder.add_edge("done", END)
    return builder.compile(checkpointer=checkpointer)


STEPS = [["__start__", "ask", "__interrupt__"], ["done"]]


def approvals(n: int) -> Any:
    """``n`` cases: passing, failing (wrong output, wrong trajectory) and half-played ones."""
    cases = []
    for i in range(n):
        turns: list[dict[str, Any]] = [{"input": {"text": f"t{i}"}}, {"resume": "yes"}]
        expected: dict[str, Any] = {"output": {"contains": [f"t{i}:yes"]}}
        if i % 4 == 1:
            expected["trajectory"] = {"steps": [["__start__", "ask", "done"]]}
        if i % 4 == 2:
            turns = turns[:1]
        if i % 4 == 3:
            expected["trajectory"] = {"steps": STEPS}
        cases.append({"id": f"c{i:02d}", "turns": turns, "expected": expected})
    return dataset("approvals", cases)


def comparable(run: ExperimentRun) -> list[dict[str, Any]]:
    """The stored results without what differs between two runs of one dataset."""
    rows = []
    for result in run.results:
        row = result.model_dump(mode="json", exclude={"run_id", "latency_s", "finished_at"})
        row["thread_id"] = result.thread_id.removeprefix(f"{result.run_id}:")
        for turn in row["turns"]:
            for asked in turn["asked"]:
                asked.pop("id")
        rows.append(row)
    return rows


class Calls:
    """A progress function that keeps every call."""

    def __init__(self) -> None:
        self.calls: list[tuple[int, int, int, int]] = []

    def __call__(self, done: int, total: int, passed: int, failed: int) -> None:
        self.calls.append((done, total, passed, failed))


# --------------------------------------------------------------------------- no Ray needed


def test_a_distributed_run_refuses_a_live_graph_naming_what_to_pass(tmp_path: Path) -> None:
    with pytest.raises(InvalidOptionError, match=r"target=CompiledStateGraph.*'module:attr'"):
        run_experiment(build(), approvals(2), executor=LocalExecutor(), store=tmp_path / "r.db")


def test_a_distributed_run_refuses_a_saver_object_naming_what_to_pass(tmp_path: Path) -> None:
    refused = pytest.raises(InvalidOptionError, match=r"checkpointer=SqliteSaver.*its URL")
    with open_checkpointer(f"sqlite:///{tmp_path / 'c.db'}") as saver, refused:
        run_experiment(TARGET, approvals(2), checkpointer=saver, executor=LocalExecutor())


def test_a_distributed_run_refuses_a_judge_cache_object(tmp_path: Path) -> None:
    cache = JudgeCache(tmp_path / "cache.db")
    with pytest.raises(InvalidOptionError, match=r"judge_cache=JudgeCache object.*its path"):
        run_experiment(TARGET, approvals(2), judge_cache=cache, executor=LocalExecutor())
    cache.close()


def test_an_unknown_executor_name_is_an_invalid_option(tmp_path: Path) -> None:
    with pytest.raises(InvalidOptionError, match="executor='dask'"):
        run_experiment(TARGET, approvals(2), executor="dask", store=tmp_path / "r.db")


def test_on_a_local_executor_object_the_results_equal_the_local_runner(where: Any) -> None:
    local = run_experiment(TARGET, approvals(8), run_id="local", **where)
    calls = Calls()
    parted = run_experiment(
        TARGET, approvals(8), run_id="parted", executor=LocalExecutor(2), partition_size=3,
        progress=calls, **where,
    )  # fmt: skip
    assert comparable(parted) == comparable(local)
    assert [c[0] for c in calls.calls] == list(range(1, 9))
    assert parted.info.config["executor"] == "LocalExecutor"
    assert parted.info.config["partition_size"] == 3
    assert parted.info.status == "finished"


class Unusable:
    """An executor that must not be asked for anything."""

    def map_partitions(self, fn: Any, partitions: Any) -> Any:
        raise AssertionError("map_partitions was called")


def test_resuming_a_finished_run_plays_nothing_and_starts_no_executor(where: Any) -> None:
    first = run_experiment(TARGET, approvals(3), run_id="r", executor=LocalExecutor(), **where)
    again = run_experiment(TARGET, approvals(3), run_id="r", executor=Unusable(), **where)
    assert comparable(again) == comparable(first)
    assert again.info.status == "finished"


# --------------------------------------------------------------------------- on Ray


def _ray_executor() -> Any:
    from lg_eval.executors._ray import RayExecutor

    return RayExecutor()


@pytest.mark.postgres
def test_on_ray_the_stored_results_equal_the_local_runner(
    kill_dir: Path, pg_url: str, tmp_path: Path
) -> None:
    kw: dict[str, Any] = {"checkpointer": pg_url, "store": pg_url, "judge_cache": False}
    local = run_experiment(TARGET, approvals(12), run_id="local", repetitions=2, **kw)
    executor = _ray_executor()
    remote = run_experiment(
        TARGET, approvals(12), run_id="ray", repetitions=2, executor=executor,
        partition_size=5, **kw,
    )  # fmt: skip
    assert [r.status for r in local.results].count("passed") == 12
    assert comparable(remote) == comparable(local)
    assert remote.info.config["executor"] == "RayExecutor"
    assert executor.throughput.items == 24
    assert sum(w.partitions for w in executor.throughput.workers()) == 5


@pytest.mark.postgres
def test_on_ray_a_killed_workers_partition_is_replayed_and_stored_once(
    kill_dir: Path, pg_url: str
) -> None:
    kw: dict[str, Any] = {"checkpointer": pg_url, "store": pg_url, "judge_cache": False}
    undisturbed = run_experiment(TARGET, approvals(12), run_id="undisturbed", **kw)
    killing.arm(kill_dir)
    calls, executor = Calls(), _ray_executor()
    remote = run_experiment(
        TARGET, approvals(12), run_id="killed", executor=executor, partition_size=4,
        progress=calls, **kw,
    )  # fmt: skip
    assert killing.killed(kill_dir) is not None
    assert comparable(remote) == comparable(undisturbed)
    assert [c[0] for c in calls.calls] == list(range(1, 13))  # each case reached the driver once
    assert executor.throughput.items == 12
    with open_store(pg_url) as store:
        assert len(store.finished("killed")) == 12


@pytest.mark.postgres
def test_on_ray_a_resumed_run_plays_only_the_cases_not_stored(kill_dir: Path, pg_url: str) -> None:
    kw: dict[str, Any] = {"checkpointer": pg_url, "store": pg_url, "judge_cache": False}
    whole = run_experiment(TARGET, approvals(6), run_id="whole", **kw)
    with open_store(pg_url) as store:  # as if the run had been killed after 4 cases
        store.write([(i, r.model_copy(update={"run_id": "cut"})) for i, r in
                     enumerate(whole.results[:4])])  # fmt: skip
    with open_store(pg_url) as store:
        store.begin_run(whole.info.model_copy(update={"run_id": "cut", "status": "running"}))
    executor = _ray_executor()
    resumed = run_experiment(TARGET, approvals(6), run_id="cut", executor=executor, **kw)
    assert executor.throughput.items == 2
    assert [r.case_id for r in resumed.results] == [f"c{i:02d}" for i in range(6)]
    assert resumed.info.status == "finished"


@pytest.mark.postgres
def test_on_ray_judge_limits_and_the_judge_cache_are_shared_by_every_worker(
    kill_dir: Path, pg_url: str, tmp_path: Path
) -> None:
    from tests.experiments.judged import JUDGE

    cases = [
        {"id": f"c{i}", "evaluators": [JUDGE],
         "turns": [{"input": {"messages": [{"role": "user", "content": f"city {i}?"}]}}]}
        for i in range(6)
    ]  # fmt: skip
    judged = dataset_from_dict({"name": "judged", "cases": cases}, allows_code=True)
    kw: dict[str, Any] = {
        "checkpointer": pg_url, "store": pg_url, "judge_cache": tmp_path / "cache.sqlite",
        "judge_limits": {"max_concurrent": 1}, "concurrency": 2, "partition_size": 2,
    }  # fmt: skip
    agent = "tests.experiments.graphs:build_agent"
    first = run_experiment(agent, judged, run_id="first", executor=_ray_executor(), **kw)
    assert [r.status for r in first.results] == ["passed"] * 6
    limiter = first.info.config["judge_limiter"]
    assert (limiter["requests"], limiter["max_in_flight"]) == (6, 1)
    assert first.info.config["judge_cache"]["misses"] == 6
    again = run_experiment(agent, judged, run_id="again", executor=_ray_executor(), **kw)
    assert again.info.config["judge_cache"]["hits"] == 6
    assert again.info.config["judge_limiter"]["requests"] == 0
