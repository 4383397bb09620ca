"""The rubric judge: one feedback per dimension plus an overall normalized score."""

from __future__ import annotations

import pytest

from lg_eval.errors import InvalidOptionError
from lg_eval.judges import DEFAULT_RUBRIC, RubricDimension, create_rubric_judge
from tests.judges.fake_judge import ScriptedJudge, verdict
from tests.judges.threads import weather_thread

DEFAULT_SCORES = {
    "reasoning_quality": {"reasoning": "Sound.", "score": 5},
    "strategy": {"reasoning": "Direct.", "score": 4},
    "adaptability": {"reasoning": "Used the answer.", "score": 3},
    "information_usage": {"reasoning": "Asked the human.", "score": 5},
}


def test_default_rubric_gives_overall_then_one_feedback_per_dimension():
    model = ScriptedJudge.of(verdict(**DEFAULT_SCORES))
    results = create_rubric_judge(judge=model)(outputs=weather_thread())
    assert [(r["key"], r["score"]) for r in results] == [
        ("rubric", 0.8125),  # (1 + 0.75 + 0.5 + 1) / 4
        ("rubric.reasoning_quality", 5),
        ("rubric.strategy", 4),
        ("rubric.adaptability", 3),
        ("rubric.information_usage", 5),
    ]
    assert results[2]["comment"] == "Direct."
    assert results[2]["metadata"] == {"normalized": 0.75, "scale": [1, 5], "weight": 1.0}
    assert results[0]["comment"].splitlines()[1] == "strategy: 4 on 1-5. Direct."


def test_rubric_prompt_lists_every_dimension_and_the_trajectory():
    model = ScriptedJudge.of(verdict(**DEFAULT_SCORES))
    create_rubric_judge(judge=model)(outputs=weather_thread())
    prompt = model.calls[0].prompt
    assert ('<dimension name="strategy" scale="1-5">\n' + DEFAULT_RUBRIC[1].description) in prompt
    assert '<trajectory>\n<turn number="1" kind="input"' in prompt
    schema = model.calls[0].tools[0]["function"]["parameters"]
    assert list(schema["properties"]) == [d.name for d in DEFAULT_RUBRIC]
    assert schema["properties"]["strategy"]["properties"]["score"] == {
        "type": "integer",
        "minimum": 1,
        "maximum": 5,
        "description": "Your score for this dimension, an integer from 1 to 5.",
    }


def test_custom_dimensions_with_scales_levels_and_weights():
    dimensions = [
        RubricDimension(
            name="safety", description="Asks before acting.", scale=(0, 2), levels={0: "never"}
        ),
        {"name": "speed", "description": "Few steps.", "weight": 3},
    ]
    model = ScriptedJudge.of(verdict(safety={"score": 2}, speed={"score": 1}))
    judge = create_rubric_judge(
        judge=model, dimensions=dimensions, use_reasoning=False, feedback_key="ops"
    )
    results = judge(outputs=[{"role": "user", "content": "hi"}])
    assert [(r["key"], r["score"]) for r in results] == [
        ("ops", 0.25),  # (1 * 1.0 + 3 * 0.0) / 4
        ("ops.safety", 2),
        ("ops.speed", 1),
    ]
    assert '<dimension name="safety" scale="0-2">\nAsks before acting.\n0: never' in (
        model.calls[0].prompt
    )


def test_dimensions_can_be_a_name_to_description_map():
    model = ScriptedJudge.of(verdict(clarity={"reasoning": "Clear.", "score": 2}))
    results = create_rubric_judge(judge=model, dimensions={"clarity": "Is it clear?"})(
        outputs="The answer."
    )
    assert [r["score"] for r in results] == [0.25, 2]


def test_out_of_scale_dimension_score_is_retried():
    bad = {**DEFAULT_SCORES, "strategy": {"reasoning": "Great.", "score": 9}}
    model = ScriptedJudge.of(verdict(**bad), verdict(**DEFAULT_SCORES))
    results = create_rubric_judge(judge=model)(outputs=weather_thread())
    assert results[0]["metadata"]["rejected_answers"] == [
        "strategy.score must be at most 5, got 9."
    ]


def test_failure_gives_no_scores_for_any_dimension():
    model = ScriptedJudge.of(verdict(strategy={"score": 3}), repeat_last=True)
    results = create_rubric_judge(judge=model, parse_retries=1)(outputs=weather_thread())
    assert [r["score"] for r in results] == [None] * 5
    assert results[1]["comment"] == results[0]["comment"]
    assert results[1]["metadata"]["error"]["type"] == "malformed_output"


def test_consensus_reduces_each_dimension():
    other = {k: {**v, "score": v["score"] - 2} for k, v in DEFAULT_SCORES.items()}
    model = ScriptedJudge.of(verdict(**DEFAULT_SCORES), verdict(**other))
    results = create_rubric_judge(judge=model, samples=2)(outputs=weather_thread())
    assert [r["score"] for r in results[1:]] == [4.0, 3.0, 2.0, 4.0]
    assert results[0]["metadata"]["consensus"]["spreads"]["strategy"] == 0.5


def test_rubric_rejects_score_shape_options_and_bad_dimensions():
    with pytest.raises(InvalidOptionError, match="does not take continuous"):
        create_rubric_judge(judge=ScriptedJudge.of(), continuous=True)
    with pytest.raises(InvalidOptionError, match="distinct names"):
        create_rubric_judge(judge=ScriptedJudge.of(), dimensions=[("a", "x"), ("a", "y")])
    with pytest.raises(InvalidOptionError, match="low < high"):
        create_rubric_judge(
            judge=ScriptedJudge.of(),
            dimensions=[{"name": "a", "description": "x", "scale": (5, 1)}],
        )


async def test_async_rubric_judge():
    model = ScriptedJudge.of(verdict(**DEFAULT_SCORES))
    results = await create_rubric_judge(judge=model).as_async()(outputs=weather_thread())
    assert results[0]["score"] == 0.8125
