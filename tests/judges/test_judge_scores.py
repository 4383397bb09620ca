"""Every score a judge gives is finite and inside its declared range (bool, 0..1, choices)."""

from __future__ import annotations

import math

import pytest
from pydantic import BaseModel

from lg_eval._feedback import Feedback
from lg_eval.errors import InvalidOptionError
from lg_eval.judges import create_graph_trajectory_llm_as_judge
from lg_eval.judges._core import Outcome
from lg_eval.judges._options import build_judge
from lg_eval.judges._schema import Judgment, score_problem
from tests.judges.fake_judge import ScriptedJudge, verdict
from tests.judges.threads import weather_thread

NAN, INF = float("nan"), float("inf")


def judge_with(*replies, **options):
    model = ScriptedJudge.of(*replies)
    return model, create_graph_trajectory_llm_as_judge(judge=model, backoff_base=0.0, **options)


def test_continuous_and_choices_together_are_rejected():
    with pytest.raises(InvalidOptionError, match="continuous=True and choices= contradict"):
        create_graph_trajectory_llm_as_judge(
            judge=ScriptedJudge.of(), continuous=True, choices=[0, 5]
        )


@pytest.mark.parametrize(
    ("choices", "message"),
    [
        ([0, NAN], r"choices\[1\]=nan: input should be a finite number\.$"),
        ([INF, 1], r"choices\[0\]=inf: input should be a finite number\.$"),
        ("01", r"choices='01': 'str' instances are not allowed as a Sequence value\.$"),
        ([True, False], r"choices\[0\]=True: input should be a valid number; choices\[1\]"),
        ([], r"choices=\[\]: value should have at least 1 item"),
    ],
)
def test_choices_must_be_a_non_empty_list_of_finite_numbers(choices, message):
    with pytest.raises(InvalidOptionError, match="^" + message):
        create_graph_trajectory_llm_as_judge(judge=ScriptedJudge.of(), choices=choices)


class Graded(BaseModel):
    reasoning: str
    score: float


@pytest.mark.parametrize("bad", [NAN, INF, -INF])
def test_a_non_finite_score_in_a_custom_schema_is_retried(bad):
    model, judge = judge_with(
        verdict(reasoning="?", score=bad),
        verdict(reasoning="Fine.", score=0.5),
        output_schema=Graded,
    )
    result = judge(outputs=weather_thread())
    assert result["score"] == 0.5
    assert result["metadata"]["rejected_answers"] == [f"score must be a finite number, got {bad}."]
    assert len(model.calls) == 2


def test_a_custom_schema_that_keeps_answering_nan_gives_no_score():
    schema = {"title": "loose", "type": "object", "properties": {"score": {}}}
    _model, judge = judge_with(*[verdict(score=NAN)] * 3, output_schema=schema)
    result = judge(outputs=weather_thread())
    assert result["score"] is None
    assert result["metadata"]["error"]["type"] == "malformed_output"


def test_a_custom_schema_keeps_its_own_declared_range():
    schema = {
        "title": "ten",
        "type": "object",
        "properties": {"score": {"type": "number", "minimum": 1, "maximum": 10}},
    }
    _model, judge = judge_with(verdict(score=7), output_schema=schema)
    assert judge(outputs=weather_thread())["score"] == 7


def test_choices_beyond_one_are_the_judges_range():
    _model, judge = judge_with(
        verdict(reasoning="a", score=5), verdict(reasoning="b", score=0), samples=2, choices=[0, 5]
    )
    result = judge(outputs=weather_thread())
    assert result["score"] == 2.5  # the mean of two choices: inside 0..5


def test_a_concluded_score_outside_the_range_becomes_an_error():
    """Whatever a finisher computes, a judge never hands out a score outside its range."""
    built = build_judge({"judge": ScriptedJudge.of()})
    outcome = Outcome(judgment=Judgment({"score": 7.0}, "seven"))
    for bad in (7.0, NAN, INF):
        result = built.conclude(
            [outcome], lambda _j, bad=bad: Feedback(score=bad, comment="computed"), {}
        )
        assert result.score is None
        assert result.metadata["error"]["type"] == "invalid_score"


@pytest.mark.parametrize(
    ("score", "problem"),
    [
        (True, None),
        (None, None),
        (0.5, None),
        (1.5, "outside the judge's range 0..1"),
        (NAN, "which is not a finite number"),
        (10**400, "which is not a finite number"),
        ("1", "which is a str, not a number"),
    ],
)
def test_score_problem(score, problem):
    assert score_problem(score, (0.0, 1.0)) == problem
    assert score_problem(math.pi, None) is None
