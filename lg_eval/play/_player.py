"""The one turn player: one thread played turn by turn, whatever gives the human's side.

:func:`play_thread_core` is the single turn loop (a generator of :mod:`lg_eval._effects`
effects); :func:`play_thread` drives it with blocking calls and :func:`aplay_thread`
awaits it. The human's side comes from an :class:`~lg_eval.play.AnswerSource`: a case's
scripted turns (:class:`~lg_eval.play.Script`, what :func:`play_case` / :func:`aplay_case`
and the runner, the LangSmith target, the pytest fixture and the server target play) or a
recording (:class:`~lg_eval.play.FromRecording`, what :mod:`lg_eval.replay` plays), each
perhaps handing questions to a simulated reviewer. This is the only module of lg_eval
that builds ``Command(resume=...)``.

A turn that raises is recorded on its :class:`~lg_eval.play.PlayedTurn`, not raised;
the play ends there unless the source retries it (a scripted ``continue``).

How a turn's run ended is seen while it runs, so the player reads the state only when needed.
After every turn the player needs to know whether the graph is waiting (an ``interrupt()``
or a static breakpoint, at any depth) or finished. ``get_state(subgraphs=True)`` tells,
but costs a checkpoint read and a task plan per turn. For most turns the run itself
already says so: LangGraph's ``invoke`` streams ``["updates", "values"]`` internally, and
the root loop ends a run that stops for a human by emitting an ``updates`` chunk with the
``__interrupt__`` key:

- an interrupt a root task raised (its own ``interrupt()``, or one from a subgraph it ran,
  as a node or from inside its function) comes with the task's interrupt writes
  (``PregelLoop.output_writes``);
- a stop with no interrupt values (``interrupt_before`` / ``interrupt_after`` of the root
  graph or of any subgraph below it, however it was invoked) is emitted on exit
  (``PregelLoop._suppress_interrupt``: ``{"__interrupt__": ()}``), which ``invoke`` drops
  from its output because the list is empty.

Every other way a run stops raises (an error, the recursion limit, a drain). So a watched
run that returns without that key finished with nothing pending, and the player skips the
snapshot. The one blind spot is a task tagged ``langsmith:hidden``: LangGraph emits no
writes of hidden tasks, interrupts included, so a graph with a hidden root node (other
than LangGraph's own ``__start__``, which runs no user code) or a hidden run tag is not
watched. Neither is a graph whose ``invoke`` / ``stream`` a subclass replaced.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from typing import Any, Unpack

from langchain_core.runnables import RunnableConfig
from langgraph.constants import START, TAG_HIDDEN
from langgraph.pregel import Pregel
from langgraph.types import Command

from lg_eval._effects import Core, Effect, adrive, drive
from lg_eval._feedback import describe_error
from lg_eval.datasets import Case
from lg_eval.play._answers import (
    AnswerSource,
    Move,
    ThreadState,
    observe,
    read_state,
    thread_config,
    update_state,
)
from lg_eval.play._models import Graph, PlayedCase, PlayedTurn
from lg_eval.play._script import Script, ScriptOptions

_RECORDED_CONFIG_KEYS = ("configurable", "recursion_limit", "tags", "metadata", "run_name")


def play_thread_core(
    graph: Graph, source: AnswerSource, *, thread_id: str, config: RunnableConfig | None = None
) -> Core[PlayedCase]:
    """The turn loop: plays what ``source`` sends on ``thread_id`` and returns what
    happened, turn by turn."""
    cfg = thread_config(thread_id, config)
    played = PlayedCase(
        case_id=source.name,
        thread_id=thread_id,
        config={k: v for k, v in cfg.items() if k in _RECORDED_CONFIG_KEYS},
    )
    thread = yield from source.begin(graph, cfg, played)
    if played.turns and _ends(played, source):
        return played
    watched = ends_observably(graph, cfg)
    while (move := (yield from source.next_turn(thread, played, cfg))) is not None:
        error: str | None = None
        end: TurnEnd = MAY_PAUSE
        try:
            if move.kind == "update":
                yield update_state(graph, move.config, move.sent["values"], move.sent["as_node"])
            else:
                end = yield run_turn(graph, _command(move), move.config, watched)
        except Exception as exc:  # recorded on the turn; the source may retry it
            error = describe_error(exc)
        started = thread.started or move.kind != "update"
        if end is ENDED:  # nothing pending: a snapshot would say so, at a get_state's cost
            thread = ThreadState(started=started)
        else:
            thread = observe((yield read_state(graph, cfg)), error, started)
        played.turns.append(
            PlayedTurn(
                index=move.index,
                kind=move.kind,
                sent=move.sent,
                asked=thread.asked,
                next_nodes=thread.next_nodes,
                error=error,
                by=move.by,
                usage=move.usage,
            )
        )
        if _ends(played, source):
            return played
    source.end(thread, played)
    return played


def _ends(played: PlayedCase, source: AnswerSource) -> bool:
    """Whether the play ends at ``played``'s last turn: it raised and the source does not
    retry it (then the error is the play's)."""
    last = played.turns[-1]
    if last.error is not None and not source.retries(played):
        played.error = last.error
        return True
    return False


def _command(move: Move) -> Any:
    """The invoke input: the graph input, ``None`` (continue), or ``Command(resume=...)``."""
    if move.kind in ("input", "continue"):
        return move.sent
    return Command(resume=move.sent)


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


def play_thread(
    graph: Graph, source: AnswerSource, *, thread_id: str, config: RunnableConfig | None = None
) -> PlayedCase:
    """Play what ``source`` sends on ``thread_id`` of ``graph`` (which has a checkpointer)."""
    return drive(play_thread_core(graph, source, thread_id=thread_id, config=config))


async def aplay_thread(
    graph: Graph, source: AnswerSource, *, thread_id: str, config: RunnableConfig | None = None
) -> PlayedCase:
    """Async twin of :func:`play_thread` (``ainvoke``; async checkpointers; async reviewers)."""
    return await adrive(play_thread_core(graph, source, thread_id=thread_id, config=config))


def playing(
    graph: Graph,
    case: Case,
    *,
    thread_id: str,
    config: RunnableConfig | None = None,
    **options: Unpack[ScriptOptions],
) -> Core[PlayedCase]:
    """The player core for ``case``'s scripted turns (:class:`~lg_eval.play.Script`)."""
    return play_thread_core(graph, Script(case, **options), thread_id=thread_id, config=config)


def play_case(
    graph: Graph,
    case: Case,
    *,
    thread_id: str,
    config: RunnableConfig | None = None,
    **options: Unpack[ScriptOptions],
) -> PlayedCase:
    """Play ``case``'s turns on a fresh ``thread_id`` of ``graph`` (which has a checkpointer).

    Returns what was sent and asked per turn; a graph error ends the case (it is
    recorded, not raised) unless the next turn is ``continue``. Raises
    :class:`~lg_eval.errors.ScriptMismatchError` when the graph asks something
    the script did not expect. ``reviewer`` answers ``resume: {reviewer: true}`` turns;
    ``allow_code=None`` follows ``case.allows_code``; ``resume=True`` goes on with a
    thread a killed run left (see :class:`~lg_eval.play.Script`).
    """
    return drive(playing(graph, case, thread_id=thread_id, config=config, **options))


async def aplay_case(
    graph: Graph,
    case: Case,
    *,
    thread_id: str,
    config: RunnableConfig | None = None,
    **options: Unpack[ScriptOptions],
) -> PlayedCase:
    """Async twin of :func:`play_case` (``ainvoke``; async checkpointers; async reviewers)."""
    return await adrive(playing(graph, case, thread_id=thread_id, config=config, **options))


_INTERRUPT = "__interrupt__"
_MODES: list[Any] = ["updates", "values"]  # what Pregel.invoke streams (stream_mode="values")
_OWN_METHODS = ("invoke", "ainvoke", "stream", "astream")


class TurnEnd(enum.Enum):
    """What the run of one turn showed about how it ended."""

    ENDED = "ended"
    """Finished with nothing pending: no interrupt, no breakpoint stop."""
    MAY_PAUSE = "may_pause"
    """Stopped for a human, or not watched: read the state to know."""


ENDED = TurnEnd.ENDED
MAY_PAUSE = TurnEnd.MAY_PAUSE


def ends_observably(graph: Graph, config: RunnableConfig) -> bool:
    """Whether a run of ``graph`` under ``config`` shows every stop in its stream.

    True for LangGraph's own ``Pregel`` run methods when no root node (but ``__start__``)
    and no run tag is ``langsmith:hidden``.
    """
    if not isinstance(graph, Pregel):
        return False
    kind = type(graph)
    if any(getattr(kind, name) is not getattr(Pregel, name) for name in _OWN_METHODS):
        return False
    if _hidden((config or {}).get("tags")) or _hidden((graph.config or {}).get("tags")):
        return False
    return not any(_hidden(node.tags) for name, node in graph.nodes.items() if name != START)


def _hidden(tags: Iterable[str] | None) -> bool:
    return TAG_HIDDEN in (tags or ())


def _stops(mode: Any, chunk: Any) -> bool:
    return mode == "updates" and isinstance(chunk, dict) and _INTERRUPT in chunk


def watched_turn(graph: Graph, payload: Any, config: RunnableConfig) -> Effect[TurnEnd]:
    """Run one turn as ``invoke`` does (same stream modes and output keys), watching for
    the root's stop chunk; the output is not needed, so it is not assembled."""
    keys = graph.output_channels

    def run() -> TurnEnd:
        stopped = False
        for mode, chunk in graph.stream(payload, config, stream_mode=_MODES, output_keys=keys):
            stopped = stopped or _stops(mode, chunk)
        return MAY_PAUSE if stopped else ENDED

    async def arun() -> TurnEnd:
        stopped = False
        async for mode, chunk in graph.astream(
            payload, config, stream_mode=_MODES, output_keys=keys
        ):
            stopped = stopped or _stops(mode, chunk)
        return MAY_PAUSE if stopped else ENDED

    return Effect(run, arun)
