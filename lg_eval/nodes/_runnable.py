"""A LangGraph node written once as a core, runnable by ``invoke`` and ``ainvoke``.

A plain function node is either sync or async, so a node that must serve both
sync graphs (``graph.invoke``) and async graphs (``graph.ainvoke``, async
checkpointers, async evaluators) is a :class:`~langchain_core.runnables.Runnable`
with both entry points. :class:`CoreNode` holds one core generator (see
:mod:`lg_eval._effects`) and drives it with blocking calls or with awaits. It
opens no trace run of its own: LangGraph's run for the node (named after it,
with the node's output) is what shows up in LangSmith, and model calls made by
evaluators (LLM judges) nest under it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langchain_core.runnables import Runnable, RunnableConfig, ensure_config

from lg_eval._effects import Core, adrive, drive

NodeCore = Callable[[Any, RunnableConfig], Core[Any]]


class CoreNode(Runnable[Any, Any]):
    """A graph node whose sync and async entry points drive the same core."""

    def __init__(self, core: NodeCore, *, name: str) -> None:
        self._core = core
        self.name = name

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        return drive(self._core(input, ensure_config(config)))

    async def ainvoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        return await adrive(self._core(input, ensure_config(config)))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"
