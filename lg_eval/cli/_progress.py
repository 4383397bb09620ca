"""Progress on the driver for ``run`` and ``sweep``: a live display on a terminal, plain
lines in a log, nothing with ``--quiet``; with Ray, the throughput of every worker too.

The executor's :class:`~lg_eval.executors.Throughput` is read each time the run reports
progress (it is updated as each partition comes back), so the worker lines follow the
partitions, not a timer. In a log, the worker lines are printed only when another
partition has finished since they were last printed.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from rich.console import Group
from rich.live import Live
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from lg_eval.cli._common import interactive, say, stderr
from lg_eval.errors import InvalidOptionError
from lg_eval.executors import Executor, Throughput

Update = Callable[[int, int | None, int, int], None]
"""``update(done, total or None when unknown, passed, failed)``."""


def build_executor(name: str, address: str | None) -> str | Executor:
    """``--executor`` as what ``run_experiment`` / ``sweep_threads`` take: ``"local"``, or a
    :class:`~lg_eval.executors._ray.RayExecutor` object (so its throughput can be shown)."""
    if name == "local":
        if address is not None:
            raise InvalidOptionError("--ray-address needs --executor ray.")
        return "local"
    if name == "ray":
        from lg_eval.executors._ray import RayExecutor

        return RayExecutor(address=address)
    raise InvalidOptionError(f"--executor {name!r}: use local or ray.")


def throughput_of(executor: str | Executor) -> Throughput | None:
    """The executor's per-worker throughput, shown only for Ray (one worker locally)."""
    if type(executor).__name__ != "RayExecutor":
        return None
    found = getattr(executor, "throughput", None)
    return found if isinstance(found, Throughput) else None


@contextlib.contextmanager
def progress_display(
    quiet: bool, unit: str, throughput: Throughput | None = None
) -> Iterator[Update | None]:
    """``update`` for a run's progress: None with ``quiet``, plain lines when stderr is not
    a terminal, a live bar (and a worker table, given ``throughput``) when it is."""
    if quiet:
        yield None
    elif not interactive():
        yield _Lines(unit, throughput).update
    else:
        with _live(unit, throughput) as update:
            yield update


@dataclass
class _Lines:
    unit: str
    throughput: Throughput | None
    partitions: int = 0

    def update(self, done: int, total: int | None, passed: int, failed: int) -> None:
        of = f"/{total}" if total is not None else f" {self.unit}"
        say(f"[{done}{of}] passed {passed}, not passed {failed}")
        if self.throughput is None:
            return
        workers = self.throughput.workers()
        partitions = sum(w.partitions for w in workers)
        if partitions != self.partitions:
            self.partitions = partitions
            for line in self.throughput.lines():
                say(f"  worker {line}")


@contextlib.contextmanager
def _live(unit: str, throughput: Throughput | None) -> Iterator[Update]:
    columns = (
        TextColumn(unit),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn(
            "[green]{task.fields[passed]} passed[/] [red]{task.fields[failed]} not passed[/]"
        ),
        TimeElapsedColumn(),
    )
    bar = Progress(*columns, console=stderr)
    task = bar.add_task(unit, total=None, passed=0, failed=0)

    def render() -> Group:
        if throughput is None:
            return Group(bar)
        table = Table("worker", "partitions", unit, "busy s", f"{unit}/s", box=None)
        for w in throughput.workers():
            table.add_row(
                Text(w.worker), str(w.partitions), str(w.items), f"{w.busy_s:.1f}",
                f"{w.items_per_s:.1f}",
            )  # fmt: skip
        return Group(bar, table)

    live = Live(get_renderable=render, console=stderr, transient=True, refresh_per_second=4)
    started = False

    def update(done: int, total: int | None, passed: int, failed: int) -> None:
        nonlocal started
        if not started:  # the bar appears with the first case: setup errors print alone
            live.start()
            started = True
        bar.update(task, completed=done, total=total, passed=passed, failed=failed)

    try:
        yield update
    finally:
        if started:
            live.stop()
