"""How a turn's run ended, seen while it runs, so the player reads the state only when needed.

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
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.constants import START, TAG_HIDDEN
from langgraph.pregel import Pregel

from lg_eval._effects import Effect
from lg_eval.play._types import Graph

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
