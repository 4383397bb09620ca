"""The conversation judges: rubric presets grading a whole conversation thread, and the
structured answer the simulated user gets the judges' way, past their cache and limiter."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from lg_eval._effects import Effect, drive
from lg_eval.evaluators import resolve_evaluator
from lg_eval.judges import (
    OutputSpec,
    create_goal_completion_judge,
    create_knowledge_retention_judge,
    create_user_frustration_judge,
    structured_answer,
    use_hook,
)
from tests.judges.fake_judge import ScriptedJudge, invalid_json, verdict
from tests.judges.threads import weather_thread

PRESETS = [
    ("goal_completion", "goal_met", create_goal_completion_judge),
    ("user_frustration", "calm", create_user_frustration_judge),
    ("knowledge_retention", "retained", create_knowledge_retention_judge),
]


@pytest.mark.parametrize(("key", "dimension", "factory"), PRESETS)
def test_each_preset_grades_one_dimension_of_the_conversation(
    key: str, dimension: str, factory: Callable[..., Any]
) -> None:
    model = ScriptedJudge.of(verdict(**{dimension: {"reasoning": "Mostly.", "score": 4}}))
    results = factory(judge=model)(
        outputs=weather_thread(), inputs={"user": {"goal": "the weather in sf"}}
    )
    assert [(r["key"], r["score"]) for r in results] == [(key, 0.75), (f"{key}.{dimension}", 4)]
    prompt = model.calls[0].prompt
    assert prompt.startswith("You grade a conversation between a user and an AI agent")
    assert f'<dimension name="{dimension}" scale="1-5">' in prompt
    assert '<inputs>\n{"user": {"goal": "the weather in sf"}}\n</inputs>' in prompt
    assert '<conversation>\n<turn number="1" kind="input"' in prompt
    assert model.calls[0].tool_choice == "record_rubric_scores"


@pytest.mark.parametrize(("key", "dimension", "factory"), PRESETS)
def test_each_preset_is_registered_by_its_key(
    key: str, dimension: str, factory: Callable[..., Any]
) -> None:
    model = ScriptedJudge.of(verdict(**{dimension: {"reasoning": "No.", "score": 1}}))
    name, evaluator = resolve_evaluator(key, {"judge": model})
    assert name == key
    assert [r["score"] for r in evaluator(outputs=weather_thread())] == [0.0, 1]


SCHEMA = {
    "type": "object",
    "properties": {"message": {"type": "string"}, "done": {"type": "boolean"}},
    "required": ["message", "done"],
    "additionalProperties": False,
}


def test_a_structured_answer_goes_past_the_judges_hooks_and_is_asked_again_when_malformed() -> None:
    """A hook in force (the judge cache, the rate limiter) sees a judge's request, never a
    simulated speaker's; a malformed answer is asked again with the problem shown."""
    seen: list[str] = []

    def hook(
        name: str,
        messages: Sequence[BaseMessage],
        spec: OutputSpec,
        request: Callable[[], Effect[AIMessage]],
    ) -> Effect[AIMessage]:
        seen.append(spec.name)
        return request()

    model = ScriptedJudge.of(
        invalid_json('{"message": "hi", "done": tru', tool="user_turn"),
        verdict(message="hi", done="no"),
        verdict(message="hi", done=False),
    )
    with use_hook(hook):
        answer = drive(
            structured_answer(
                model, [HumanMessage("Say hi.")], tool="user_turn", description="d", schema=SCHEMA
            )
        )
    assert seen == []
    assert (answer.arguments, answer.error, answer.usage.calls) == (
        {"message": "hi", "done": False},
        None,
        3,
    )
    assert "done must be of type boolean" in model.calls[2].prompt
