"""Threads of the guarded server's ``echo`` graph, made concurrently through langgraph-sdk.

Each thread gets a metadata ``batch`` so a test sweeps only its own threads of the
session's server. A turn is one real run (``runs.wait``): the server's own checkpoints. The
first run creates its thread (``if_not_exists="create"``), which then carries the run's
metadata beside the ``graph_id`` and ``assistant_id`` the server adds.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Sequence
from typing import Any

from langgraph_sdk import get_client, get_sync_client

from tests.server.guarded import KEY as GUARDED_KEY

CONCURRENCY = 25


def _turn(text: str) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": text}]}


async def _make(url: str, metadata: dict[str, Any], n: int, interrupt: bool) -> list[str]:
    client = get_client(url=url, api_key=GUARDED_KEY)
    gate = asyncio.Semaphore(CONCURRENCY)

    async def one() -> str:
        thread_id = str(uuid.uuid4())
        async with gate:  # one request: the run creates its thread, with the run's metadata
            await client.runs.wait(
                thread_id,
                "echo",
                input=_turn("hi"),
                metadata=metadata,
                if_not_exists="create",
                interrupt_before=["reply"] if interrupt else None,
            )
        return thread_id

    return list(await asyncio.gather(*(one() for _ in range(n))))


def make_threads(
    url: str, metadata: dict[str, Any], n: int, *, interrupt: bool = False
) -> list[str]:
    """``n`` threads with one turn each (stopped before ``reply`` with ``interrupt``)."""
    return asyncio.run(_make(url, metadata, n, interrupt))


async def _again(url: str, thread_ids: Sequence[str]) -> None:
    client = get_client(url=url, api_key=GUARDED_KEY)
    await asyncio.gather(*(client.runs.wait(t, "echo", input=_turn("again")) for t in thread_ids))


def another_turn(url: str, thread_ids: Sequence[str]) -> None:
    """One more turn on each thread: each gets newer checkpoints."""
    asyncio.run(_again(url, thread_ids))


def newest_checkpoints(url: str, thread_ids: Sequence[str]) -> dict[str, str]:
    """The server's own newest root checkpoint id of each thread (its state)."""
    client = get_sync_client(url=url, api_key=GUARDED_KEY)
    return {t: client.threads.get_state(t)["checkpoint"]["checkpoint_id"] for t in thread_ids}
