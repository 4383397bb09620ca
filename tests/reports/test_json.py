"""render_json: every case × repetition with run id, id, status, scores and latency."""

from __future__ import annotations

import json

from lg_eval.experiments.results import ExperimentRun
from lg_eval.reports import build_report, render_json


def test_round_trip_gives_every_result_back(support_run: ExperimentRun) -> None:
    document = json.loads(render_json(support_run))
    assert document["schema"] == "lg_eval.report/1"
    assert document["run"]["run_id"] == "run-0304"
    rows = document["results"]
    assert len(rows) == len(support_run.results)
    for row, result in zip(rows, support_run.results, strict=True):
        assert row["run_id"] == result.run_id
        assert (row["case_id"], row["repetition"], row["status"]) == (
            result.case_id,
            result.repetition,
            result.status,
        )
        assert row["scores"] == {s.key: s.score for s in result.scores}
        assert row["latency_s"] == result.latency_s
        assert row["tags"] == result.tags


def test_a_report_and_its_run_render_the_same(support_run: ExperimentRun) -> None:
    assert render_json(build_report(support_run)) == render_json(support_run)


def test_aggregates_travel_with_the_results(support_run: ExperimentRun) -> None:
    document = json.loads(render_json(support_run))
    assert document["summary"]["counts"] == {"passed": 3, "failed": 2, "error": 1, "timeout": 1}
    assert document["summary"]["latency_p50_s"] == 1.2
    assert [e["key"] for e in document["evaluators"]][:2] == [
        "graph_trajectory_strict_match",
        "trajectory_accuracy",
    ]
