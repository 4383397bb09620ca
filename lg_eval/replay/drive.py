"""Run the new graph from a fork: the forked step, then the recorded humans' part.

After a ``last-interrupt`` or ``before:NODE`` fork the thread's latest checkpoint has a
step planned, so the first call is ``invoke(None)`` (LangGraph's continue); after a
``turn:N`` fork it is ``invoke(first)``, the N-th input. Then, until the graph finishes with no
recorded input left:

- the graph asks (``interrupt()``): each pending interrupt is answered with the next
  answer recorded for its node (its top-level node name, in the order the original's
  humans answered that node). When the original never answered that node this often,
  the rule is ``on_new_question``: ``"stop"`` (the default) ends the replay there with
  status ``stopped`` and the question in ``reason``; ``"reviewer"`` asks ``reviewer``
  (a :class:`~lg_eval.play.SimulatedReviewer` or any callable taking the pending
  interrupts) for the missing answers.
- the graph finished: the next recorded input is sent, if any;
- the graph is paused at a breakpoint: the replay stops (the original's continue is not
  a recorded human act).

The core is an effects generator (:mod:`lg_eval._effects`), driven blocking by
:func:`lg_eval.replay.replay_threads`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from langchain_core.runnables import RunnableConfig
from langgraph.types import Command, StateSnapshot

from lg_eval._effects import Core
from lg_eval.play import (
    PendingInterrupt,
    Reviewer,
    call_user,
    describe_asks,
    pending_interrupts,
    read_state,
    run_turn,
)
from lg_eval.replay.fork import Humans

OnNewQuestion = Literal["stop", "reviewer"]

MAX_CALLS = 200
"""At most this many graph calls per replayed thread (a graph that asks forever)."""


@dataclass
class Outcome:
    """How the replay of one thread ended."""

    status: Literal["replayed", "stopped", "error"]
    reason: str | None = None
    calls: int = 0
    reviewer_answers: int = 0


def replaying(
    graph: Any,
    thread_id: str,
    humans: Humans,
    *,
    on_new_question: OnNewQuestion = "stop",
    reviewer: Reviewer | None = None,
    first: Any = None,
) -> Core[Outcome]:
    """The core: call ``graph`` on ``thread_id`` with ``first`` (None: continue), then
    answer it as the original's humans did; returns how it ended (a graph error is
    ``status="error"``, not raised)."""
    config: RunnableConfig = {"configurable": {"thread_id": thread_id}}
    outcome = Outcome(status="replayed")
    payload: Any = first
    while outcome.calls < MAX_CALLS:
        outcome.calls += 1
        try:
            yield run_turn(graph, payload, config)
        except Exception as exc:  # the new graph's own failure is a result
            outcome.status, outcome.reason = "error", f"{type(exc).__name__}: {exc}"
            return outcome
        snapshot: StateSnapshot = yield read_state(graph, config)
        asked = pending_interrupts(snapshot)
        if asked:
            answers, missing = _recorded(asked, humans)
            if missing and (on_new_question == "stop" or reviewer is None):
                outcome.status = "stopped"
                outcome.reason = (
                    f"the new graph asks {describe_asks(missing)}, which the original thread's "
                    "humans never answered there"
                )
                return outcome
            if missing:
                assert reviewer is not None
                given = yield call_user(reviewer, missing, "the reviewer")
                answers.update(_by_id(given, missing))
                outcome.reviewer_answers += len(missing)
            only = answers[asked[0].id] if len(asked) == 1 else None
            payload = Command(resume=only if len(asked) == 1 else answers)
            continue
        if snapshot.next:
            outcome.status = "stopped"
            outcome.reason = f"the new graph is paused before {', '.join(snapshot.next)}"
            return outcome
        if not humans.inputs:
            return outcome
        payload = humans.inputs.popleft()
    outcome.status, outcome.reason = "stopped", f"more than {MAX_CALLS} graph calls"
    return outcome


def _recorded(
    asked: list[PendingInterrupt], humans: Humans
) -> tuple[dict[str, Any], list[PendingInterrupt]]:
    """Answers taken from the recording (consumed), and the interrupts it has none for."""
    answers: dict[str, Any] = {}
    missing: list[PendingInterrupt] = []
    for ask in asked:
        queue = humans.answers.get(ask.path.split(":")[0])
        if queue:
            answers[ask.id] = queue.popleft()
        else:
            missing.append(ask)
    return answers, missing


def _by_id(given: Any, missing: list[PendingInterrupt]) -> dict[str, Any]:
    if isinstance(given, dict) and set(given) == {m.id for m in missing}:
        return dict(given)
    return {m.id: given for m in missing}


__all__ = ["MAX_CALLS", "OnNewQuestion", "Outcome", "Reviewer", "replaying"]
