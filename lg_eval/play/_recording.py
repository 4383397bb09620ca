"""Recorded answers as the source of the human's side of a thread (what replay plays).

A :class:`Recording` holds what a thread's humans said: the answers per asking node, in
the order they were given, and the new inputs, in order. :class:`FromRecording` plays it:

- the first turn is ``opening``: ``"continue"`` (run the step the thread has planned,
  after a fork) or ``"input"`` (send the first recorded input);
- the graph asks (``interrupt()``): each pending interrupt gets the next answer
  recorded for its node (its top-level node name), when that answer was given to the
  same question (:func:`~lg_eval.play.same_question`; an answer recorded without its
  question, a :class:`RecordedAnswer` whose ``question`` is None or a bare value, is
  taken by node and order alone). An answer given to another question is set aside,
  never sent (:attr:`FromRecording.changed`). When the recording has no answer left for
  a node, or its next one answered another question, ``on_new_question`` decides:
  ``"stop"`` ends the play there (:attr:`FromRecording.unanswered` holds the questions
  never answered); ``"reviewer"`` asks ``reviewer`` for the missing answers;
- the graph finished: the next recorded input is sent, if any;
- the graph is paused at a breakpoint: the play stops (:attr:`FromRecording.paused`;
  a continue is not an answer a recording holds);
- a turn raised: the play ends with that error, as a scripted case's does.

At most ``max_calls`` turns are played (:attr:`FromRecording.over_limit`): a graph that
asks forever ends.
"""

from __future__ import annotations

from collections import deque
from dataclasses import KW_ONLY, dataclass, field
from typing import Annotated, Any, Literal

import pydantic
from langchain_core.runnables import RunnableConfig
from pydantic import SkipValidation

from lg_eval._arguments import BOUNDARY, Count, instance_of, validated
from lg_eval._effects import Core
from lg_eval.errors import InvalidOptionError
from lg_eval.play._answers import (
    Move,
    ThreadState,
    answers_by_id,
    call_user,
    describe_asks,
    names,
    resume_value,
)
from lg_eval.play._models import Graph, PendingInterrupt, PlayedCase, QuestionChange, Speaker
from lg_eval.play._questions import describe_changes, same_question, top_node
from lg_eval.play._simulated import Reviewer

OnNewQuestion = Literal["stop", "reviewer"]
Opening = Literal["continue", "input"]

MAX_CALLS = 200
"""At most this many graph calls per played recording (a graph that asks forever)."""


@dataclass(frozen=True)
class RecordedAnswer:
    """An answer a human gave, with the question it answered when the thread kept it."""

    value: Any
    """The answer (what ``Command(resume=...)`` gave the asking node)."""
    question: PendingInterrupt | None = None
    """The interrupt it answered; None when the checkpoints no longer hold it (LangGraph
    keeps one question per task and step: the last one a node asked)."""


@dataclass
class Taken:
    """What a recording gives for the pending interrupts: answers by interrupt id, the
    interrupts it has no answer left for, and the answers it set aside (given to another
    question than the one pending at their node)."""

    answers: dict[str, Any] = field(default_factory=dict)
    new: list[PendingInterrupt] = field(default_factory=list)
    changed: list[QuestionChange] = field(default_factory=list)


@dataclass
class Recording:
    """What a thread's humans said: answers per asking node (in the order they were
    given; each a :class:`RecordedAnswer`, or a bare value whose question is unknown) and
    new inputs (in order). Playing it consumes it."""

    answers: dict[str, deque[Any]] = field(default_factory=dict)
    inputs: deque[Any] = field(default_factory=deque)

    def unused(self) -> int:
        """Recorded answers and inputs the play did not need."""
        return sum(len(q) for q in self.answers.values()) + len(self.inputs)

    def take(self, asked: list[PendingInterrupt]) -> Taken:
        """Answers for ``asked`` by interrupt id (consumed); an answer given to another
        question is consumed too and set aside in :attr:`Taken.changed`."""
        taken = Taken()
        for ask in asked:
            node = top_node(ask.path)
            queue = self.answers.get(node)
            if not queue:
                taken.new.append(ask)
                continue
            recorded = queue.popleft()
            if not isinstance(recorded, RecordedAnswer):
                taken.answers[ask.id] = recorded
            elif recorded.question is None or same_question(recorded.question, ask):
                taken.answers[ask.id] = recorded.value
            else:
                taken.changed.append(
                    QuestionChange(
                        node=node,
                        answered=recorded.question.value,
                        asked=ask.value,
                        answer=recorded.value,
                    )
                )
        return taken


