"""A golden case's scripted turns (and its simulated user) as the human's side of a thread.

Before each turn :class:`Script` checks that the graph is in the state the script
assumes (waiting for a human before a resume, paused or failed before a continue, not
waiting before a new input) and raises :class:`~lg_eval.errors.ScriptMismatchError`
naming the turn and what the graph asked when it is not. After the last turn a graph
still waiting for a human, or paused at a breakpoint, is a mismatch too: a case never
ends half-played and the player never waits for an answer that will not come.

A case with a simulated user (``user:``) goes on after its scripted turns with the turns
the user plays (:class:`~lg_eval.play._conversation.Conversation`); its conversation then
ends by its stop conditions instead, and may end with a question pending (the user gave up).

Every turn's config tags its checkpoints with the turn (:mod:`lg_eval.play._resume`), so
``resume=True`` goes on with a thread a killed run left from its last finished turn.
"""

from __future__ import annotations

from typing import Any, TypedDict, Unpack

from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import RunnableConfig
from langgraph.types import StateSnapshot

from lg_eval._effects import Core
from lg_eval.datasets import (
    Case,
    ContinueTurn,
    InputTurn,
    ResumeByNodeTurn,
    ResumeFnTurn,
    ResumeTurn,
    ScriptTurn,
    UpdateTurn,
)
from lg_eval.errors import InvalidOptionError, ScriptMismatchError
from lg_eval.play._answers import (
    Move,
    ThreadState,
    answers_by_id,
    call_user,
    names,
    observe,
    read_state,
    resume_value,
)
from lg_eval.play._checkpointers import import_reference
from lg_eval.play._conversation import Conversation, reply_of, simulated_user
from lg_eval.play._models import Graph, PlayedCase, PlayedTurn, Speaker
from lg_eval.play._resume import at_checkpoint, clear, progress, turn_config
from lg_eval.play._simulated import Reviewer


class ScriptOptions(TypedDict, total=False):
    """How a :class:`Script` plays its case (keywords of :func:`~lg_eval.play.play_case`)."""

    reviewer: Reviewer | None
    """Answers the turns written ``resume: {reviewer: true}``."""
    allow_code: bool | None
    """None follows the case (``case.allows_code``); True lets a ``resume_fn`` from an
    untrusted dataset be imported anyway."""
    resume: bool
    """Take a thread that already has checkpoints as one a killed run left."""
    user_model: BaseChatModel | str | None
    """Writes the simulated user's turns of a case whose ``user:`` names no model."""
    repetition: int
    """Which repetition of the case this play is: the simulated user's seed is the case's
    ``user.seed`` plus this."""


