"""Kill this worker process once: how the Ray tests make a worker die mid-partition.

A Ray test starts Ray with ``LG_EVAL_KILL_DIR`` in the workers' environment (the
driver never has it). Once the test creates ``<dir>/armed``, the ``after``-th call
of :func:`die_once` in a worker process SIGKILLs that process, and only the first
process to get there (``<dir>/killed``, created exclusively, holds its ``host:pid``).
"""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path

from lg_eval.executors._throughput import worker_id

KILL_DIR = "LG_EVAL_KILL_DIR"
_calls = 0
_lock = threading.Lock()


def die_once(after: int = 1) -> None:
    """SIGKILL this process on its ``after``-th call once armed, if no process died yet."""
    global _calls
    where = os.environ.get(KILL_DIR)
    if not where or not (Path(where) / "armed").exists():
        return
    with _lock:
        _calls += 1
        if _calls < after:
            return
    try:
        fd = os.open(Path(where) / "killed", os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return
    os.write(fd, worker_id().encode())
    os.close(fd)
    os.kill(os.getpid(), signal.SIGKILL)


def arm(where: Path) -> None:
    """Let the next worker to reach :func:`die_once` die."""
    (where / "armed").touch()


def killed(where: Path) -> str | None:
    """The ``host:pid`` of the worker that died, or None."""
    path = where / "killed"
    return path.read_text() if path.exists() else None


def sum_with_pid(partition: list[int]) -> tuple[int, str]:
    """A partition function for the executor tests: the sum, and who computed it; the
    second call in a worker process dies once armed."""
    die_once(after=2)
    return sum(partition), worker_id()
