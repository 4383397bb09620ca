"""Partitions as Ray tasks (``pip install 'lg-eval[ray]'``).

One Ray task per partition; results are fetched on the driver as tasks finish
(``ray.wait``), at most ``max_in_flight`` tasks submitted at once. ``fn`` must be
picklable (cloudpickle): a module-level function or a dataclass holding names and
URLs, not open connections; each worker opens what it needs itself.

A task whose worker process dies (killed, out of memory, its node lost) is run
again by Ray, up to ``max_retries`` times (Ray's ``max_retries`` for system
failures); an exception raised by ``fn`` itself is not retried
(``retry_exceptions=False``) and is raised from :meth:`RayExecutor.map_partitions`
on the driver. So ``fn`` must be safe to run twice on one partition: the driver
only ever receives one attempt's result, but a dead attempt may have done part of
the work (the experiment runner deletes a case's thread before playing it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Annotated, Any, TypeVar

from annotated_types import Gt
from pydantic import Field, Strict

from lg_eval._arguments import Count, Size, validated
from lg_eval.errors import InvalidOptionError
from lg_eval.executors._throughput import Throughput, Timed, timed_call

P = TypeVar("P")
R = TypeVar("R")


def import_ray() -> Any:
    try:
        import ray
    except ImportError as exc:
        raise InvalidOptionError("executor='ray' needs Ray: pip install 'lg-eval[ray]'.") from exc
    return ray


class RayExecutor:
    """Run partitions on Ray: ``address`` a cluster (``ray://host:10001``, ``auto``), or None
    for the running Ray of this process, else a new local one (``init`` kwargs are passed to
    ``ray.init``, e.g. ``num_cpus=2``).

    ``max_retries``: how often a partition whose worker died is run again (then the
    driver raises Ray's ``WorkerCrashedError``). :attr:`throughput` counts, per worker
    (``host:pid``), the partitions and items it finished and its busy seconds.
    """

    @validated
    def __init__(
        self,
        address: str | None = None,
        *,
        max_in_flight: Count | None = None,
        num_cpus_per_task: Annotated[float, Strict(), Gt(0), Field(allow_inf_nan=False)] = 1,
        max_retries: Size = 3,
        **init: Any,
    ) -> None:
        import_ray()  # a missing install is told here, before a run is recorded
        self.address = address
        self.max_in_flight = max_in_flight
        self.num_cpus_per_task = num_cpus_per_task
        self.max_retries = max_retries
        self.throughput = Throughput()
        self._init = init

    def start(self) -> Any:
        """Connect to (or start) Ray as configured, once; return the ``ray`` module."""
        ray = import_ray()
        if not ray.is_initialized():
            ray.init(address=self.address, include_dashboard=False, **self._init)
        return ray

    def map_partitions(self, fn: Callable[[P], R], partitions: Iterable[P]) -> Iterator[R]:
        ray = self.start()
        task = ray.remote(
            num_cpus=self.num_cpus_per_task, max_retries=self.max_retries, retry_exceptions=False
        )(_call)
        unwrap = self.throughput.unwrap
        fn_ref = ray.put(fn)
        limit = self.max_in_flight or max(2, 2 * int(ray.cluster_resources().get("CPU", 1)))
        pending: list[Any] = []
        try:
            for partition in partitions:
                pending.append(task.remote(fn_ref, partition))
                if len(pending) >= limit:
                    done, pending = ray.wait(pending, num_returns=1)
                    for ref in done:
                        yield unwrap(ray.get(ref))
            while pending:
                done, pending = ray.wait(pending, num_returns=1)
                for ref in done:
                    yield unwrap(ray.get(ref))
        finally:
            for ref in pending:
                ray.cancel(ref)


def _call(fn: Callable[[Any], Any], partition: Any) -> Timed[Any]:
    return timed_call(fn, partition)
