"""Stores for the viewer tests, made by real runs on real graphs.

``weather_store``: the weather golden dataset (a ReAct agent whose tool asks a human)
run twice into one SQLite results store: ``weather-1`` on the graph as it is, then
``weather-2`` on the same graph with a model that asks the tool about the wrong city,
so its cases regress. ``hostile_store``: the reports' hostile run (every text field an
injection payload, plus off-machine URLs) written to a store.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from graphs import weather
from graphs._scripted import ai, scripted_model, tool_call
from lg_eval.experiments import ResultStore, open_store, run_experiment
from lg_eval.viewer import ViewerServer, make_viewer
from tests.reports.conftest import PAYLOAD, make_hostile_run

ROOT = Path(__file__).resolve().parents[2]
DATASET = "examples/golden/weather.yaml"
OUTSIDE = '<img src="http://203.0.113.9/pixel.png"><link rel="stylesheet" href="http://203.0.113.9/x.css">'


def misread(checkpointer: Any = None) -> Any:
    """The weather graph with a model that asks about the wrong city (nyc, not sf)."""
    model = scripted_model(
        "misread",
        ai("misread-1", "", tool_call("get_weather", {"city": "nyc"}, "call_weather_nyc")),
        ai("misread-2", "It is raining in nyc."),
    )
    return weather.build(checkpointer, model)


@pytest.fixture(scope="session")
def weather_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    here = tmp_path_factory.mktemp("viewer")
    url = f"sqlite:///{here / 'results.sqlite'}"
    cwd = os.getcwd()
    os.chdir(ROOT)  # the dataset names its graph and answer functions from the repo root
    try:
        for run_id, target in (("weather-1", None), ("weather-2", misread)):
            run_experiment(
                target,
                DATASET,
                checkpointer=f"sqlite:///{here / 'checkpoints.sqlite'}",
                store=url,
                run_id=run_id,
            )
    finally:
        os.chdir(cwd)
    return here / "results.sqlite"


@pytest.fixture(scope="session")
def hostile_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("hostile") / "results.sqlite"
    run = make_hostile_run()
    hostile = run.results[0]
    hostile.case_id = hostile.case_id + OUTSIDE
    hostile.tool_calls = [{"name": f"refund{PAYLOAD}", "args": {"note": PAYLOAD}, "id": "c1"}]
    with open_store(path) as store:
        store.begin_run(run.info)
        store.write(list(enumerate(run.results)))
    return path


def serve(path: Path) -> Iterator[ViewerServer]:
    store: ResultStore = open_store(path)
    server = make_viewer(store)
    server.start()
    try:
        yield server
    finally:
        server.stop()
        store.close()


@pytest.fixture
def weather_viewer(weather_store: Path) -> Iterator[ViewerServer]:
    yield from serve(weather_store)


@pytest.fixture
def hostile_viewer(hostile_store: Path) -> Iterator[ViewerServer]:
    yield from serve(hostile_store)
