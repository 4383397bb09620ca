"""Helpers of the watch tests: a writer process to talk to, and what the store holds.

:class:`Writer` runs :mod:`tests.sweeps.writer` and waits for each reply, so a test knows
a change is committed before it polls (no sleeps). :func:`scored` reads, from the results
store, every ``(thread, checkpoint)`` a sweep scored, over all its runs, repeats included.
"""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
from pathlib import Path
from types import TracebackType
from typing import IO

from lg_eval.experiments import open_store

ROOT = Path(__file__).resolve().parents[2]
GRAPH = "tests.travel:graph"
POLICY = "tests.travel:policy"
HANG = 300.0
"""Seconds a reply may take before the test fails instead of hanging (a guard against a
dead writer, never a bound on how fast it is)."""


def environment() -> dict[str, str]:
    """This environment, with the repository importable (tests.*, graphs.*)."""
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYTHONPATH": path}


class Lines:
    """The lines of a child's stream, read by a thread as they come."""

    def __init__(self, stream: IO[str]) -> None:
        self._lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._read, args=(stream,), daemon=True).start()

    def _read(self, stream: IO[str]) -> None:
        for line in stream:
            self._lines.put(line)
        self._lines.put("")

    def next(self) -> str:
        """The next line ('' when the stream ended or nothing came within :data:`HANG`)."""
        try:
            line = self._lines.get(timeout=HANG)
        except queue.Empty:
            return ""
        if line:
            self.seen.append(line)
        return line

    def until(self, text: str) -> str:
        """The first line from here on that holds ``text``; fails with what was read."""
        while line := self.next():
            if text in line:
                return line
        raise AssertionError(f"no line with {text!r}; read: {''.join(self.seen)}")


class Writer:
    """A :mod:`tests.sweeps.writer` process on ``url``; ``writer(command, thread)`` sends
    a command and returns the checkpoint id its reply names."""

    def __init__(self, url: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.sweeps.writer", url],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            env=environment(),
        )
        assert self.process.stdout is not None
        self._lines = Lines(self.process.stdout)

    def __call__(self, command: str, thread_id: str) -> str:
        self.send(command, thread_id)
        return self.reply(command, thread_id)

    def send(self, command: str, thread_id: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(f"{command} {thread_id}\n")
        self.process.stdin.flush()

    def reply(self, command: str, thread_id: str) -> str:
        line = self._lines.next()
        words = line.split()
        if words[:2] != [command, thread_id]:
            self.process.kill()
            _, errors = self.process.communicate()
            raise AssertionError(f"writer replied {line!r} to {command} {thread_id}: {errors}")
        return words[2]

    def __enter__(self) -> Writer:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self.process.poll() is None and self.process.stdin is not None:
            self.process.stdin.write("quit\n")
            self.process.stdin.close()
        try:
            self.process.wait(timeout=HANG)
        finally:
            if self.process.poll() is None:
                self.process.kill()


def scored(store: str, sweep: str) -> list[tuple[str, str]]:
    """Every ``(thread_id, checkpoint_id)`` the sweep ``sweep`` stored a result for, over
    all its runs, sorted, repeats kept."""
    with open_store(store) as results:
        rows = results.query(
            "SELECT s.thread_id, s.checkpoint_id FROM lg_eval_sweep_threads s"
            " JOIN lg_eval_cases c ON c.run_id = s.run_id AND c.case_id = s.thread_id"
            " WHERE s.sweep = ?",
            (f"sweep:{sweep}",),
        )
    return sorted((str(t), str(c)) for t, c in rows)
