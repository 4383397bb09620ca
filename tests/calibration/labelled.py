"""Real labelled threads for the label tests: the travel agent's bookings, decided by people.

:func:`play_bookings` plays the travel agent (``create_agent`` with
``HumanInTheLoopMiddleware`` gating ``book_flight``) on one thread per entry of a
:data:`Decisions` table, each request carrying ``[case NN]`` so a scripted judge can tell
the threads apart, and answers the booking's question as the table says (approve, reject
or edit). :func:`scripted_judge` is ``trajectory_accuracy`` on a scripted chat model that
says pass for the cases it is given and fail for the others, recording every prompt;
:func:`swept` scores the threads with it through a real sweep into a results store.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any, Literal

from langchain_core.messages import BaseMessage
from langgraph.types import Command

from graphs.scenarios import Turn, drive
from lg_eval.experiments import ResultStore
from lg_eval.judges import create_trajectory_llm_as_judge
from lg_eval.sweeps import sweep_threads
from tests import travel
from tests.judges.fake_judge import ScriptedJudge, verdict

Decision = Literal["approve", "reject", "edit"]
Decisions = Mapping[str, Decision]
"""The reviewer's decision on each thread's booking, by thread id."""
ANSWERS: dict[Decision, Command] = {
    "approve": travel.APPROVE,
    "reject": travel.REJECT,
    "edit": travel.edit(seat="business", price=420),
}
KEY = "trajectory_accuracy"
CASE = re.compile(r"\[case (\d+)\]")


def thread_id(number: int) -> str:
    return f"t{number:02d}"


def request(number: int) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": f"[case {number:02d}] {travel.REQUEST}"}]}


def play_bookings(graph: Any, decisions: Decisions) -> None:
    """Each thread of ``decisions``: the request, then the reviewer's answer; each ends."""
    for thread, decision in decisions.items():
        number = int(thread[1:])
        drive(graph, thread, [Turn(request(number)), Turn(ANSWERS[decision])], finish=True)


def scripted_judge(passes: Collection[int]) -> tuple[Any, ScriptedJudge]:
    """``trajectory_accuracy`` judging ``[case NN]`` pass when NN is in ``passes``, and its
    scripted model (whose ``calls`` hold every prompt)."""

    def reply(messages: list[BaseMessage]) -> Any:
        found = CASE.search(str(messages[-1].content))
        number = int(found.group(1)) if found else -1
        said = "books what was asked" if number in passes else "books without a reason"
        return verdict(score=number in passes, reasoning=f"case {number}: {said}")

    model = ScriptedJudge.of(reply, repeat_last=True)
    return create_trajectory_llm_as_judge(judge=model), model


def swept(graph: Any, saver: Any, store: ResultStore, judge: Any, name: str = "travel") -> str:
    """Score every thread of ``saver`` with ``judge`` in a sweep; its run id."""
    result = sweep_threads(
        graph, saver, evaluators=[judge], store=store, judge_cache=False, name=name
    )
    return result.run.info.run_id


def store_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'results.sqlite'}"
