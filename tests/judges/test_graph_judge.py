"""The graph trajectory judge: prompt, input shapes, options, result."""

from __future__ import annotations

import pytest
from langchain_core.messages import SystemMessage
from langchain_core.prompts import ChatPromptTemplate
from pydantic import BaseModel, Field

from lg_eval.errors import InvalidOptionError, JudgeError, TrajectoryFormatError
from lg_eval.judges import (
    GRAPH_TRAJECTORY_ACCURACY_PROMPT,
    create_async_graph_trajectory_llm_as_judge,
    create_graph_trajectory_llm_as_judge,
)
from lg_eval.judges._prompts import GRAPH_REFERENCE_BLOCK
from tests.judges.fake_judge import ScriptedJudge, verdict
from tests.judges.threads import WEATHER_THREAD_TEXT, weather_thread

NOTATION_START = "You review the route a LangGraph application took"


def judged(**options):
    model = options.pop("model_", None) or ScriptedJudge.of(
        verdict(reasoning="Sensible.", score=True)
    )
    return model, create_graph_trajectory_llm_as_judge(judge=model, **options)


def test_prompt_shows_the_thread_with_resume_values_and_interrupts():
    model, judge = judged()
    judge(outputs=weather_thread())
    expected = GRAPH_TRAJECTORY_ACCURACY_PROMPT.format(
        thread=WEATHER_THREAD_TEXT, reference_block=""
    )
    assert model.calls[0].prompt == expected
    assert "tools (interrupt int-1): It's sunny and 75 degrees" in expected
    assert "__interrupt__ (id int-1): Tell me the weather for sf" in expected


def test_result_is_langsmith_feedback_with_key_score_and_reasoning():
    _, judge = judged()
    result = judge(outputs=weather_thread())
    assert result["key"] == "graph_trajectory_accuracy"
    assert result["score"] is True
    assert result["comment"] == "Sensible."
    assert result["metadata"]["model"] == "scripted-judge"


def test_judge_is_asked_to_call_the_judgment_tool():
    model, judge = judged()
    judge(outputs=weather_thread())
    call = model.calls[0]
    assert call.tool_choice == "record_judgment"
    schema = call.tools[0]["function"]["parameters"]
    assert list(schema["properties"]) == ["reasoning", "score"]
    assert schema["properties"]["score"]["type"] == "boolean"


def test_reference_trajectory_is_shown_in_a_reference_block():
    model, judge = judged()
    judge(outputs=weather_thread(), reference_outputs=weather_thread().to_graph_trajectory())
    prompt = model.calls[0].prompt
    assert "<reference_thread>" in prompt
    assert prompt.endswith("</reference_thread>\n")
    assert GRAPH_REFERENCE_BLOCK.split("{reference}")[0] in prompt


def test_agentevals_inputs_and_outputs_passed_separately():
    flat = weather_thread().to_graph_trajectory().model_dump()
    model, judge = judged()
    judge(
        inputs=flat["inputs"],
        outputs={"results": flat["results"], "steps": flat["steps"]},
    )
    assert "__start__ -> agent -> tools -> __interrupt__" in model.calls[0].prompt
    assert "<input>\n__resuming__\n</input>" in model.calls[0].prompt


def test_agentevals_extractor_envelope_and_inputs_dict_are_accepted():
    flat = weather_thread().to_graph_trajectory().model_dump()
    envelope = {"inputs": flat["inputs"], "outputs": {k: flat[k] for k in ("results", "steps")}}
    prompts = []
    for call in (
        {"outputs": envelope},
        {"inputs": {"inputs": flat["inputs"]}, "outputs": envelope["outputs"]},
    ):
        model, judge = judged()
        judge(**call)
        prompts.append(model.calls[0].prompt)
    assert prompts[0] == prompts[1]


def test_mismatched_lengths_name_the_lengths_that_differ():
    _, judge = judged()
    with pytest.raises(TrajectoryFormatError) as caught:
        judge(inputs=["hi", "again"], outputs={"results": [{}], "steps": [["agent"]]})
    assert str(caught.value) == (
        "outputs: the graph trajectory's lengths differ (inputs has 2, results has 1, "
        "steps has 1; mismatched: inputs (2) vs results (1), inputs (2) vs steps (1)). "
        "Each turn needs one input, one result and one list of steps."
    )


def test_missing_inputs_are_reported_with_a_hint():
    _, judge = judged()
    with pytest.raises(TrajectoryFormatError, match="No inputs were given: pass inputs="):
        judge(outputs={"results": [{}], "steps": [["agent"]]})


def test_wrong_shape_says_what_is_expected():
    _, judge = judged()
    with pytest.raises(TrajectoryFormatError, match="expects a ThreadTrajectory"):
        judge(outputs=["agent", "tools"])


def test_continuous_scores_ask_for_a_bounded_number():
    model, judge = judged(
        continuous=True, model_=ScriptedJudge.of(verdict(reasoning="Mostly.", score=0.75))
    )
    assert judge(outputs=weather_thread())["score"] == 0.75
    score = model.calls[0].tools[0]["function"]["parameters"]["properties"]["score"]
    assert (score["type"], score["minimum"], score["maximum"]) == ("number", 0, 1)


