"""The one turn player: a case's scripted turns, played on one fresh thread.

:func:`playing` is the single core (a generator of :mod:`lg_eval._effects`
effects); :func:`play_case` drives it with blocking calls and
:func:`aplay_case` awaits it, so the runner, the LangSmith target and the
pytest fixture all share one turn loop. This is the only module of lg_eval
that builds ``Command(resume=...)``.

Before each turn the player checks that the graph is in the state the script
assumes (waiting for a human before a resume, paused or failed before a
continue, not waiting before a new input) and raises
:class:`~lg_eval.errors.ScriptMismatchError` naming the turn and what the graph
asked when it is not. After the last turn a graph still waiting for a human,
or paused at a breakpoint, is a mismatch too: a case never ends half-played
and the player never waits for an answer that will not come.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from langchain_core.runnables import RunnableConfig
from langgraph.types import Command, StateSnapshot

from lg_eval._effects import Core, Effect, adrive, drive
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
from lg_eval.play._models import PendingInterrupt, PlayedCase, PlayedTurn
from lg_eval.play._resume import at_checkpoint, clear, progress, turn_config
from lg_eval.play._targets import import_reference
from lg_eval.play._turn_end import ENDED, MAY_PAUSE, TurnEnd, ends_observably, watched_turn
from lg_eval.play._types import Graph

Reviewer = Callable[[list[PendingInterrupt]], Any]
"""A simulated reviewer: gets the pending interrupts, returns a value or ``{id: value}``."""

_RECORDED_CONFIG_KEYS = ("configurable", "recursion_limit", "tags", "metadata", "run_name")
_ASK_WIDTH = 80


@dataclass
class _Thread:
    """Where the thread stands between two turns."""

    started: bool = False
    asked: list[PendingInterrupt] = field(default_factory=list)
    next_nodes: list[str] = field(default_factory=list)
    error: str | None = None

    def describe(self) -> str:
        """What the graph is doing, for messages: ``it finished``, ``it asks ...``."""
        if not self.started:
            return "it has not started: no input was sent yet"
        if self.asked:
            return f"it asks {describe_asks(self.asked)}"
        if self.error is not None:
            return f"it failed: {self.error}"
        if self.next_nodes:
            return f"it is paused before {_names(self.next_nodes)}"
        return "it finished"


def thread_config(thread_id: str, config: RunnableConfig | None = None) -> RunnableConfig:
    """``config`` with ``configurable.thread_id`` set to ``thread_id``."""
    merged: dict[str, Any] = dict(config or {})
    merged["configurable"] = {**(merged.get("configurable") or {}), "thread_id": thread_id}
    return cast(RunnableConfig, merged)


def playing(
    graph: Graph,
    case: Case,
    *,
    thread_id: str,
    reviewer: Reviewer | None = None,
    allow_code: bool | None = None,
    config: RunnableConfig | None = None,
    resume: bool = False,
) -> Core[PlayedCase]:
    """The player core: plays ``case`` on ``thread_id`` and returns what happened.

    ``allow_code=None`` follows the case (``case.allows_code``); ``True`` lets a
    ``resume_fn`` from an untrusted dataset be imported anyway. ``resume=True`` takes a
    thread that already has checkpoints as one a killed run left: the turns it finished
    are not played again (:mod:`lg_eval.play._resume`); by default such a thread is refused.
    """
    cfg = thread_config(thread_id, config)
    played = PlayedCase(
        case_id=case.id,
        thread_id=thread_id,
        config={k: v for k, v in cfg.items() if k in _RECORDED_CONFIG_KEYS},
    )
    code_ok = case.allows_code if allow_code is None else allow_code
    if not code_ok:  # refuse before anything runs, not halfway through the thread
        for index, turn in enumerate(case.turns):
            if isinstance(turn, ResumeFnTurn):
                import_reference(turn.resume_fn, what=f"turns[{index}].resume_fn", allow_code=False)
    snapshot: StateSnapshot = yield read_state(graph, cfg)
    thread = _Thread()
    start, fork, fork_sent = 0, None, None
    if snapshot.created_at is not None:
        if not resume:
            raise InvalidOptionError(
                f"case {case.id!r}: thread {thread_id!r} already has checkpoints; play every "
                "case on a fresh thread_id."
            )
        found = yield from progress(graph, case, snapshot, _ended_turn)
        if found is None:  # nothing to go on from that is sure: play it again, from the start
            yield clear(graph, thread_id)
        else:
            played.turns.extend(found.done)
            start, fork, fork_sent = found.next_index, found.fork, found.sent
            thread = _observe(snapshot, None, started=True)
            if fork is None and (stop := _stopped(played, case)) is not None:
                return stop
    watched = ends_observably(graph, cfg)
    for index in range(start, len(case.turns)):
        turn = case.turns[index]
        if index == start and fork is not None:  # cut by a kill: sent again, where it began
            sent = fork_sent
            turn_cfg = at_checkpoint(turn_config(cfg, index, played.turns, case, sent), fork)
        else:
            sent = yield from _payload(index, turn, thread, reviewer, code_ok, played)
            turn_cfg = turn_config(cfg, index, played.turns, case, sent)
        error: str | None = None
        end: TurnEnd = MAY_PAUSE
        try:
            if isinstance(turn, UpdateTurn):
                yield _update_state(graph, turn_cfg, turn.update.values, turn.update.as_node)
            else:
                end = yield run_turn(graph, _command(turn, sent), turn_cfg, watched)
        except Exception as exc:  # recorded on the turn; a `continue` turn may retry
            error = f"{type(exc).__name__}: {exc}"
        started = thread.started or _runs(turn)
        if end is ENDED:  # nothing pending: a snapshot would say so, at a get_state's cost
            thread = _Thread(started=started)
        else:
            thread = _observe((yield read_state(graph, cfg)), error, started)
        played.turns.append(
            PlayedTurn(
                index=index,
                kind=turn.kind,
                sent=sent,
                asked=thread.asked,
                next_nodes=thread.next_nodes,
                error=error,
            )
        )
        if (stop := _stopped(played, case)) is not None:
            return stop
    if thread.asked or thread.next_nodes:
        last = len(case.turns) - 1
        raise ScriptMismatchError(
            f"after turns[{last}] the graph {_waiting(thread)} but the script has no more turns",
            turn=last,
            played=played,
        )
    return played


def _stopped(played: PlayedCase, case: Case) -> PlayedCase | None:
    """``played``, ended, when its last turn raised and the script does not continue."""
    last = played.turns[-1]
    following = case.turns[last.index + 1] if last.index + 1 < len(case.turns) else None
    if last.error is not None and not isinstance(following, ContinueTurn):
        played.error = last.error
        return played
    return None


def _ended_turn(snapshot: StateSnapshot) -> PlayedTurn:
    """The record of a turn that ended at ``snapshot`` (index, kind and sent set by the
    caller)."""
    state = _observe(snapshot, None, started=True)
    return PlayedTurn(index=0, kind="input", asked=state.asked, next_nodes=state.next_nodes)


def _runs(turn: ScriptTurn) -> bool:
    return not isinstance(turn, UpdateTurn)


def _waiting(thread: _Thread) -> str:
    if thread.asked:
        return f"asks {describe_asks(thread.asked)}"
    return f"is paused before {_names(thread.next_nodes)}"


def _payload(
    index: int,
    turn: ScriptTurn,
    thread: _Thread,
    reviewer: Reviewer | None,
    code_ok: bool,
    played: PlayedCase,
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
                f"the graph is waiting for a human ({thread.describe()}) but the script sends a "
                "new input"
            )
        if thread.next_nodes and thread.error is None:
            raise mismatch(
                f"the graph is paused before {_names(thread.next_nodes)} but the script sends a "
                "new input (write continue: true to go on)"
            )
        return turn.input
    if isinstance(turn, ContinueTurn):
        if thread.asked:
            raise mismatch(
                f"the graph is waiting for a human ({thread.describe()}); answer it with a resume"
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
                f"no interrupt is pending at {_names(unknown)}; the pending ones are at "
                f"{_names(list(ids_by_path))}"
            )
        return {i: value for path, value in turn.resume_by_node.items() for i in ids_by_path[path]}
    if isinstance(turn, ResumeFnTurn):
        fn = import_reference(turn.resume_fn, what=f"turns[{index}].resume_fn", allow_code=code_ok)
        if not callable(fn):
            raise InvalidOptionError(
                f"turns[{index}].resume_fn {turn.resume_fn!r} is a {type(fn).__name__}, not a "
                "callable."
            )
        answer = yield call_user(fn, pending, f"turns[{index}].resume_fn {turn.resume_fn!r}")
        return _resume_value(answer, pending)
    assert isinstance(turn, ResumeTurn)
    if turn.asks_reviewer:
        if reviewer is None:
            raise InvalidOptionError(
                f"turns[{index}] asks the simulated reviewer (resume: {{reviewer: true}}) but no "
                "reviewer= was given to the player."
            )
        answer = yield call_user(reviewer, pending, "the reviewer")
        return _resume_value(answer, pending)
    return _resume_value(turn.resume, pending, as_map=False)


def _resume_value(answer: Any, pending: Sequence[PendingInterrupt], *, as_map: bool = True) -> Any:
    """An ``{id: value}`` map answer stays a map; one value answers every pending interrupt.

    With ``as_map`` a mapping whose keys are all pending ids is taken as a map
    (``resume_fn`` and reviewer answers); a scripted ``resume`` value is always one value.
    """
    ids = {ask.id for ask in pending}
    if as_map and isinstance(answer, Mapping) and answer and set(answer) <= ids:
        return dict(answer)
    if len(pending) == 1:
        return answer
    return {ask.id: answer for ask in pending}


def _command(turn: ScriptTurn, sent: Any) -> Any:
    """The invoke input: the graph input, ``None`` (continue), or ``Command(resume=...)``."""
    if isinstance(turn, (InputTurn, ContinueTurn)):
        return sent
    return Command(resume=sent)


def _observe(snapshot: StateSnapshot, error: str | None, started: bool) -> _Thread:
    return _Thread(
        started=started,
        asked=pending_interrupts(snapshot),
        next_nodes=list(snapshot.next),
        error=error,
    )


def pending_interrupts(snapshot: StateSnapshot) -> list[PendingInterrupt]:
    """Interrupts waiting for an answer, each at the deepest node that raised it.

    Needs a snapshot read with ``subgraphs=True``: a subgraph node's interrupt
    is also listed on its parent task, and only the nested snapshot tells
    ``researcher:deep_dive:verify`` from ``researcher``.
    """
    found: dict[str, PendingInterrupt] = {}
    _collect(snapshot, "", found)
    return list(found.values())


def _collect(snapshot: StateSnapshot, prefix: str, found: dict[str, PendingInterrupt]) -> None:
    for task in snapshot.tasks:
        path = f"{prefix}{task.name}"
        if isinstance(task.state, StateSnapshot):
            _collect(task.state, f"{path}:", found)
        for item in task.interrupts:
            if item.id not in found:
                found[item.id] = PendingInterrupt(id=item.id, path=path, value=item.value)


def describe_asks(asked: Sequence[PendingInterrupt]) -> str:
    """``'Approve?' at node 'tools'`` for each pending interrupt, joined by ``; ``."""
    return "; ".join(f"{_summary(ask.value)} at node {ask.path!r}" for ask in asked)


def _summary(value: Any) -> str:
    if isinstance(value, Mapping) and isinstance(value.get("question"), str):
        value = value["question"]
    if isinstance(value, str):
        text = repr(value)
    else:
        try:
            text = json.dumps(value, default=str, ensure_ascii=False)
        except (TypeError, ValueError):
            text = repr(value)
    return text if len(text) <= _ASK_WIDTH else text[: _ASK_WIDTH - 3] + "..."


def _names(names: Sequence[str]) -> str:
    return ", ".join(repr(n) for n in names)


# --- effects ---------------------------------------------------------------------------


def run_turn(
    graph: Graph, payload: Any, config: RunnableConfig, watched: bool = False
) -> Effect[TurnEnd]:
    """One turn's run: watched (how it ended is known) or a plain ``invoke``."""
    if watched:
        return watched_turn(graph, payload, config)

    def run() -> TurnEnd:
        graph.invoke(payload, config)
        return MAY_PAUSE

    async def arun() -> TurnEnd:
        await graph.ainvoke(payload, config)
        return MAY_PAUSE

    return Effect(run, arun)


