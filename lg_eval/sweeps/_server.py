"""A sweep's threads from a LangGraph Server: listed by its search, read by its history.

:func:`server_heads` turns :func:`lg_eval.server.list_server_threads` pages into the
sweep's ``(thread_id, checkpoint_id)`` heads, keeping those whose newest checkpoint is
in ``[since, until)``; :class:`ServerPartitionScorer` extracts each thread of a
partition from the server at its listed checkpoint and scores it with the sweep's
:class:`~lg_eval.sweeps._worker.PartitionScorer`.

A thread that cannot be extracted (deleted since it was listed, an unknown checkpoint)
becomes that thread's ``error`` result. A server that stops answering
(:class:`~lg_eval.errors.ServerError`, after the connection's retries) stops the sweep:
the partition in hand is not stored, so the next sweep scores its threads.
"""

from __future__ import annotations

import shlex
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from lg_eval._trajectory import ThreadTrajectory
from lg_eval.errors import ExtractionError, ServerError
from lg_eval.experiments import CaseResult
from lg_eval.server import ServerConnection, extract_server_thread, list_server_threads
from lg_eval.sweeps._listing import ThreadHead, checkpoint_time
from lg_eval.sweeps._worker import Partition, PartitionScorer, case_evaluators


def server_heads(
    server: ServerConnection,
    *,
    assistant_id: str | None = None,
    status: str | None = None,
    metadata: Mapping[str, Any] | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    page_size: int = 100,
) -> Iterator[list[ThreadHead]]:
    """Pages of the server threads to consider, oldest first, with their newest checkpoint."""
    pages = list_server_threads(
        server,
        assistant_id=assistant_id,
        status=status,
        metadata=metadata,
        updated_since=since,
        page_size=page_size,
    )
    for page in pages:
        heads = [
            ThreadHead(t.thread_id, t.checkpoint_id)
            for t in page
            if _within(checkpoint_time(t.checkpoint_id), since, until)
        ]
        if heads:
            yield heads


def _within(when: datetime, since: datetime | None, until: datetime | None) -> bool:
    return (since is None or when >= since) and (until is None or when < until)


@dataclass
class ServerPartitionScorer:
    """``scorer(partition) -> [(checkpoint_id, CaseResult)]``, threads read from ``server``.

    ``scorer.graph`` is the compiled graph the assistant serves (for its static
    breakpoints) or None."""

    server: ServerConnection
    scorer: PartitionScorer

    def __call__(self, partition: Partition) -> list[tuple[str, CaseResult]]:
        services = self.scorer.services
        if services is None:
            return self._score_all(partition)
        with services.active():
            return self._score_all(partition)

    def _score_all(self, partition: Partition) -> list[tuple[str, CaseResult]]:
        evaluators = case_evaluators(self.scorer.evaluators)
        scored: list[tuple[str, CaseResult]] = []
        for thread_id, checkpoint_id in partition:
            started = time.perf_counter()
            thread: ThreadTrajectory | Exception
            try:
                thread = extract_server_thread(
                    self.server, thread_id, checkpoint_id=checkpoint_id, graph=self.scorer.graph
                )
            except ExtractionError as exc:  # this thread only; a ServerError stops the sweep
                thread = exc
            took = time.perf_counter() - started
            scored.append((checkpoint_id, self.scorer.score(evaluators, thread_id, thread, took)))
        return scored


def cut_off(exc: ServerError, run_id: str, stored: int) -> ServerError:
    """``exc`` (the server stopped answering mid-sweep) saying what was kept and how to go on."""
    return type(exc)(
        f"{exc} The sweep stored {stored} thread(s) before that; the next sweep scores only "
        f"the rest (or resume this run with --run-id {shlex.quote(run_id)})."
    )
