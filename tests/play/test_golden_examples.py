"""Every example golden case plays on its graph and takes its expected trajectory.

The one case tagged ``regression-demo`` is wrong on purpose, so it must differ.
"""

from __future__ import annotations

import warnings

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from lg_eval import extract_thread
from lg_eval.datasets import Case, Dataset
from lg_eval.play import play_case, resolve_target
from tests.play.golden import CASES, IDS


@pytest.mark.parametrize(("dataset", "case"), CASES, ids=IDS)
def test_golden_case_takes_its_expected_trajectory(dataset: Dataset, case: Case) -> None:
    target = dataset.target_for(case)
    assert target is not None
    graph = resolve_target(target, InMemorySaver(), allow_code=dataset.allows_code)
    played = play_case(graph, case, thread_id=case.id)
    assert played.error is None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        thread = extract_thread(graph, {"configurable": {"thread_id": case.id}})
    assert case.expected.trajectory is not None
    steps = thread.to_graph_trajectory().steps
    if "regression-demo" in case.tags:
        assert steps != case.expected.trajectory.steps
    else:
        assert steps == case.expected.trajectory.steps
