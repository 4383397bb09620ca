"""Real SQLite savers whose writes can be held back, and that count their reads.

LangGraph saves a task's writes in the background, not ordered with the checkpoints after
them; on a loaded machine a write lands late. These savers stand for that machine: each
``put_writes`` waits while ``hold(reads, config, writes, waited)`` is true (``waited``: the
seconds it has waited so far), and ``reads`` counts ``get_tuple`` calls by checkpoint id.
``put_writes`` keeps LangGraph's own parameters (``task_id``, ``task_path``): the loop
passes ``task_path`` only to a saver whose signature names it.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import aiosqlite
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

Reads = Counter[str | None]
Writes = Sequence[tuple[str, Any]]
Hold = Callable[[Reads, RunnableConfig, Writes, float], bool]
TICK = 0.001


def checkpoint_of(config: RunnableConfig) -> str | None:
    return (config.get("configurable") or {}).get("checkpoint_id")


class Holding:
    """What both savers share: the ``hold`` rule, the read counts, and the ticks a write
    waits through."""

    def __init__(self, hold: Hold | None) -> None:
        self.hold = hold
        self.reads: Reads = Counter()

    def read(self, config: RunnableConfig) -> None:
        self.reads[checkpoint_of(config)] += 1

    def ticks(self, config: RunnableConfig, writes: Writes) -> Iterator[float]:
        start = time.monotonic()
        while self.hold and self.hold(self.reads, config, writes, time.monotonic() - start):
            yield TICK


class HeldSqliteSaver(SqliteSaver, Holding):
    """A SqliteSaver whose writes wait while ``hold`` says so (none is held by default)."""

    def __init__(self, conn: sqlite3.Connection, hold: Hold | None = None) -> None:
        SqliteSaver.__init__(self, conn)
        Holding.__init__(self, hold)

    def get_tuple(self, config: RunnableConfig) -> Any:
        self.read(config)
        return super().get_tuple(config)

    def put_writes(
        self, config: RunnableConfig, writes: Writes, task_id: str, task_path: str = ""
    ) -> None:
        for tick in self.ticks(config, writes):
            time.sleep(tick)
        super().put_writes(config, writes, task_id, task_path)


class HeldAsyncSqliteSaver(AsyncSqliteSaver, Holding):
    """:class:`HeldSqliteSaver` for ``ainvoke``."""

    def __init__(self, conn: aiosqlite.Connection, hold: Hold | None = None) -> None:
        AsyncSqliteSaver.__init__(self, conn)
        Holding.__init__(self, hold)

    async def aget_tuple(self, config: RunnableConfig) -> Any:
        self.read(config)
        return await super().aget_tuple(config)

    async def aput_writes(
        self, config: RunnableConfig, writes: Writes, task_id: str, task_path: str = ""
    ) -> None:
        for tick in self.ticks(config, writes):
            await asyncio.sleep(tick)
        await super().aput_writes(config, writes, task_id, task_path)
