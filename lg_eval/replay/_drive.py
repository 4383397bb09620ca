"""Run the new graph from a fork: the forked step, then the recorded humans' part.

A replay is a player run (:func:`lg_eval.play.play_thread_core`) whose answers come from
the original thread's recording (:class:`lg_eval.play.FromRecording`): after a
``last-interrupt`` or ``before:NODE`` fork the thread's latest checkpoint has a step
planned, so the first turn is a continue (``invoke(None)``); after a ``turn:N`` fork it is
the N-th input. Then each pending interrupt gets the next answer recorded for its node
(its top-level node name, in the order the original's humans answered that node) when
that answer was given to the same question (:func:`lg_eval.play.same_question`), and
each recorded input is sent once the graph finished. When the original never answered a
node this often, or its answer there was given to another question (``question
changed``), ``on_new_question`` decides: ``"stop"`` (the default) ends the replay there
with status ``stopped`` and the questions in ``reason`` (and the changed ones, both
sides, in ``changed``); ``"reviewer"`` asks ``reviewer`` (a
:class:`~lg_eval.play.SimulatedReviewer` or any callable taking the pending interrupts)
for the missing answers. A graph paused at a breakpoint stops the replay (the original's
continue is not a recorded human act).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic_core import to_jsonable_python

from lg_eval._effects import Core
from lg_eval.play import (
    MAX_CALLS as MAX_CALLS,
)
from lg_eval.play import (
    FromRecording,
    QuestionChange,
    Recording,
    describe_asks,
    describe_changes,
    play_thread_core,
)
from lg_eval.play import (
    OnNewQuestion as OnNewQuestion,
)
from lg_eval.play import (
    Reviewer as Reviewer,
)


@dataclass
class Outcome:
    """How the replay of one thread ended."""

    status: Literal["replayed", "stopped", "error"]
    reason: str | None = None
    calls: int = 0
    reviewer_answers: int = 0
    changed: list[QuestionChange] = field(default_factory=list)
    """Recorded answers not sent: the new graph asked another question at their node
    (questions and answers as JSON data)."""


def replaying(
    graph: Any,
    thread_id: str,
    humans: Recording,
    *,
    on_new_question: OnNewQuestion = "stop",
    reviewer: Reviewer | None = None,
    opening: Literal["continue", "input"] = "continue",
) -> Core[Outcome]:
    """The core: play ``humans`` on ``thread_id`` of ``graph``, opening with a continue or
    the first recorded input; returns how it ended (a graph error is ``status="error"``,
    not raised)."""
    source = FromRecording(humans, opening=opening, on_new_question=on_new_question,
                           reviewer=reviewer, name=thread_id)  # fmt: skip
    played = yield from play_thread_core(graph, source, thread_id=thread_id)
    outcome = Outcome(
        status="replayed",
        calls=len(played.turns),
        reviewer_answers=source.reviewer_answers,
        changed=[_as_data(change) for change in source.changed],
    )
    changed = describe_changes(source.changed)
    if played.error is not None:
        outcome.status, outcome.reason = "error", played.error
    elif source.stopped_at_question:
        outcome.status = "stopped"
        never = source.unanswered and (
            f"the new graph asks {describe_asks(source.unanswered)}, which the original "
            "thread's humans never answered there"
        )
        outcome.reason = "; ".join(part for part in (changed, never) if part)
    elif source.paused:
        outcome.status = "stopped"
        outcome.reason = f"the new graph is paused before {', '.join(source.paused)}"
    elif source.over_limit:
        outcome.status, outcome.reason = "stopped", f"more than {MAX_CALLS} graph calls"
    elif changed:
        outcome.reason = f"{changed} (the reviewer answered it)"
    return outcome


def _as_data(change: QuestionChange) -> QuestionChange:
    """``change`` with its questions and answer as JSON data (a result and a marker hold it)."""
    return QuestionChange.model_validate(to_jsonable_python(change.model_dump(), fallback=repr))
