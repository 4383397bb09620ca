"""The judge cache: an unchanged re-run asks the judge model nothing, sync or async."""

from __future__ import annotations

import asyncio

import pytest

from lg_eval.evaluators._registry import _REGISTRY
from lg_eval.experiments import JudgeCache, arun_experiment, run_experiment
from lg_eval.judges import create_trajectory_llm_as_judge
from tests.experiments.conftest import USER, dataset
from tests.experiments.graphs import build_agent
from tests.judges.fake_judge import ScriptedJudge, verdict


@pytest.fixture
def judge_model(monkeypatch: pytest.MonkeyPatch) -> ScriptedJudge:
    """A scripted judge model, registered (for this test only) as ``scripted_trajectory_judge``."""
    model = ScriptedJudge.of(verdict(reasoning="Fine.", score=True), repeat_last=True)
    factory = lambda: create_trajectory_llm_as_judge(judge=model)  # noqa: E731
    monkeypatch.setitem(_REGISTRY, "scripted_trajectory_judge", factory)
    return model


def judged_dataset():
    cases = [
        {"id": f"c{n}", "turns": USER, "evaluators": ["scripted_trajectory_judge"]}
        for n in range(3)
    ]
    return dataset("judged", cases)


def test_a_second_run_is_served_from_the_cache(where, judge_model):
    first = run_experiment(build_agent, judged_dataset(), concurrency=1, **where)
    assert len(judge_model.calls) == 1  # three identical prompts: one call, two hits
    assert next((r.status, r.model_calls, r.tokens) for r in first.results) == ("passed", 3, 204)
    # each case counts only its own hits, also when quick cases are scored as one batch
    assert [r.model_calls for r in first.results] == [3, 2, 2]
    assert first.info.config["judge_cache"] == {
        "enabled": True,
        "hits": 2,
        "misses": 1,
        "saved_calls": 2,
        "saved_tokens": 240,
        "saved_cost": 0.0,
    }
    second = asyncio.run(arun_experiment(build_agent, judged_dataset(), **where))
    assert len(judge_model.calls) == 1
    assert [(r.status, r.model_calls, r.tokens) for r in second.results] == [("passed", 2, 84)] * 3
    assert second.info.config["judge_cache"]["hits"] == 3
    assert [r.scores[0].score for r in second.results] == [True] * 3


def test_judge_cache_false_calls_the_model_every_time(where, judge_model):
    options = {**where, "judge_cache": False}
    run_experiment(build_agent, judged_dataset(), **options)
    run_experiment(build_agent, judged_dataset(), **options)
    assert len(judge_model.calls) == 6


def test_a_different_prompt_misses(where, judge_model, tmp_path):
    cache = JudgeCache(tmp_path / "cache.sqlite")
    options = {**where, "judge_cache": cache, "concurrency": 1}
    run_experiment(build_agent, judged_dataset(), **options)
    other = judged_dataset().model_dump()
    other["cases"][0]["turns"] = [{"input": {"messages": [{"role": "user", "content": "Hi?"}]}}]
    run_experiment(build_agent, dataset("judged", other["cases"]), **options)
    assert len(judge_model.calls) == 2
    assert (cache.stats.hits, cache.stats.misses) == (4, 2)
    cache.close()
