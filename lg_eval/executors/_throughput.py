"""Per-worker throughput: partitions and items each worker finished, and its busy seconds.

An executor records one entry per worker (``host:pid``, the process that ran the
partition) as each partition's result reaches the caller, so a progress display
can show how the work spreads over a cluster while it runs. A partition whose
worker died is recorded once, by the worker whose attempt came back.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Callable, Sized
from dataclasses import dataclass, replace
from typing import Any, Generic, TypeVar

P = TypeVar("P")
R = TypeVar("R")


def worker_id() -> str:
    """This process as a worker: ``host:pid``."""
    return f"{socket.gethostname()}:{os.getpid()}"


def items_in(partition: Any) -> int:
    """How many items a partition holds (its length; 1 for a partition that has none)."""
    return len(partition) if isinstance(partition, Sized) else 1


@dataclass(frozen=True)
class Timed(Generic[R]):
    """A partition's result as it leaves the worker: who ran it, how long, how many items."""

    worker: str
    busy_s: float
    items: int
    result: R


def timed_call(fn: Callable[[P], R], partition: P) -> Timed[R]:
    """``fn(partition)``, with the worker's id, the seconds it took and the partition's size."""
    started = time.perf_counter()
    result = fn(partition)
    return Timed(worker_id(), time.perf_counter() - started, items_in(partition), result)


@dataclass(frozen=True)
class WorkerThroughput:
    """One worker's totals so far."""

    worker: str
    partitions: int = 0
    items: int = 0
    busy_s: float = 0.0

    @property
    def items_per_s(self) -> float:
        """Items per busy second (0 before the first partition took any time)."""
        return self.items / self.busy_s if self.busy_s > 0 else 0.0


class Throughput:
    """Thread-safe totals by worker, updated by the executor as each partition finishes."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._workers: dict[str, WorkerThroughput] = {}

    def record(self, worker: str, items: int, busy_s: float) -> None:
        """Count one finished partition of ``items`` items that kept ``worker`` busy ``busy_s``."""
        with self._lock:
            now = self._workers.get(worker) or WorkerThroughput(worker)
            self._workers[worker] = replace(
                now,
                partitions=now.partitions + 1,
                items=now.items + items,
                busy_s=now.busy_s + busy_s,
            )

    def unwrap(self, timed: Timed[R]) -> R:
        """Record ``timed`` and return the partition's result."""
        self.record(timed.worker, timed.items, timed.busy_s)
        return timed.result

    def workers(self) -> list[WorkerThroughput]:
        """A snapshot, one entry per worker, in the order workers first finished a partition."""
        with self._lock:
            return list(self._workers.values())

    @property
    def items(self) -> int:
        """Items finished over all workers."""
        return sum(w.items for w in self.workers())

    def lines(self) -> list[str]:
        """One human-readable line per worker (what the CLI prints)."""
        return [
            f"{w.worker}: {w.partitions} partitions, {w.items} items, "
            f"{w.busy_s:.1f} s busy, {w.items_per_s:.1f}/s"
            for w in self.workers()
        ]
