"""The simulated part of a case: a simulated user's turns, played by the one turn loop.

A case written with ``user:`` (:class:`~lg_eval.datasets.UserSimulation`) goes on after its
scripted turns with :class:`Conversation`, which :class:`~lg_eval.play.Script` asks for
every turn past its script. Before each turn it reads the thread's state and:

1. notes what the agent answered the turn before (:attr:`PlayedTurn.reply`, what the user
   reads; it is noted on every turn of such a case, scripted ones too);
2. ends the conversation when a stop condition holds: the ``stop.state`` predicate is true
   of the state values, the ``stop.tool_call`` ran (a call proposed and waiting for a
   reviewer's approval has not), or (``stop.finished``) the graph
   finished asking nothing; or when the user wrote ``max_turns`` turns;
3. answers the graph's questions (``interrupt()``) as ``interrupts`` routes them: the
   simulated user, the simulated reviewer given to the player, or the next of
   ``answers``; several pending questions are answered in one turn;
4. else sends the user's next message (the fixed ``first_input`` first, if any), unless
   the user says the conversation is over (``done``), which ends it.

Each turn records who wrote it (``script``, ``user``, ``reviewer``) and what the user's
model cost; why the conversation ended is :attr:`PlayedCase.conversation`. Every rule reads
only the turn records and the thread, so a run resumed after a kill goes on where it
stood without asking the user's model for a finished turn again.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from langchain_core.runnables import RunnableConfig
from langgraph.types import StateSnapshot

from lg_eval._effects import Core
from lg_eval._feedback import describe_error
from lg_eval._inputs import final_answer, state_messages
from lg_eval.datasets import InterruptRoute, ToolCallExpectation, TurnKind, UserSimulation
from lg_eval.errors import (
    InvalidOptionError,
    ScriptMismatchError,
    SimulatedUserError,
    TrajectoryFormatError,
)
from lg_eval.messages import call_outcomes, message_text
from lg_eval.play._answers import Move, ThreadState, answers_by_id, call_user, names, resume_value
from lg_eval.play._checkpointers import import_reference
from lg_eval.play._models import (
    ConversationEnd,
    PendingInterrupt,
    PlayedCase,
    PlayedTurn,
    Speaker,
    SpeakerUsage,
    StopReason,
)
from lg_eval.play._questions import top_node
from lg_eval.play._recording import MAX_CALLS
from lg_eval.play._resume import turn_config
from lg_eval.play._simulated import Reviewer, Said, SimulatedUser

_ROUTE_ORDER: tuple[InterruptRoute, ...] = ("user", "reviewer", "script")


class Conversation:
    """The turns a simulated user plays after a case's ``first`` scripted turns (see the
    module text). ``user`` writes them; ``reviewer`` answers the questions routed to it;
    ``code_ok`` lets ``stop.state`` be imported (a dataset that allows code).

    Raises:
        InvalidOptionError: a question is routed to the reviewer and none was given, or
            the stop predicate cannot be imported.
    """

    def __init__(
        self,
        spec: UserSimulation,
        user: SimulatedUser,
        *,
        first: int,
        reviewer: Reviewer | None,
        code_ok: bool,
    ) -> None:
        self.spec = spec
        self.user = user
        self.first = first
        self.reviewer = reviewer
        routes = (
            {spec.interrupts} if isinstance(spec.interrupts, str) else set(spec.interrupts.values())
        )
        if "reviewer" in routes and reviewer is None:
            raise InvalidOptionError(
                "user.interrupts routes questions to the reviewer, but no reviewer= was given "
                "to the player (a SimulatedReviewer, or lg-eval run --reviewer-model)."
            )
        self.predicate: Callable[[Any], Any] | None = None
        if spec.stop.state is not None:
            found = import_reference(spec.stop.state, what="user.stop.state", allow_code=code_ok)
            if not callable(found):
                raise InvalidOptionError(
                    f"user.stop.state {spec.stop.state!r} is a {type(found).__name__}, not a "
                    "function of the graph's state values."
                )
            self.predicate = found

    def note_reply(self, snapshot: StateSnapshot, played: PlayedCase) -> None:
        """Record on ``played``'s last turn what the agent answered, as the user reads it."""
        if played.turns:
            last = played.turns[-1]
            last.reply = reply_of(snapshot, last)

    def next_turn(
        self,
        index: int,
        snapshot: StateSnapshot,
        thread: ThreadState,
        played: PlayedCase,
        config: RunnableConfig,
    ) -> Core[Move | None]:
        """Turn ``index`` of the conversation, or None once it ends (``played.conversation``
        says why)."""
        if thread.next_nodes and not thread.asked and thread.error is None:
            raise ScriptMismatchError(
                f"turn {index}: the graph is paused before {names(thread.next_nodes)} (a static "
                "breakpoint), which a simulated conversation does not go on from",
                turn=index,
                played=played,
            )
        stop = self._stopped(snapshot, thread, played)
        if stop is not None:
            played.conversation = stop
            return None
        sent: Any
        kind: TurnKind
        by: Speaker
        if not played.turns and self.spec.first_input is not None:
            sent, by, usage = self._input(self.spec.first_input), "script", None
            kind = "input"
        elif thread.asked:
            answered = yield from self._answers(thread.asked, played)
            if answered is None:
                return None
            sent, by, usage = answered
            kind = "resume"
        else:
            said = yield from self._user_says(played, [])
            if said is None:
                return None
            sent, by, usage = self._input(said[0]), "user", said[1]
            kind = "input"
        record = PlayedTurn(index=index, kind=kind, sent=sent, by=by, usage=usage)
        return Move(index, kind, sent, turn_config(config, record, played.turns), by, usage)

    # --- when it ends ------------------------------------------------------------------------

    def _stopped(
        self, snapshot: StateSnapshot, thread: ThreadState, played: PlayedCase
    ) -> ConversationEnd | None:
        if not played.turns:
            return None
        values = snapshot.values
        stop = self.spec.stop
        if self.predicate is not None and self._holds(values, played):
            return ConversationEnd(reason="state", detail=stop.state)
        if stop.tool_call is not None:
            made = _call_made(values, stop.tool_call)
            if made is not None:
                return ConversationEnd(reason="tool_call", detail=made)
        if stop.finished and not thread.asked:
            return ConversationEnd(reason="finished", detail="the graph finished asking nothing")
        simulated = sum(turn.index >= self.first for turn in played.turns)
        if simulated >= MAX_CALLS:
            return ConversationEnd(reason="max_turns", detail=f"{MAX_CALLS} turns played")
        return None

    def _holds(self, values: Any, played: PlayedCase) -> bool:
        assert self.predicate is not None
        try:
            return bool(self.predicate(values))
        except Exception as exc:
            raise SimulatedUserError(
                f"user.stop.state {self.spec.stop.state!r} raised {describe_error(exc)}",
                played=played,
            ) from exc

    def _ended(
        self, played: PlayedCase, reason: StopReason, detail: str, usage: SpeakerUsage | None
    ) -> None:
        played.conversation = ConversationEnd(reason=reason, detail=detail, usage=usage)

    # --- who says what -----------------------------------------------------------------------

    def _user_says(
        self, played: PlayedCase, asked: Sequence[PendingInterrupt]
    ) -> Core[tuple[str, SpeakerUsage] | None]:
        """The user's next message, or None when the conversation ends here (the user wrote
        ``max_turns`` turns, or said it is done)."""
        written = sum(turn.by == "user" for turn in played.turns)
        if written >= self.spec.max_turns:
            self._ended(played, "max_turns", f"the user wrote {written} turns", None)
            return None
        try:
            turn = yield from self.user.turn(self.view(played, asked))
        except SimulatedUserError as exc:
            exc.played = played
            raise
        if turn.done:
            self._ended(played, "user", turn.message, turn.usage)
            return None
        return turn.message, turn.usage

    def _answers(
        self, asked: Sequence[PendingInterrupt], played: PlayedCase
    ) -> Core[tuple[Any, Speaker, SpeakerUsage | None] | None]:
        """The answers to the pending questions, each from its route; None when the user,
        asked, ends the conversation instead."""
        groups: dict[InterruptRoute, list[PendingInterrupt]] = {}
        for ask in asked:
            groups.setdefault(self.spec.route(top_node(ask.path)), []).append(ask)
        by_id: dict[str, Any] = {}
        usage: SpeakerUsage | None = None
        for route in _ROUTE_ORDER:
            pending = groups.get(route)
            if not pending:
                continue
            if route == "user":
                said = yield from self._user_says(played, pending)
                if said is None:
                    return None
                answer, usage = said
            elif route == "reviewer":
                assert self.reviewer is not None  # refused when made without one
                answer = yield call_user(self.reviewer, pending, "the reviewer")
            else:
                answer = self._scripted(pending, played)
            by_id.update(answers_by_id(answer, pending))
        speaker = next(route for route in _ROUTE_ORDER if route in groups)
        return resume_value(by_id, list(asked)), speaker, usage

    def _scripted(self, pending: list[PendingInterrupt], played: PlayedCase) -> Any:
        """The next of ``answers`` (one per question routed to the script)."""
        used = sum(
            self.spec.route(top_node(ask.path)) == "script"
            for before, turn in zip(played.turns, played.turns[1:], strict=False)
            if turn.index >= self.first and turn.kind == "resume"
            for ask in before.asked
        )
        left = self.spec.answers[used : used + len(pending)]
        if len(left) < len(pending):
            raise ScriptMismatchError(
                f"the graph asks {len(pending)} question(s) routed to the script, but "
                f"user.answers has {len(left)} answer(s) left (of {len(self.spec.answers)})",
                turn=len(played.turns),
                played=played,
            )
        if len(pending) == 1:
            return left[0]
        return {ask.id: answer for ask, answer in zip(pending, left, strict=True)}

    def _input(self, message: Any) -> Any:
        """The graph input that says ``message`` (a mapping is an input as it is)."""
        if isinstance(message, Mapping):
            return dict(message)
        key = self.spec.input_key
        if key == "messages":
            return {"messages": [{"role": "user", "content": message}]}
        return {key: message}

    # --- what the user sees ------------------------------------------------------------------

    def view(self, played: PlayedCase, asked: Sequence[PendingInterrupt]) -> list[Said]:
        """The conversation as the user saw it: what the user (or the script, in the user's
        place) said, what the agent answered and the questions put to the user; a
        reviewer's answers and the questions routed to others are not the user's to see."""
        said: list[Said] = []
        turns = played.turns
        for position, turn in enumerate(turns):
            if self._users(turn):
                text = _input_text(turn.sent) if turn.kind == "input" else _text(turn.sent)
                said.append(Said("you", text))
            following = turns[position + 1] if position + 1 < len(turns) else None
            if following is not None and self._users(following) and following.kind != "input":
                said.extend(Said("agent_question", _text(ask.value)) for ask in turn.asked)
            if turn.reply is not None:
                said.append(Said("agent", turn.reply))
        said.extend(Said("agent_question", _text(ask.value)) for ask in asked)
        return said

    def _users(self, turn: PlayedTurn) -> bool:
        """Whether ``turn`` was said in the user's place: written by the user, or by the
        script before the user took over (its first input included)."""
        if turn.by == "user":
            return True
        scripted = turn.by == "script" and turn.kind not in ("update", "continue")
        return scripted and (turn.index < self.first or turn.kind == "input")


