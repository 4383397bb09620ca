"""The player's I/O steps, as :mod:`lg_eval._effects` effects (blocking or awaited).

A state read, a state edit and a call of user code (a ``resume_fn``, a reviewer): the one
turn loop (:mod:`lg_eval.play._player`, which also runs the turns) and its answer sources
yield these, so the sync and async players are one core.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.types import StateSnapshot

from lg_eval._effects import Effect
from lg_eval.errors import InvalidOptionError
from lg_eval.play._types import Graph


def read_state(graph: Graph, config: RunnableConfig) -> Effect[StateSnapshot]:
    """The thread's state with its subgraphs (where pending interrupts are read)."""
    return Effect(
        lambda: graph.get_state(config, subgraphs=True),
        lambda: graph.aget_state(config, subgraphs=True),
    )


def update_state(
    graph: Graph, config: RunnableConfig, values: dict[str, Any], as_node: str | None
) -> Effect[Any]:
    """An ``update_state`` edit of the thread (an ``update`` turn)."""
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