def read_state(graph: Graph, config: RunnableConfig) -> Effect[StateSnapshot]:
    """The thread's state with its subgraphs (where pending interrupts are read)."""
    return Effect(
        lambda: graph.get_state(config, subgraphs=True),
        lambda: graph.aget_state(config, subgraphs=True),
    )


def _update_state(
    graph: Graph, config: RunnableConfig, values: dict[str, Any], as_node: str | None
) -> Effect[Any]:
    return Effect(
        lambda: graph.update_state(config, values, as_node=as_node),
        lambda: graph.aupdate_state(config, values, as_node=as_node),
    )


def call_user(fn: Callable[[Any], Any], arg: Any, what: str) -> Effect[Any]:
    """Call a user callable (a ``resume_fn``, a reviewer); an async one is awaited only
    when the core is driven async, and refused with a typed error when driven sync."""

    def run() -> Any:
        result = fn(arg)
        if inspect.isawaitable(result):
            if inspect.iscoroutine(result):
                result.close()
            raise InvalidOptionError(f"{what} is async; play the case with aplay_case.")
        return result

    async def arun() -> Any:
        awaited = getattr(
            fn, "acall", None
        )  # a reviewer with an awaitable twin (SimulatedReviewer)
        result = awaited(arg) if callable(awaited) else fn(arg)
        return (await result) if inspect.isawaitable(result) else result

    return Effect(run, arun)


