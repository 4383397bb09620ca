"""The executor contract: ``map_partitions(fn, partitions)`` yields ``fn(p)`` as each finishes."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Protocol, TypeVar, runtime_checkable

from lg_eval.errors import InvalidOptionError

P = TypeVar("P")
R = TypeVar("R")


@runtime_checkable
class Executor(Protocol):
    """Runs ``fn`` over partitions; results come back in completion order, not input order.

    ``partitions`` is consumed lazily, a bounded number in flight at once, so an
    iterator of partitions (streamed from a database) is never held in memory whole.
    An exception raised by ``fn`` is re-raised from the iterator.
    """

    def map_partitions(self, fn: Callable[[P], R], partitions: Iterable[P]) -> Iterator[R]: ...


def get_executor(name: str | Executor | None, *, address: str | None = None) -> Executor:
    """``"local"`` (default), ``"ray"`` (``address``: a cluster, else a local Ray), or an
    executor object, returned as is."""
    if name is None or name == "local":
        from lg_eval.executors._local import LocalExecutor

        return LocalExecutor()
    if name == "ray":
        from lg_eval.executors._ray import RayExecutor

        return RayExecutor(address=address)
    if isinstance(name, str):
        raise InvalidOptionError(f"executor={name!r}: use 'local', 'ray' or an Executor object.")
    if not callable(getattr(name, "map_partitions", None)):
        raise InvalidOptionError(f"executor {name!r} has no map_partitions(fn, partitions).")
    return name
