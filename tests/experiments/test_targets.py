"""Which graph each case is played on: per-case targets, fresh builds from factories."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lg_eval.datasets import load_dataset
from lg_eval.errors import InvalidOptionError
from lg_eval.experiments import run_experiment
from tests.experiments.conftest import dataset

ROOT = Path(__file__).resolve().parents[2]
WEATHER = [
    {"input": {"messages": [{"role": "user", "content": "what's the weather in sf?"}]}},
    {"resume": "It's sunny and 75 degrees"},
]
WEATHER_STEPS = [["__start__", "agent", "tools", "__interrupt__"], ["agent"]]


def test_a_factory_is_built_for_every_case(where: dict[str, Any]) -> None:
    """graphs.weather:build scripts one conversation per model; two cases need two builds."""
    cases = [
        {"id": f"sf-{n}", "turns": WEATHER, "expected": {"trajectory": {"steps": WEATHER_STEPS}}}
        for n in range(3)
    ]
    run = run_experiment("graphs.weather:build", dataset("weather", cases), concurrency=2, **where)
    assert [(r.case_id, r.status) for r in run.results] == [
        ("sf-0", "passed"),
        ("sf-1", "passed"),
        ("sf-2", "passed"),
    ]


def test_a_case_plays_on_its_own_graph(where: dict[str, Any]) -> None:
    golden = load_dataset(ROOT / "examples" / "golden" / "workflows.yaml")
    run = run_experiment(None, golden, **where)
    targets = {case.id: golden.target_for(case) for case in golden.cases}
    assert len(set(targets.values())) > 1  # the file really mixes graphs
    assert {r.case_id: r.status for r in run.results} == dict.fromkeys(targets, "passed")
    assert run.info.target == ", ".join(sorted(set(targets.values())))


def test_a_case_without_any_target_is_refused_before_anything_runs(
    where: dict[str, Any],
) -> None:
    data = dataset("none", [{"id": "lost", "turns": WEATHER}])
    with pytest.raises(InvalidOptionError, match="Case 'lost' has no target"):
        run_experiment(None, data, **where)
