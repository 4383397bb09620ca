"""Real SQLite savers whose writes can be held back, and that count their reads.

LangGraph saves a task's writes in the background, not ordered with the checkpoints after
them; on a loaded machine a write lands late. These savers stand for that machine: each
``put_writes`` waits while ``hold(reads, config, writes, waited)`` is true (``waited``: the
seconds it has waited so far), and ``reads`` counts ``get_tuple`` calls by checkpoint id.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import aiosqlite
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

Reads = Counter[str | None]
Hold = Callable[[Reads, RunnableConfig, Sequence[tuple[str, Any]], float], bool]
TICK = 0.001


def checkpoint_of(config: RunnableConfig) -> str | None:
    return (config.get("configurable") or {}).get("checkpoint_id")


class HeldSqliteSaver(SqliteSaver):
    """A SqliteSaver whose writes wait while ``hold`` says so (none is held by default)."""

    def __init__(self, conn: sqlite3.Connection, hold: Hold | None = None) -> None:
        super().__init__(conn)
        self.hold = hold
        self.reads: Reads = Counter()

    def get_tuple(self, config: RunnableConfig) -> Any:
        self.reads[checkpoint_of(config)] += 1
        return super().get_tuple(config)

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        start = time.monotonic()
        while self.hold and self.hold(self.reads, config, writes, time.monotonic() - start):
            time.sleep(TICK)
        super().put_writes(config, writes, task_id, task_path)


class HeldAsyncSqliteSaver(AsyncSqliteSaver):
    """:class:`HeldSqliteSaver` for ``ainvoke``."""

    def __init__(self, conn: aiosqlite.Connection, hold: Hold | None = None) -> None:
        super().__init__(conn)
        self.hold = hold
        self.reads: Reads = Counter()

    async def aget_tuple(self, config: RunnableConfig) -> Any:
        self.reads[checkpoint_of(config)] += 1
        return await super().aget_tuple(config)

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        start = time.monotonic()
        while self.hold and self.hold(self.reads, config, writes, time.monotonic() - start):
            await asyncio.sleep(TICK)
        await super().aput_writes(config, writes, task_id, task_path)
