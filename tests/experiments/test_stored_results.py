"""A large stored run's results are read from the store when they are read, never held: the
run ``run_experiment`` returns reads like the one ``load_run`` reads back, whatever the
working directory is by then; a small run's are a list, readable after its store is gone."""

from __future__ import annotations

import json
import os
import pickle
from pathlib import Path

import pytest

from graphs.counter import build
from lg_eval.datasets import Dataset
from lg_eval.errors import StoreError
from lg_eval.experiments import ExperimentRun, _lifecycle, open_store, run_experiment
from lg_eval.experiments._results import ResultsView


def counter_dataset(cases: int) -> Dataset:
    steps = {"trajectory": {"steps": [["__start__", "add", "double"]]}}
    wrong = {"trajectory": {"steps": [["__start__", "double"]]}}
    return Dataset.model_validate(
        {
            "name": "counted",
            "cases": [
                {
                    "id": f"c{n}",
                    "turns": [{"input": {"x": n}}],
                    "expected": wrong if n == 2 else steps,
                }
                for n in range(5)
            ][:cases],
        }
    )


@pytest.mark.parametrize("owned", [True, False], ids=["store-url", "store-object"])
def test_the_returned_runs_results_read_as_the_stored_run(
    tmp_path: Path, owned: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_lifecycle, "HELD_RESULTS", 9)  # 10 results: a view
    path = tmp_path / "results.sqlite"
    store = open_store(path)
    try:
        run = run_experiment(
            build(), counter_dataset(5), checkpointer="memory://",
            store=f"sqlite:///{path}" if owned else store, run_id="r", repetitions=2,
        )  # fmt: skip
        assert isinstance(run.results, ResultsView)
        loaded = store.load_run("r")
        cwd = Path.cwd()
        os.chdir(tmp_path.parent)  # the view reads the same file from anywhere
        try:
            assert len(run.results) == 10
            assert [(r.case_id, r.repetition) for r in run.results] == [
                (f"c{n}", rep) for n in range(5) for rep in range(2)
            ]
            assert run.results == loaded.results and loaded.results == run.results
            assert run.results[0] == loaded.results[0]
            assert run.results[-1].case_id == "c4" and run.results[5].case_id == "c2"
            assert run.results[2:5] == loaded.results[2:5]
            with pytest.raises(IndexError):
                run.results[10]
            assert [r.status for r in run.results].count("failed") == 2
            assert run.pass_rate == loaded.pass_rate == 0.8
            assert run.info == loaded.info and run.info.status == "finished"
            assert json.loads(run.model_dump_json()) == json.loads(loaded.model_dump_json())
            assert ExperimentRun.model_validate(run.model_dump()) == loaded
            assert run == loaded
            again = pickle.loads(pickle.dumps(run))
            assert again.results == loaded.results and type(again.results) is list
            assert repr(run.results) == "<StoredResults: 10 results>"
        finally:
            os.chdir(cwd)
    finally:
        store.close()
    assert not (tmp_path.parent / ".lg_eval").exists()  # no store made where it was read


def test_a_view_whose_store_is_gone_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_lifecycle, "HELD_RESULTS", 1)
    path = tmp_path / "gone" / "results.sqlite"
    run = run_experiment(build(), counter_dataset(3), checkpointer="memory://", store=path)
    assert isinstance(run.results, ResultsView) and len(run.results) == 3
    for file in path.parent.iterdir():
        file.unlink()
    with pytest.raises(StoreError, match="is gone, so the results of run"):
        list(run.results)
    assert not path.exists()  # no new, empty store made in its place


def test_a_small_run_is_a_list_read_after_its_store_is_gone(tmp_path: Path) -> None:
    path = tmp_path / "gone" / "results.sqlite"
    run = run_experiment(build(), counter_dataset(3), checkpointer="memory://", store=path)
    for file in path.parent.iterdir():
        file.unlink()
    assert type(run.results) is list and [r.case_id for r in run.results] == ["c0", "c1", "c2"]


def test_a_run_with_nothing_stored_has_no_pass_rate(tmp_path: Path) -> None:
    run = run_experiment(
        build(), counter_dataset(0), checkpointer="memory://", store=tmp_path / "r.sqlite"
    )
    assert len(run.results) == 0 and list(run.results) == [] and run.pass_rate is None
