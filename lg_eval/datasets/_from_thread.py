"""Grow a golden set from real threads: an extracted thread becomes a case.

The case replays what the thread was sent (inputs, resumes, continues, state
edits, in order) and expects what the thread actually did: its trajectory, the
tool calls that were executed (a call the human rejected was only proposed, so
it is not expected) and its final answer. A production conversation someone
judged good thus guards against regressions in one step.
"""

from __future__ import annotations

from typing import Any

from lg_eval._arguments import validated
from lg_eval._inputs import counted_calls, final_answer, state_messages
from lg_eval._trajectory import GraphTrajectory, ThreadTrajectory, Turn
from lg_eval.datasets._models import Case, Expected, ToolCallExpectation
from lg_eval.datasets._turns import (
    ContinueTurn,
    InputTurn,
    ResumeByNodeTurn,
    ResumeTurn,
    StateUpdate,
    UpdateTurn,
)
from lg_eval.errors import DatasetError


@validated
def case_from_thread(
    thread: ThreadTrajectory,
    *,
    case_id: str,
    tags: list[str] | None = None,
    description: str | None = None,
) -> Case:
    """A :class:`Case` that replays ``thread`` and expects what it did.

    ``expected`` holds the trajectory's steps, the executed tool calls with
    their arguments (when the final state has ``messages``) and the final
    answer (the last AI message's text, else a string ``answer``-like key of
    the final state), each left out when the thread has none.

    Each state edit becomes an ``update`` turn (with ``as_node`` when the
    trajectory records it) before the turn it preceded; a resume that answered
    one interrupt becomes ``resume``, one that answered several becomes
    ``resume_by_node`` (keyed by the paths lg_eval's trajectories use).

    Raises:
        InvalidOptionError: ``thread`` is no :class:`ThreadTrajectory` (extract_thread).
    """
    turns: list[Any] = []
    for turn in thread.turns:
        for edit in turn.edits:
            values = edit.values if isinstance(edit.values, dict) else {}
            turns.append(UpdateTurn(update=StateUpdate(values=values, as_node=edit.as_node)))
        turns.append(_script_turn(thread, case_id, turn))
    return Case(
        id=case_id,
        description=description,
        tags=list(tags or []),
        turns=turns,
        expected=_expected(thread),
        metadata={"from_thread": thread.thread_id},
    )


def _expected(thread: ThreadTrajectory) -> Expected:
    """The thread's steps, executed tool calls and final answer as a case's expectations."""
    state = thread.turns[-1].state if thread.turns else None
    calls = None
    if state_messages(state):
        executed = counted_calls(thread, "thread", "executed").calls  # as they ran
        calls = [ToolCallExpectation(name=c["name"], args=dict(c["args"])) for c in executed]
    return Expected(
        trajectory=GraphTrajectory(steps=thread.to_graph_trajectory().steps),
        tool_calls=calls,
        output=final_answer(state),
    )


def _script_turn(thread: ThreadTrajectory, case_id: str, turn: Turn) -> Any:
    if turn.kind == "input":
        return InputTurn(input=turn.input)
    if turn.kind == "continue":
        return ContinueTurn.model_validate({"continue": True})
    answers = turn.resume or {}
    by_node = turn.resume_by_node or {}
    if not answers:
        raise DatasetError(
            f"thread {thread.thread_id!r}, turns[{turn.index}]: a resume turn without recorded "
            f"answers cannot become a turn of case {case_id!r}."
        )
    if len(answers) == 1:
        return ResumeTurn(resume=next(iter(answers.values())))
    if len(by_node) < len(answers):
        values_at_path: dict[str, list[Any]] = {path: [] for path in by_node}
        for run in turn.iter_tasks():
            if run.answered in answers and run.path in values_at_path:
                values_at_path[run.path].append(answers[run.answered])
        if any(any(v != values[0] for v in values) for values in values_at_path.values()):
            raise DatasetError(
                f"thread {thread.thread_id!r}, turns[{turn.index}]: several interrupts of one node "
                f"got different answers, which resume_by_node cannot say; write case {case_id!r}'s "
                "turn as a resume_fn instead."
            )
    return ResumeByNodeTurn(resume_by_node=dict(by_node))
