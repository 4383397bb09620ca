from __future__ import annotations

import itertools
import threading

import pytest

from lg_eval.errors import InvalidOptionError
from lg_eval.executors import Executor, LocalExecutor, get_executor


@pytest.mark.parametrize("workers", [1, 2, 4])
def test_every_partition_once(workers: int) -> None:
    ex = LocalExecutor(workers)
    assert isinstance(ex, Executor)
    out = list(ex.map_partitions(lambda p: sum(p), ([i, i] for i in range(50))))
    assert sorted(out) == [2 * i for i in range(50)]


def test_partitions_are_consumed_lazily() -> None:
    taken = itertools.count()
    seen = []

    def source():  # an endless stream: only a bounded number may be pulled ahead
        for i in taken:
            seen.append(i)
            yield i

    results = LocalExecutor(2, max_in_flight=3).map_partitions(lambda p: p, source())
    first = [next(results) for _ in range(5)]
    assert len(first) == 5 and len(seen) <= 5 + 3
    results.close()


def test_errors_are_raised_on_the_driver() -> None:
    lock = threading.Lock()

    def fn(p: int) -> int:
        with lock:
            if p == 3:
                raise ValueError("partition 3")
        return p

    with pytest.raises(ValueError, match="partition 3"):
        list(LocalExecutor(2).map_partitions(fn, range(10)))


def test_get_executor() -> None:
    assert isinstance(get_executor(None), LocalExecutor)
    custom = LocalExecutor(1)
    assert get_executor(custom) is custom
    with pytest.raises(InvalidOptionError):
        get_executor("dask")


def test_local_throughput_is_one_worker_counting_every_partition_and_item() -> None:
    from lg_eval.executors._throughput import worker_id

    ex = LocalExecutor(2)
    out = list(ex.map_partitions(len, ([0] * (i % 4 + 1) for i in range(20))))
    assert sum(out) == 50
    (only,) = ex.throughput.workers()
    assert (only.worker, only.partitions, only.items) == (worker_id(), 20, 50)
    assert only.busy_s >= 0
