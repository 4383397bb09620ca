"""Partitions as Ray tasks (``pip install 'lg-eval[ray]'``).

One Ray task per partition; results are fetched on the driver as tasks finish
(``ray.wait``), at most ``max_in_flight`` tasks submitted at once. ``fn`` must be
picklable (cloudpickle): a module-level function or a dataclass holding names and
URLs, not open connections; each worker opens what it needs itself.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

from lg_eval.errors import InvalidOptionError

P = TypeVar("P")
R = TypeVar("R")


def _ray() -> Any:
    try:
        import ray
    except ImportError as exc:
        raise InvalidOptionError("executor='ray' needs Ray: pip install 'lg-eval[ray]'.") from exc
    return ray


class RayExecutor:
    """Run partitions on Ray: ``address`` a cluster (``ray://host:10001``, ``auto``), or None
    for the running Ray of this process, else a new local one (``init`` kwargs are passed to
    ``ray.init``, e.g. ``num_cpus=2``)."""

    def __init__(
        self,
        address: str | None = None,
        *,
        max_in_flight: int | None = None,
        num_cpus_per_task: float = 1,
        **init: Any,
    ) -> None:
        self.address = address
        self.max_in_flight = max_in_flight
        self.num_cpus_per_task = num_cpus_per_task
        self._init = init

    def _start(self) -> Any:
        ray = _ray()
        if not ray.is_initialized():
            ray.init(address=self.address, include_dashboard=False, **self._init)
        return ray

    def map_partitions(self, fn: Callable[[P], R], partitions: Iterable[P]) -> Iterator[R]:
        ray = self._start()
        task = ray.remote(num_cpus=self.num_cpus_per_task)(_call)
        fn_ref = ray.put(fn)
        limit = self.max_in_flight or max(2, 2 * int(ray.cluster_resources().get("CPU", 1)))
        pending: list[Any] = []
        try:
            for partition in partitions:
                pending.append(task.remote(fn_ref, partition))
                if len(pending) >= limit:
                    done, pending = ray.wait(pending, num_returns=1)
                    for ref in done:
                        yield ray.get(ref)
            while pending:
                done, pending = ray.wait(pending, num_returns=1)
                for ref in done:
                    yield ray.get(ref)
        finally:
            for ref in pending:
                ray.cancel(ref)


def _call(fn: Callable[[Any], Any], partition: Any) -> Any:
    return fn(partition)


__all__ = ["RayExecutor"]
