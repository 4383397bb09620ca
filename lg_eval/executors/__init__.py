"""Executors: run a function over partitions and stream the results back to one caller.

An executor knows nothing of graphs, cases or threads: the caller decides what a
partition holds and what the function returns; the caller (the driver) alone writes
what comes back. :class:`LocalExecutor` runs partitions in a thread pool of this
process; :class:`~lg_eval.executors._ray.RayExecutor` (the ``ray`` extra) runs them as
Ray tasks, one task per partition. Both count, per worker, what they finished in
``executor.throughput`` (:class:`~lg_eval.executors._throughput.Throughput`).
"""

from lg_eval.executors._base import Executor, get_executor
from lg_eval.executors._local import LocalExecutor
from lg_eval.executors._throughput import Throughput, WorkerThroughput

__all__ = ["Executor", "LocalExecutor", "Throughput", "WorkerThroughput", "get_executor"]
