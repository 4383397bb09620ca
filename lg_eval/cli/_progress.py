"""A long command on the driver: its progress while it runs, and its end on Ctrl-C.

Progress for ``run`` and ``sweep``: a live display on a terminal, plain lines in a log,
nothing with ``--quiet``; with Ray, the throughput of every worker too.

The executor's :class:`~lg_eval.executors.Throughput` is read each time the run reports
progress (it is updated as each partition comes back), so the worker lines follow the
partitions, not a timer. In a log, the worker lines are printed only when another
partition has finished since they were last printed.

Ctrl-C and SIGTERM during ``run``, ``sweep`` and ``replay``: one line and exit 130.
Inside :func:`interruptible`, SIGTERM does what Ctrl-C does: it calls the handler SIGINT
has at that moment, which is the event loop's while an experiment runs (its main task is
cancelled and the run's record stored as ``interrupted``) and Python's own otherwise (a
``KeyboardInterrupt``). Either way what was finished stays stored, and the command then
prints one line (interrupted, how much is stored, and the exact command that resumes: the
same arguments, ``--run-id`` set to the run's id) and exits 130, the shell's code for a
command ended by Ctrl-C.

The command line is the one ``lg-eval`` was given (:class:`lg_eval.cli.LazyGroup` keeps
it), shown with secrets hidden: an ``--api-key`` or ``--header`` value as ``***`` and a
URL's password redacted.
"""

from __future__ import annotations

import contextlib
import shlex
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import click
from rich.console import Group
from rich.live import Live
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from lg_eval._urls import redact_url
from lg_eval.cli._common import INTERRUPTED, fail, interactive, say, stderr
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


ARGV_KEY = "lg_eval.argv"
"""Where the root group keeps the arguments it was given (``click.Context.meta``)."""
_SECRET_OPTIONS = frozenset({"--api-key", "--header"})
_HIDDEN = "***"


@contextlib.contextmanager
def interruptible(what: Callable[[], str], run_id: str) -> Iterator[None]:
    """Run the body with SIGTERM acting as Ctrl-C; on either, fail with ``interrupted:
    {what()}; resume with: {command}`` and exit code 130. ``what()`` says how much is
    stored (it is called after the body has unwound, so the run's record is written)."""
    try:
        with sigterm_as_ctrl_c():
            yield
    except KeyboardInterrupt:
        try:
            stored = what()
        except Exception:  # the store itself may be what went away
            stored = "what was finished is stored"
        fail(f"interrupted: {stored}; resume with: {resume_command(run_id)}", INTERRUPTED)


@contextlib.contextmanager
def sigterm_as_ctrl_c() -> Iterator[None]:
    """Inside, SIGTERM calls SIGINT's current handler (see the module); the handler it
    had is put back on exit. Off the main thread, where Python sets no handler, nothing
    changes."""
    previous = _terminate_as_interrupt()
    try:
        yield
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def stored_in(store: str | None, run_id: str, unit: str, *, of_planned: bool) -> str:
    """``"5 of 20 cases stored in run r1"``: what the store holds of the run (``of_planned``:
    out of the cases the run planned)."""
    from lg_eval.experiments import open_store

    with open_store(store) as results:
        info = results.run_info(run_id)
        count = 0 if info is None else len(results.finished(run_id))
    planned = f" of {info.cases}" if of_planned and info is not None and info.cases else ""
    return f"{count}{planned} {unit} stored in run {run_id}"


def resume_command(run_id: str) -> str:
    """``lg-eval`` with the arguments it was given, ``--run-id`` set to ``run_id``, secrets
    hidden; quoted for a POSIX shell."""
    args = _given_arguments()
    kept: list[str] = []
    skip = False
    for arg in args:
        if skip:
            skip = False
            continue
        if arg == "--run-id":
            skip = True
            continue
        if arg.startswith("--run-id="):
            continue
        kept.append(arg)
    shown = _hidden(kept)
    return shlex.join(["lg-eval", *shown, "--run-id", run_id])


def _given_arguments() -> list[str]:
    context = click.get_current_context(silent=True)
    given = None if context is None else context.meta.get(ARGV_KEY)
    return list(given) if given is not None else sys.argv[1:]


def _hidden(args: list[str]) -> list[str]:
    """``args`` with the values of secret options replaced and URL passwords redacted."""
    shown: list[str] = []
    secret_next = False
    for arg in args:
        if secret_next:
            shown.append(_HIDDEN)
            secret_next = False
            continue
        option, equals, _ = arg.partition("=")
        if option in _SECRET_OPTIONS:
            if equals:
                shown.append(f"{option}={_HIDDEN}")
            else:
                shown.append(arg)
                secret_next = True
            continue
        shown.append(redact_url(arg) if "://" in arg else arg)
    return shown


def _terminate_as_interrupt() -> Any:
    """Make SIGTERM call SIGINT's current handler; return the handler it replaced (None
    off the main thread, where Python cannot set handlers)."""
    if threading.current_thread() is not threading.main_thread():
        return None

    def as_interrupt(signum: int, frame: Any) -> None:
        handler = signal.getsignal(signal.SIGINT)
        if callable(handler):
            handler(signal.SIGINT, frame)
        else:  # SIG_IGN or SIG_DFL: Ctrl-C would not raise either; stop as Python does
            raise KeyboardInterrupt

    return signal.signal(signal.SIGTERM, as_interrupt)
