"""The message trajectory judge, with and without a reference."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from lg_eval.judges import (
    TRAJECTORY_ACCURACY_PROMPT,
    TRAJECTORY_ACCURACY_PROMPT_WITH_REFERENCE,
    create_async_trajectory_llm_as_judge,
    create_trajectory_llm_as_judge,
)
from tests.judges.fake_judge import ScriptedJudge, verdict

TRAJECTORY = [
    HumanMessage("weather in sf?"),
    AIMessage("", tool_calls=[{"name": "get_weather", "args": {"city": "sf"}, "id": "c1"}]),
    ToolMessage("sunny", tool_call_id="c1"),
    AIMessage("It is sunny."),
]
TEXT = (
    "user: weather in sf?\nassistant:\n"
    '  calls get_weather({"city": "sf"}) [c1]\n'
    "tool get_weather [c1]: sunny\nassistant: It is sunny."
)


def judged(**options):
    model = ScriptedJudge.of(verdict(reasoning="Good.", score=True))
    return model, create_trajectory_llm_as_judge(judge=model, **options)


def test_without_reference_the_plain_prompt_is_used():
    model, judge = judged()
    result = judge(outputs=TRAJECTORY)
    assert (result["key"], result["score"]) == ("trajectory_accuracy", True)
    assert model.calls[0].prompt == TRAJECTORY_ACCURACY_PROMPT.format(inputs_block="", outputs=TEXT)


def test_with_reference_the_reference_prompt_is_used():
    model, judge = judged()
    reference = {"messages": [{"role": "user", "content": "weather in sf?"}]}
    judge(outputs={"messages": TRAJECTORY}, reference_outputs=reference, inputs="weather?")
    assert model.calls[0].prompt == TRAJECTORY_ACCURACY_PROMPT_WITH_REFERENCE.format(
        inputs_block="\n<inputs>\nweather?\n</inputs>\n",
        reference_outputs="user: weather in sf?",
        outputs=TEXT,
    )


def test_an_explicit_prompt_is_used_in_both_cases():
    model, judge = judged(prompt="{outputs} | {reference_outputs}")
    judge(outputs=TRAJECTORY)
    assert model.calls[0].prompt == f"{TEXT} | "


async def test_async_trajectory_judge():
    model = ScriptedJudge.of(verdict(reasoning="Good.", score=0.5))
    judge = create_async_trajectory_llm_as_judge(judge=model, choices=[0, 0.5, 1])
    assert (await judge(outputs=TRAJECTORY))["score"] == 0.5