# --- entry points ----------------------------------------------------------------------


def play_case(
    graph: Graph,
    case: Case,
    *,
    thread_id: str,
    reviewer: Reviewer | None = None,
    allow_code: bool | None = None,
    config: RunnableConfig | None = None,
    resume: bool = False,
) -> PlayedCase:
    """Play ``case``'s turns on a fresh ``thread_id`` of ``graph`` (which has a checkpointer).

    Returns what was sent and asked per turn; a graph error ends the case (it is
    recorded, not raised) unless the next turn is ``continue``. Raises
    :class:`~lg_eval.errors.ScriptMismatchError` when the graph asks something
    the script did not expect. ``allow_code=None`` follows ``case.allows_code``;
    ``resume=True`` goes on with a thread a killed run left (see :func:`playing`).
    """
    return drive(
        playing(
            graph,
            case,
            thread_id=thread_id,
            reviewer=reviewer,
            allow_code=allow_code,
            config=config,
            resume=resume,
        )
    )


async def aplay_case(
    graph: Graph,
    case: Case,
    *,
    thread_id: str,
    reviewer: Reviewer | None = None,
    allow_code: bool | None = None,
    config: RunnableConfig | None = None,
    resume: bool = False,
) -> PlayedCase:
    """Async twin of :func:`play_case` (``ainvoke``; async checkpointers; async reviewers)."""
    return await adrive(
        playing(
            graph,
            case,
            thread_id=thread_id,
            reviewer=reviewer,
            allow_code=allow_code,
            config=config,
            resume=resume,
        )
    )


__all__ = [
    "Reviewer",
    "aplay_case",
    "describe_asks",
    "pending_interrupts",
    "play_case",
    "playing",
    "thread_config",
]