def simulated_user(
    spec: UserSimulation,
    model: BaseChatModel | str | None,
    *,
    repetition: int,
    code_ok: bool,
) -> SimulatedUser:
    """The simulated user ``spec`` describes: its model is the one ``spec.model`` names
    (``module:attr`` of a chat model or of a function returning one, or a model string),
    else ``model`` (the player's), else the judges'; its seed is ``spec.seed`` plus the
    repetition's number."""
    chosen: BaseChatModel | str | None = spec.model or model
    reference = spec.model_reference
    if reference is not None:
        found = import_reference(reference, what="user.model", allow_code=code_ok)
        chosen = found() if callable(found) and not isinstance(found, BaseChatModel) else found
        if not isinstance(chosen, BaseChatModel):
            raise InvalidOptionError(
                f"user.model {reference!r} gives a {type(chosen).__name__}; name a LangChain "
                "chat model, or a function returning one."
            )
    seed = None if spec.seed is None else spec.seed + repetition
    return SimulatedUser(
        chosen, persona=spec.persona, goal=spec.goal, instructions=spec.instructions, seed=seed
    )


def reply_of(snapshot: StateSnapshot, turn: PlayedTurn) -> str | None:
    """What the agent answered at the end of ``turn``: the final answer of the state, for a
    turn that ran and finished (None for an edit, or a turn that asked, paused or raised)."""
    ran = turn.kind != "update" and turn.error is None
    if not ran or turn.asked or turn.next_nodes:
        return None
    return final_answer(snapshot.values)


