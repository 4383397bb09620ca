"""The graph judge on a real checkpointed HITL thread: the weather scenario.

The offline test checks what the judge is shown for an extracted thread; the
other one calls the default judge model for real and is skipped without
``OPENAI_API_KEY``.
"""

from __future__ import annotations

import os

import pytest

from lg_eval.judges import create_graph_trajectory_llm_as_judge
from tests.judges.fake_judge import ScriptedJudge, verdict


def weather_thread_extracted():
    from langgraph.checkpoint.memory import InMemorySaver

    from graphs import weather
    from graphs.scenarios import SCENARIOS, thread_config
    from lg_eval import extract_thread

    graph = weather.build(checkpointer=InMemorySaver())
    SCENARIOS["weather"].run(graph, "weather-judge")
    return extract_thread(graph, thread_config("weather-judge"))


def test_extracted_hitl_thread_shows_the_question_the_answer_and_the_resume():
    model = ScriptedJudge.of(verdict(reasoning="Asked, got the answer, replied.", score=True))
    judge = create_graph_trajectory_llm_as_judge(judge=model)
    thread = weather_thread_extracted()
    result = judge(outputs=thread)
    prompt = model.calls[0].prompt
    interrupt_id = thread.turns[0].interrupts[0].id
    assert result["score"] is True
    assert f"  __interrupt__ (id {interrupt_id}): Tell me the weather for sf" in prompt
    assert f"tools (interrupt {interrupt_id}): It's sunny and 75 degrees" in prompt
    assert "step 2: tools (resumed)\nstep 3: agent" in prompt


@pytest.mark.skipif(
    not os.environ.get("OPENAI_API_KEY"),
    reason="OPENAI_API_KEY is not set: the real-model judge test needs the OpenAI API",
)
def test_default_judge_model_finds_the_weather_thread_sensible():
    result = create_graph_trajectory_llm_as_judge()(outputs=weather_thread_extracted())
    assert result["score"] is True, result["comment"]
    assert result["metadata"]["usage"]["total_tokens"] > 0
