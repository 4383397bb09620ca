"""What the HITL evaluator reads from each side: per turn, the questions and the answer.

From a :class:`~lg_eval.ThreadTrajectory`, a turn's questions are the payloads
of the interrupts pending when it ended, sorted by the interrupted node's path
(parallel interrupts have no order of their own); its answer is the resume
value of a resume turn (``None`` for other turns), or, when one resume answered
several interrupts, the list of their values in the order of the questions they
answer. A :class:`~lg_eval.GraphTrajectory` (or its dict) carries the same as
its optional ``interrupts`` and ``resumes``. The shapes are read by
:func:`lg_eval._inputs.recorded_trajectory`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lg_eval._inputs import recorded_trajectory
from lg_eval._trajectory import GraphTrajectory, InterruptRecord, ThreadTrajectory, Turn
from lg_eval.errors import TrajectoryFormatError


@dataclass(frozen=True)
class Side:
    """Per turn, the questions asked (``None``: not known) and the answer given."""

    questions: list[list[Any]] | None
    answers: list[Any] | None
    thread: ThreadTrajectory | None = None
    """The thread read, when the side was one."""


EXPECTED = (
    "a ThreadTrajectory (lg_eval.extract_thread), or a GraphTrajectory / dict carrying "
    "'interrupts' (per turn, a list of interrupt payloads) and/or 'resumes' (per turn, the "
    "resume value or None)"
)


def read(value: Any, argument: str) -> Side:
    """The questions and answers ``value`` records (``argument`` names it in errors)."""
    recorded = recorded_trajectory(value, argument, EXPECTED)
    if isinstance(recorded, ThreadTrajectory):
        return from_thread(recorded)
    return from_graph(recorded, argument)


def from_thread(thread: ThreadTrajectory) -> Side:
    questions: list[list[Any]] = []
    answers: list[Any] = []
    pending: list[InterruptRecord] = []
    for turn in thread.turns:
        answers.append(answer(turn, pending))
        pending = in_path_order(turn.interrupts)
        questions.append([record.value for record in pending])
    return Side(questions, answers, thread)


def in_path_order(records: list[InterruptRecord]) -> list[InterruptRecord]:
    """Interrupts sorted by node path; ties (one node, several tasks) keep their order."""
    return sorted(records, key=lambda record: record.path)


def answer(turn: Turn, pending: list[InterruptRecord]) -> Any:
    """The resume value of a resume turn; a list when it answered several interrupts."""
    if turn.kind != "resume":
        return None
    if turn.resume:
        order = {record.id: n for n, record in enumerate(pending)}
        ids = sorted(turn.resume, key=lambda i: order.get(i, len(order)))
        values = [turn.resume[i] for i in ids]
    elif turn.resume_by_node:
        values = [turn.resume_by_node[path] for path in sorted(turn.resume_by_node)]
    else:
        return None
    return values[0] if len(values) == 1 else values


def from_graph(trajectory: GraphTrajectory, argument: str) -> Side:
    questions, answers = trajectory.interrupts, trajectory.resumes
    sizes = {
        name: len(items)
        for name, items in (
            ("interrupts", questions),
            ("resumes", answers),
            ("steps", trajectory.steps or None),
        )
        if items is not None
    }
    if len(set(sizes.values())) > 1:
        counts = ", ".join(f"{name!r} has {n}" for name, n in sizes.items())
        raise TrajectoryFormatError(
            f"The HITL evaluator could not read {argument}: its turn counts differ ({counts}); "
            "give one entry per turn (an empty list for a turn that asked nothing, None for "
            "a turn that was not a resume)."
        )
    return Side(questions, answers)