def _call_made(values: Any, expected: ToolCallExpectation) -> str | None:
    """``name(args)`` of the first tool call that ran (a tool answered it, as a reviewer
    may have edited it) and matches ``expected``: its name, and the arguments it lists;
    None when none did. A call proposed and still waiting for approval has not run."""
    messages = state_messages(values)
    if not messages:
        return None
    try:
        outcomes = call_outcomes(messages)
    except TrajectoryFormatError:  # messages of a shape the reader does not know: none ran
        return None
    wanted = expected.args or {}
    for outcome in outcomes:
        call = outcome["executed"]
        if call is None or call["name"] != expected.name:
            continue
        args = call["args"]
        if all(key in args and args[key] == value for key, value in wanted.items()):
            return f"{call['name']}({json.dumps(args, ensure_ascii=False, sort_keys=True)})"
    return None


def _input_text(sent: Any) -> str:
    """What a graph input says: its last message's text, or its one text value."""
    if isinstance(sent, Mapping):
        messages = sent.get("messages")
        if isinstance(messages, list) and messages:
            last = messages[-1]
            if isinstance(last, Mapping | BaseMessage):
                return message_text(last)
        if len(sent) == 1:
            (only,) = sent.values()
            if isinstance(only, str):
                return only
    return _text(sent)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
