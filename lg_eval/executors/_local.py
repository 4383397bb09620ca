"""Partitions in a thread pool of this process (the default executor)."""

from __future__ import annotations

import concurrent.futures as cf
from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

from lg_eval._arguments import Count, validated
from lg_eval.executors._throughput import Throughput, Timed, timed_call

P = TypeVar("P")
R = TypeVar("R")


class LocalExecutor:
    """``workers`` partitions at once in threads (``workers=1``: inline, in order).

    :attr:`throughput` counts what finished; the threads share one process, so they are
    one worker (``host:pid``) there.
    """

    @validated
    def __init__(self, workers: Count = 2, *, max_in_flight: Count | None = None) -> None:
        self.workers = workers
        self.max_in_flight = max_in_flight or 2 * workers
        self.throughput = Throughput()

    def map_partitions(self, fn: Callable[[P], R], partitions: Iterable[P]) -> Iterator[R]:
        unwrap = self.throughput.unwrap
        if self.workers == 1:
            for partition in partitions:
                yield unwrap(timed_call(fn, partition))
            return
        source = iter(partitions)
        with cf.ThreadPoolExecutor(self.workers, thread_name_prefix="lg-eval-part") as pool:
            pending: set[cf.Future[Timed[R]]] = set()
            try:
                for partition in source:
                    pending.add(pool.submit(timed_call, fn, partition))
                    if len(pending) >= self.max_in_flight:
                        done, pending = cf.wait(pending, return_when=cf.FIRST_COMPLETED)
                        for future in done:
                            yield unwrap(future.result())
                while pending:
                    done, pending = cf.wait(pending, return_when=cf.FIRST_COMPLETED)
                    for future in done:
                        yield unwrap(future.result())
            finally:
                for future in pending:
                    future.cancel()