class Script:
    """The scripted turns of ``case``, played in order and checked against the graph.

    ``reviewer`` answers the turns written ``resume: {reviewer: true}``.
    ``allow_code=None`` follows the case (``case.allows_code``); ``True`` lets a
    ``resume_fn`` from an untrusted dataset be imported anyway. ``resume=True`` takes a
    thread that already has checkpoints as one a killed run left: the turns it finished
    are not played again (:mod:`lg_eval.play._resume`); by default such a thread is refused.
    A case with ``user:`` goes on with its simulated user (``user_model`` writes its turns
    when the case names no model; ``repetition`` moves its seed).
    """

    def __init__(self, case: Case, **options: Unpack[ScriptOptions]) -> None:
        if not isinstance(case, Case):
            raise InvalidOptionError(
                f"case: a lg_eval.datasets.Case (Case.model_validate({{'id': ..., 'turns': "
                f"[...]}})), not {type(case).__name__}."
            )
        self.case = case
        self.name = case.id
        self.reviewer = options.get("reviewer")
        allow_code = options.get("allow_code")
        self.code_ok = case.allows_code if allow_code is None else allow_code
        self.resume = options.get("resume", False)
        self.user_model = options.get("user_model")
        self.repetition = options.get("repetition", 0)
        self.conversation: Conversation | None = None
        self._graph: Graph | None = None
        self._next = 0
        self._fork: RunnableConfig | None = None
        self._cut: PlayedTurn | None = None

    def begin(self, graph: Graph, config: RunnableConfig, played: PlayedCase) -> Core[ThreadState]:
        """Refuse code the case may not run, then take the thread: fresh, or (``resume``)
        as a killed run left it."""
        if not self.code_ok:  # refuse before anything runs, not halfway through the thread
            for index, turn in enumerate(self.case.turns):
                if isinstance(turn, ResumeFnTurn):
                    import_reference(
                        turn.resume_fn, what=f"turns[{index}].resume_fn", allow_code=False
                    )
        self._graph = graph
        if self.case.user is not None:
            user = simulated_user(
                self.case.user, self.user_model, repetition=self.repetition, code_ok=self.code_ok
            )
            self.conversation = Conversation(
                self.case.user,
                user,
                first=len(self.case.turns),
                reviewer=self.reviewer,
                code_ok=self.code_ok,
            )
        snapshot: StateSnapshot = yield read_state(graph, config)
        if snapshot.created_at is None:
            return ThreadState()
        thread_id = config["configurable"]["thread_id"]
        if not self.resume:
            raise InvalidOptionError(
                f"case {self.case.id!r}: thread {thread_id!r} already has checkpoints; play "
                "every case on a fresh thread_id."
            )
        turns = None if self.conversation is not None else len(self.case.turns)
        found = yield from progress(graph, snapshot, self._ended_turn, turns=turns)
        if found is None:  # nothing to go on from that is sure: play it again, from the start
            yield clear(graph, thread_id)
            return ThreadState()
        played.turns.extend(found.done)
        self._next, self._fork, self._cut = found.next_index, found.fork, found.cut
        return observe(snapshot, None, started=True)

    def next_turn(
        self, thread: ThreadState, played: PlayedCase, config: RunnableConfig
    ) -> Core[Move | None]:
        """The next scripted turn, once the graph is where it expects; past the script, the
        simulated user's next turn (or None)."""
        index = self._next
        if self._fork is not None and self._cut is not None:  # cut by a kill: sent again
            fork, cut, self._fork = self._fork, self._cut, None
            self._next += 1
            turn_cfg = at_checkpoint(turn_config(config, cut, played.turns), fork)
            return Move(index, cut.kind, cut.sent, turn_cfg, cut.by, cut.usage)
        snapshot = None
        if self.conversation is not None and self._graph is not None:
            snapshot = yield read_state(self._graph, config)
            self.conversation.note_reply(snapshot, played)
        if index >= len(self.case.turns):
            if self.conversation is None or snapshot is None:
                return None
            move = yield from self.conversation.next_turn(index, snapshot, thread, played, config)
            self._next += move is not None
            return move
        self._next += 1
        turn = self.case.turns[index]
        sent = yield from self._payload(index, turn, thread, played)
        by: Speaker = (
            "reviewer" if isinstance(turn, ResumeTurn) and turn.asks_reviewer else "script"
        )
        record = PlayedTurn(index=index, kind=turn.kind, sent=sent, by=by)
        return Move(index, turn.kind, sent, turn_config(config, record, played.turns), by)

    def retries(self, played: PlayedCase) -> bool:
        """A turn that raised is retried only by a ``continue`` turn right after it."""
        following = played.turns[-1].index + 1
        turns = self.case.turns
        return following < len(turns) and isinstance(turns[following], ContinueTurn)

    def end(self, thread: ThreadState, played: PlayedCase) -> None:
        """A scripted case never ends with the graph waiting for a human or paused (a
        simulated conversation ends by its own rules)."""
        if self.conversation is None and (thread.asked or thread.next_nodes):
            last = len(self.case.turns) - 1
            raise ScriptMismatchError(
                f"after turns[{last}] the graph {thread.waiting()} but the script has no more "
                "turns",
                turn=last,
                played=played,
            )

    def _ended_turn(self, snapshot: StateSnapshot, sent: PlayedTurn) -> PlayedTurn:
        """The record of turn ``sent`` that ended at ``snapshot``; in a simulated
        conversation, with the agent's reply."""
        state = observe(snapshot, None, started=True)
        turn = sent.model_copy(update={"asked": state.asked, "next_nodes": state.next_nodes})
        if self.conversation is not None:
            turn.reply = reply_of(snapshot, turn)
        return turn

    def _payload(
        self, index: int, turn: ScriptTurn, thread: ThreadState, played: PlayedCase
    ) -> Core[Any]:
        """What turn ``index`` sends, after checking the graph is where the script expects."""

        def mismatch(problem: str) -> ScriptMismatchError:
            return ScriptMismatchError(
                f"turns[{index}] ({turn.kind}): {problem}", turn=index, played=played
            )

        if isinstance(turn, UpdateTurn):
            return {"values": turn.update.values, "as_node": turn.update.as_node}
        if isinstance(turn, InputTurn):
            if thread.asked:
                raise mismatch(
                    f"the graph is waiting for a human ({thread.describe()}) but the script sends "
                    "a new input"
                )
            if thread.next_nodes and thread.error is None:
                raise mismatch(
                    f"the graph is paused before {names(thread.next_nodes)} but the script sends "
                    "a new input (write continue: true to go on)"
                )
            return turn.input
        if isinstance(turn, ContinueTurn):
            if thread.asked:
                raise mismatch(
                    f"the graph is waiting for a human ({thread.describe()}); answer it with a "
                    "resume"
                )
            if not (thread.next_nodes or thread.error):
                raise mismatch(f"there is nothing to continue ({thread.describe()})")
            return None
        if not thread.asked:
            raise mismatch(f"the graph is not waiting for a human ({thread.describe()})")
        pending = list(thread.asked)
        if isinstance(turn, ResumeByNodeTurn):
            ids_by_path: dict[str, list[str]] = {}
            for ask in pending:
                ids_by_path.setdefault(ask.path, []).append(ask.id)
            unknown = [path for path in turn.resume_by_node if path not in ids_by_path]
            if unknown:
                raise mismatch(
                    f"no interrupt is pending at {names(unknown)}; the pending ones are at "
                    f"{names(list(ids_by_path))}"
                )
            by_id = {i: v for path, v in turn.resume_by_node.items() for i in ids_by_path[path]}
            return resume_value(by_id, pending)
        if isinstance(turn, ResumeFnTurn):
            fn = import_reference(
                turn.resume_fn, what=f"turns[{index}].resume_fn", allow_code=self.code_ok
            )
            if not callable(fn):
                raise InvalidOptionError(
                    f"turns[{index}].resume_fn {turn.resume_fn!r} is a {type(fn).__name__}, not "
                    "a callable."
                )
            answer = yield call_user(fn, pending, f"turns[{index}].resume_fn {turn.resume_fn!r}")
            return resume_value(answers_by_id(answer, pending), pending)
        assert isinstance(turn, ResumeTurn)
        if turn.asks_reviewer:
            if self.reviewer is None:
                raise InvalidOptionError(
                    f"turns[{index}] asks the simulated reviewer (resume: {{reviewer: true}}) but "
                    "no reviewer= was given to the player."
                )
            answer = yield call_user(self.reviewer, pending, "the reviewer")
            return resume_value(answers_by_id(answer, pending), pending)
        return resume_value({ask.id: turn.resume for ask in pending}, pending)
