"""Consensus: several samples of one judge reduced to one verdict, disagreement flagged."""

from __future__ import annotations

import pytest

from lg_eval.errors import InvalidOptionError
from lg_eval.judges import (
    create_async_graph_trajectory_llm_as_judge,
    create_graph_trajectory_llm_as_judge,
)
from lg_eval.judges._consensus import combine, reduce_values, spread
from lg_eval.judges._schema import Judgment
from tests.judges.fake_judge import ScriptedJudge, invalid_json, verdict
from tests.judges.threads import weather_thread


def scores(*values, reasoning="r"):
    return [verdict(reasoning=f"{reasoning}{i}", score=v) for i, v in enumerate(values)]


def test_samples_are_reduced_by_mean_and_every_sample_is_reported():
    model = ScriptedJudge.of(*scores(0.8, 0.9, 1.0))
    judge = create_graph_trajectory_llm_as_judge(judge=model, continuous=True, samples=3)
    result = judge(outputs=weather_thread())
    assert result["score"] == 0.9
    assert len(model.calls) == 3
    consensus = result["metadata"]["consensus"]
    assert consensus == {
        "samples": 3,
        "scored": 3,
        "threshold": 0.25,
        "sample_results": [
            {"score": 0.8, "reasoning": "r0"},
            {"score": 0.9, "reasoning": "r1"},
            {"score": 1.0, "reasoning": "r2"},
        ],
        "reducer": "mean",
        "spread": 0.2,
        "needs_review": False,
    }
    assert result["comment"] == "Consensus of 3 samples (mean).\n\nr1"
    assert result["metadata"]["usage"]["calls"] == 3


def test_disagreement_above_the_threshold_is_flagged_for_review():
    model = ScriptedJudge.of(*scores(0.2, 0.9, 0.95))
    judge = create_graph_trajectory_llm_as_judge(
        judge=model, continuous=True, samples=3, reduce="median"
    )
    result = judge(outputs=weather_thread())
    assert result["score"] == 0.9
    assert result["metadata"]["needs_review"] is True
    assert result["comment"].startswith(
        "Consensus of 3 samples (median). The samples disagree (spread 0.75 > 0.25): "
        "flagged for human review."
    )


def test_boolean_samples_take_the_majority():
    model = ScriptedJudge.of(*scores(True, False, True))
    result = create_graph_trajectory_llm_as_judge(judge=model, samples=3)(outputs=weather_thread())
    assert result["score"] is True
    assert result["metadata"]["consensus"]["reducer"] == "majority"
    assert result["metadata"]["needs_review"] is True  # a boolean split spans the whole scale


def test_a_tied_majority_gives_no_score_and_asks_for_review():
    model = ScriptedJudge.of(*scores(True, False))
    result = create_graph_trajectory_llm_as_judge(judge=model, samples=2)(outputs=weather_thread())
    assert result["score"] is None
    assert "No majority for score: flagged for human review." in result["comment"]


def test_failed_samples_are_left_out_and_counted():
    model = ScriptedJudge.of(invalid_json(), *scores(0.5))
    judge = create_graph_trajectory_llm_as_judge(
        judge=model, continuous=True, samples=2, parse_retries=0
    )
    result = judge(outputs=weather_thread())
    assert result["score"] == 0.5
    assert "1 of 2 samples failed and were left out." in result["comment"]
    assert result["metadata"]["consensus"]["sample_results"][0]["error"]["type"] == (
        "malformed_output"
    )


def test_all_samples_failing_gives_no_score():
    model = ScriptedJudge.of(invalid_json(), repeat_last=True)
    judge = create_graph_trajectory_llm_as_judge(judge=model, samples=3, parse_retries=0)
    result = judge(outputs=weather_thread())
    assert result["score"] is None
    assert result["metadata"]["error"]["type"] == "all_samples_failed"
    assert result["comment"].startswith("Not scored: all 3 samples failed; first failure:")


async def test_async_samples_run_concurrently():
    model = ScriptedJudge.of(verdict(reasoning="Ok.", score=True), delay=0.05, repeat_last=True)
    judge = create_async_graph_trajectory_llm_as_judge(judge=model, samples=5)
    result = await judge(outputs=weather_thread())
    assert result["score"] is True
    assert model.script.max_in_flight == 5


def test_sync_samples_run_one_after_another():
    model = ScriptedJudge.of(verdict(reasoning="Ok.", score=True), repeat_last=True)
    create_graph_trajectory_llm_as_judge(judge=model, samples=4)(outputs=weather_thread())
    assert (len(model.calls), model.script.max_in_flight) == (4, 1)


def test_reducers_and_spread():
    assert reduce_values([1, 2, 2, 5], "majority") == (2.0, "majority")
    assert reduce_values([1.0, 2.0, 9.0], "median") == (2.0, "median")
    assert reduce_values([True, True, False, False], "mean") == (0.5, "mean")
    assert reduce_values([1, 2], "majority") == (None, "majority")
    assert spread([2, 4, 5], (1, 5)) == 0.75
    assert spread([3]) == 0.0


def test_combine_keeps_the_reasoning_of_the_sample_closest_to_the_consensus():
    samples = [(Judgment({"score": v}, f"why {v}"), None) for v in (0.1, 0.5, 0.6)]
    combined = combine(samples, threshold=0.9)
    assert combined.judgment.reasoning == "why 0.5"
    assert combined.judgment.scores == {"score": 0.4}


def test_bad_consensus_options_are_rejected():
    with pytest.raises(
        InvalidOptionError, match=r"^samples=0: input should be greater than or equal to 1\.$"
    ):
        create_graph_trajectory_llm_as_judge(judge=ScriptedJudge.of(), samples=0)
    with pytest.raises(
        InvalidOptionError, match=r"^reduce='mode': input should be 'mean', 'median' or 'majority'"
    ):
        create_graph_trajectory_llm_as_judge(judge=ScriptedJudge.of(), reduce="mode")
