"""Helpers for multi-field reference tests: a custom evaluator that records its reference.

:class:`AnswerCheck` reads the whole ``reference_outputs`` it is handed (as a
custom evaluator does), so given ``EvalSpec(check, reference_key="output")`` it
must see only the reference's ``"output"``; it compares that with the final AI
message of the thread it evaluates. :func:`judge` is a graph trajectory judge
on a scripted model that approves every thread it is shown.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import BaseMessage

from lg_eval import ThreadTrajectory
from lg_eval.judges import create_graph_trajectory_llm_as_judge
from tests.judges.fake_judge import ScriptedJudge, verdict

SF_CALL = {"name": "get_weather", "args": {"city": "sf"}}
JUDGE_REASONING = "Asked the human, used the answer, replied: the reference's route."


def last_answer(outputs: ThreadTrajectory) -> str:
    """The text of the last message in the thread's latest state."""
    messages = outputs.turns[-1].state["messages"]
    assert isinstance(messages[-1], BaseMessage)
    return messages[-1].text


class AnswerCheck:
    """A custom evaluator reading the whole reference it is given; records every one."""

    __name__ = "answer_check"

    def __init__(self) -> None:
        self.seen: list[Any] = []

    def __call__(self, *, outputs: Any, reference_outputs: Any = None, **_: Any) -> dict[str, Any]:
        self.seen.append(reference_outputs)
        same = last_answer(outputs) == reference_outputs
        return {"key": "final_answer", "score": same, "comment": None if same else "Differs."}


def judge(repeat: bool = False) -> tuple[ScriptedJudge, Any]:
    """A scripted model approving with :data:`JUDGE_REASONING`, and the judge using it."""
    model = ScriptedJudge.of(verdict(reasoning=JUDGE_REASONING, score=True), repeat_last=repeat)
    return model, create_graph_trajectory_llm_as_judge(judge=model)