def test_choices_restrict_the_score():
    model, judge = judged(
        choices=[0, 0.5, 1], model_=ScriptedJudge.of(verdict(reasoning="Half.", score=0.5))
    )
    assert judge(outputs=weather_thread())["score"] == 0.5
    assert model.calls[0].tools[0]["function"]["parameters"]["properties"]["score"]["enum"] == [
        0,
        0.5,
        1,
    ]


def test_without_reasoning_only_the_score_is_asked_for():
    model, judge = judged(use_reasoning=False, model_=ScriptedJudge.of(verdict(score=False)))
    result = judge(outputs=weather_thread())
    assert (result["score"], result["comment"]) == (False, None)
    assert list(model.calls[0].tools[0]["function"]["parameters"]["properties"]) == ["score"]


def test_system_message_comes_first():
    model, judge = judged(system="You are strict.")
    judge(outputs=weather_thread())
    assert model.calls[0].messages[0] == SystemMessage("You are strict.")


def test_few_shot_examples_are_appended_to_the_prompt():
    examples = [{"inputs": "q", "outputs": "a", "reasoning": "Direct.", "score": True}]
    model, judge = judged(few_shot_examples=examples)
    judge(outputs=weather_thread())
    assert model.calls[0].prompt.endswith(
        "\n\n<examples>\nGraded examples follow; use them to calibrate your judgment.\n"
        "<example>\n<inputs>\nq\n</inputs>\n<outputs>\na\n</outputs>\n"
        "<reasoning>\nDirect.\n</reasoning>\n<score>\ntrue\n</score>\n</example>\n</examples>"
    )


def test_format_string_prompt_takes_extra_keywords():
    model, judge = judged(prompt="Policy: {policy}\n{thread}")
    judge(outputs=weather_thread(), policy="ask before acting")
    assert model.calls[0].prompt == f"Policy: ask before acting\n{WEATHER_THREAD_TEXT}"


def test_prompt_placeholder_without_a_value_raises_a_clear_error():
    _, judge = judged(prompt="{thread} {policy}")
    with pytest.raises(InvalidOptionError, match=r"uses \{policy\}, but no value named"):
        judge(outputs=weather_thread())


def test_langchain_prompt_template_and_callable_prompts():
    template = ChatPromptTemplate.from_messages([("system", "Judge."), ("human", "{thread}")])
    model, judge = judged(prompt=template)
    judge(outputs=weather_thread())
    assert [m.type for m in model.calls[0].messages] == ["system", "human"]
    assert model.calls[0].prompt == WEATHER_THREAD_TEXT

    def as_messages(thread: str, reference_outputs: str):
        return [{"role": "user", "content": f"T:{thread[:6]} R:{reference_outputs!r}"}]

    model, judge = judged(prompt=as_messages)
    judge(outputs=weather_thread())
    assert model.calls[0].prompt == "T:<turn  R:''"


class Review(BaseModel):
    reasoning: str
    score: float = Field(ge=0, le=1)
    loops: int = Field(description="How many pointless loops the agent made.")


def test_pydantic_output_schema_gives_custom_feedback():
    model, judge = judged(
        output_schema=Review,
        model_=ScriptedJudge.of(verdict(reasoning="One loop.", score=0.8, loops=1)),
    )
    result = judge(outputs=weather_thread())
    assert (result["score"], result["comment"]) == (0.8, "One loop.")
    assert result["metadata"]["feedback"] == {"reasoning": "One loop.", "score": 0.8, "loops": 1}
    assert model.calls[0].tool_choice == "Review"


def test_json_schema_output_schema_is_validated():
    schema = {
        "title": "verdict",
        "type": "object",
        "properties": {"ok": {"type": "boolean"}},
        "required": ["ok"],
    }
    _model, judge = judged(
        output_schema=schema, model_=ScriptedJudge.of(verdict(nope=1), verdict(ok=True))
    )
    result = judge(outputs=weather_thread())
    assert result["metadata"]["feedback"] == {"ok": True}
    assert result["score"] is None and "error" not in result["metadata"]
    assert result["metadata"]["rejected_answers"] == ["the required field 'ok' is missing."]


def test_unknown_options_are_rejected_when_the_judge_is_created():
    with pytest.raises(InvalidOptionError, match="Unknown judge option"):
        create_graph_trajectory_llm_as_judge(judge=ScriptedJudge.of(), temprature=0)


@pytest.mark.parametrize(
    ("env", "model"), [(None, "openai:o3-mini"), ("openai:gpt-4o-mini", "openai:gpt-4o-mini")]
)
def test_default_model_comes_from_the_environment_and_is_created_on_first_call(
    monkeypatch, env, model
):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    if env is None:
        monkeypatch.delenv("LG_EVAL_JUDGE_MODEL", raising=False)
    else:
        monkeypatch.setenv("LG_EVAL_JUDGE_MODEL", env)
    judge = create_graph_trajectory_llm_as_judge()  # creating it needs no API key
    with pytest.raises(JudgeError, match=f"Could not create the judge model '{model}'"):
        judge(outputs=weather_thread())


async def test_async_twin_gives_the_same_result():
    model = ScriptedJudge.of(verdict(reasoning="Sensible.", score=True))
    judge = create_async_graph_trajectory_llm_as_judge(judge=model)
    result = await judge(outputs=weather_thread())
    assert (result["key"], result["score"], result["comment"]) == (
        "graph_trajectory_accuracy",
        True,
        "Sensible.",
    )
    assert model.calls[0].prompt.startswith(NOTATION_START)