@validated
@pydantic.dataclasses.dataclass(config=BOUNDARY)
class FromRecording:
    """Play a :class:`Recording`: answer each question with the answer recorded for its
    node, send each recorded input once the graph finished (see the module text)."""

    recording: Annotated[
        Recording,
        instance_of(Recording, what="a lg_eval.play.Recording (answers per node, inputs)"),
    ]
    _: KW_ONLY
    opening: Opening = "input"
    on_new_question: OnNewQuestion = "stop"
    reviewer: SkipValidation[Reviewer | None] = None
    max_calls: Count = MAX_CALLS
    name: str = "recording"
    unanswered: list[PendingInterrupt] = field(default_factory=list, init=False)
    """The questions the play stopped at that the recording has no answer left for."""
    changed: list[QuestionChange] = field(default_factory=list, init=False)
    """The recorded answers not sent because the graph asked another question at their
    node: the play stopped there, or the reviewer answered instead."""
    stopped_at_question: bool = field(default=False, init=False)
    """Whether the play stopped at questions it had no fitting answer for (those in
    :attr:`unanswered`, and those of :attr:`changed`)."""
    paused: list[str] = field(default_factory=list, init=False)
    """The nodes a breakpoint paused the graph before, when the play stopped there."""
    over_limit: bool = field(default=False, init=False)
    """Whether the play stopped after ``max_calls`` turns."""
    reviewer_answers: int = field(default=0, init=False)
    """How many interrupts the reviewer answered."""

    def __post_init__(self) -> None:
        if self.on_new_question == "reviewer" and not callable(self.reviewer):
            raise InvalidOptionError(
                "on_new_question='reviewer' needs reviewer= (a SimulatedReviewer, or a callable "
                "taking the pending interrupts)."
            )

    @property
    def reason(self) -> str | None:
        """Why the play stopped before the recording's part was done, or None."""
        if self.stopped_at_question:
            reasons = []
            if self.changed:
                reasons.append(describe_changes(self.changed))
            if self.unanswered:
                asks = describe_asks(self.unanswered)
                reasons.append(f"the graph asks {asks}, which the recording never answered")
            return "; ".join(reasons)
        if self.paused:
            return f"the graph is paused before {names(self.paused)}"
        if self.over_limit:
            return f"more than {self.max_calls} graph calls"
        return None

    def begin(self, graph: Graph, config: RunnableConfig, played: PlayedCase) -> Core[ThreadState]:
        """The thread is taken as it is (fresh, or a fork with a step planned)."""
        return ThreadState()
        yield  # a core that needs no I/O

    def next_turn(
        self, thread: ThreadState, played: PlayedCase, config: RunnableConfig
    ) -> Core[Move | None]:
        """The opening, a recorded answer (or the reviewer's), or the next input."""
        index = len(played.turns)
        move: Move
        if index == 0 and self.opening == "continue":
            move = Move(index, "continue", None, config)
        elif thread.asked:
            taken = self.recording.take(thread.asked)
            answers = taken.answers
            missing = [ask for ask in thread.asked if ask.id not in answers]
            self.changed.extend(taken.changed)
            if missing and (self.on_new_question == "stop" or self.reviewer is None):
                self.unanswered, self.stopped_at_question = taken.new, True
                return None
            if missing:
                assert self.reviewer is not None
                given = yield call_user(self.reviewer, missing, "the reviewer")
                answers.update(answers_by_id(given, missing))
                self.reviewer_answers += len(missing)
            by: Speaker = "reviewer" if missing else "recording"
            move = Move(index, "resume", resume_value(answers, thread.asked), config, by)
        elif thread.next_nodes:
            self.paused = list(thread.next_nodes)
            return None
        elif not self.recording.inputs:
            return None
        else:
            move = Move(index, "input", self.recording.inputs.popleft(), config, "recording")
        if index >= self.max_calls:
            self.over_limit = True
            return None
        return move

    def retries(self, played: PlayedCase) -> bool:
        """A turn that raised ends the play: a recording holds no retries."""
        return False

    def end(self, thread: ThreadState, played: PlayedCase) -> None:
        """A recording may end anywhere: what it stopped at is on the source."""
