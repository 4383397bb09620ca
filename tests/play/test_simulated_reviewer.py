"""The simulated reviewer: a chat model answering the graph's questions as a persona."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, SystemMessage

from lg_eval.datasets import Dataset
from lg_eval.experiments import arun_experiment, run_experiment
from lg_eval.play import PendingInterrupt, ReviewerError, SimulatedReviewer

WEATHER_CASE = {
    "id": "sf-reviewed",
    "turns": [
        {"input": {"messages": [{"role": "user", "content": "what's the weather in sf?"}]}},
        {"resume": {"reviewer": True}},
    ],
    "expected": {
        "trajectory": {"steps": [["__start__", "agent", "tools", "__interrupt__"], ["agent"]]}
    },
}


class Recording(GenericFakeChatModel):
    """A scripted chat model that keeps the messages it was sent (in ``seen``)."""

    seen: list[Any]

    def _generate(self, messages: Any, *args: Any, **kwargs: Any) -> Any:
        self.seen.append(list(messages))
        return super()._generate(messages, *args, **kwargs)


def scripted(*replies: str) -> Recording:
    return Recording(messages=iter([AIMessage(text) for text in replies]), seen=[])


def test_one_question_gets_the_reply_text_and_the_persona_is_the_system_message() -> None:
    model = scripted("It's sunny and 75 degrees")
    reviewer = SimulatedReviewer(model, persona="a weather station clerk", instructions="Be brief.")
    asked = [PendingInterrupt(id="i1", path="tools", value="What is the weather in sf?")]
    assert reviewer(asked) == "It's sunny and 75 degrees"
    system, human = model.seen[0]
    assert isinstance(system, SystemMessage)
    assert system.content.startswith("You are a weather station clerk.")
    assert system.content.endswith("Be brief.")
    assert "What is the weather in sf?" in human.content


def test_several_questions_are_answered_by_id_or_path() -> None:
    asked = [
        PendingInterrupt(id="a", path="legal", value={"question": "OK?"}),
        PendingInterrupt(id="b", path="finance", value={"question": "Budget?"}),
    ]
    reviewer = SimulatedReviewer(scripted('{"a": "yes", "finance": "no"}'), persona="a manager")
    assert reviewer(asked) == {"a": "yes", "b": "no"}
    unusable = SimulatedReviewer(scripted("yes to both"), persona="a manager")
    with pytest.raises(ReviewerError, match="JSON object of id -> answer"):
        unusable(asked)


def test_a_persona_is_required() -> None:
    with pytest.raises(ReviewerError, match="needs a persona"):
        SimulatedReviewer(scripted("x"), persona=" ")


def test_the_runner_plays_reviewer_turns_with_it(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.chdir(tmp_path)
    data = Dataset.model_validate({"name": "reviewed", "cases": [WEATHER_CASE]})
    where = {"checkpointer": "memory://", "store": f"sqlite:///{tmp_path / 'r.sqlite'}"}
    reviewer = SimulatedReviewer(scripted("It's sunny and 75 degrees"), persona="a clerk")
    run = run_experiment("graphs.weather:build", data, reviewer=reviewer, **where)
    assert [(r.status, r.turns[1].sent) for r in run.results] == [
        ("passed", "It's sunny and 75 degrees")
    ]


async def test_the_awaited_runner_awaits_the_reviewer(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.chdir(tmp_path)
    data = Dataset.model_validate({"name": "reviewed", "cases": [WEATHER_CASE]})
    where = {"checkpointer": "memory://", "store": f"sqlite:///{tmp_path / 'r.sqlite'}"}
    reviewer = SimulatedReviewer(scripted("It's sunny and 75 degrees"), persona="a clerk")
    run = await arun_experiment("graphs.weather:build", data, reviewer=reviewer, **where)
    assert [r.status for r in run.results] == ["passed"]
