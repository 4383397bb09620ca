"""Read SQLite files larger than the stdlib can memory-map, in a helper process.

Reading a ``SqliteSaver`` row's metadata walks the row's overflow pages (the
metadata column comes after the checkpoint blob). Memory-mapped, each page is a
memory access; but the SQLite that Python ships is compiled with a 2 GiB
mapping limit (``SQLITE_MAX_MMAP_SIZE``), so in a larger file every page past
2 GiB costs a system call, and a long thread's stored states (O(length²)
bytes) make that walk dominate.

`apsw <https://rogerbinns.github.io/apsw/>`_ bundles a SQLite built without
that limit. It must not run in this process: two copies of SQLite in one
process release each other's POSIX locks, a documented way to corrupt a
database the saver may be writing. So one helper process (a fresh interpreter
running this module, started on first need and kept for the life of the
program) opens the file read-only with apsw, maps it whole, and returns the
rows the in-process reader would; separate processes coordinate their locks as
SQLite intends. Requests and answers are pickled over the helper's stdin and
stdout. It is a plain subprocess, not ``multiprocessing``: a spawned worker
would re-run the user's main script. Any failure (apsw missing, the helper
dying) makes the caller read in process instead.
"""

from __future__ import annotations

import atexit
import os
import pickle
import subprocess
import sys
import threading
from importlib.util import find_spec
from typing import IO, Any

from lg_eval._describe import describe_error

HELPER_MMAP_BYTES = 1 << 40


class HelperFailed(RuntimeError):
    """The helper process could not read the file."""


class _Helper:
    """The running helper process, one request at a time."""

    def __init__(self) -> None:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
        self.process = subprocess.Popen(
            [sys.executable, "-W", "ignore", "-m", __name__],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
        )
        self.lock = threading.Lock()
        atexit.register(self.stop)

    def stop(self) -> None:
        """Close its stdin (it exits on end of input) and wait for it briefly."""
        if self.process.poll() is None:
            if self.process.stdin is not None:
                self.process.stdin.close()
            try:
                self.process.wait(timeout=2)
            except subprocess.TimeoutExpired:
                self.process.kill()
        if self.process.stdout is not None:
            self.process.stdout.close()

    def ask(self, file: str, thread_id: str) -> Any:
        stdin, stdout = self.process.stdin, self.process.stdout
        assert stdin is not None and stdout is not None
        with self.lock:
            pickle.dump((file, thread_id), stdin)
            stdin.flush()
            ok, value = pickle.load(stdout)
        if not ok:
            raise HelperFailed(value)
        return value


_helper: _Helper | None = None
_helper_lock = threading.Lock()


def available() -> bool:
    """Whether apsw is installed (checked without importing it here)."""
    return find_spec("apsw") is not None


def read_file(file: str, thread_id: str) -> Any:
    """The thread's rows of ``file``, read by the helper process (blocks until done)."""
    global _helper
    with _helper_lock:
        if _helper is None or _helper.process.poll() is not None:
            _helper = _Helper()
        helper = _helper
    try:
        return helper.ask(file, thread_id)
    except (OSError, EOFError, pickle.UnpicklingError) as exc:  # it died: start anew next time
        helper.process.kill()
        raise HelperFailed(f"the SQLite helper process stopped: {exc!r}") from exc


# --- the helper process -------------------------------------------------------------------

_connections: dict[str, tuple[tuple[int, int], Any]] = {}


def _open(file: str) -> Any:
    import apsw

    stat = os.stat(file)
    identity = (stat.st_dev, stat.st_ino)
    cached = _connections.get(file)
    if cached is not None and cached[0] == identity:
        return cached[1]
    conn = apsw.Connection(file, flags=apsw.SQLITE_OPEN_READONLY)
    conn.execute(f"PRAGMA mmap_size = {HELPER_MMAP_BYTES}")
    _connections[file] = (identity, conn)
    return conn


def _read(read_rows: Any, file: str, thread_id: str) -> Any:
    conn = _open(file)

    def open_blob(rowid: int) -> Any:
        return conn.blob_open("main", "checkpoints", "checkpoint", rowid, False)

    return read_rows(conn, thread_id, open_blob)


def _serve(requests: IO[bytes], answers: IO[bytes]) -> None:
    from lg_eval.extract.fast._sqlite import read_rows

    while True:
        try:
            file, thread_id = pickle.load(requests)
        except EOFError:  # the program closed our stdin: it is done
            return
        try:
            answer: tuple[bool, Any] = (True, _read(read_rows, file, thread_id))
        except Exception as exc:
            answer = (False, describe_error(exc))
        pickle.dump(answer, answers)
        answers.flush()


if __name__ == "__main__":
    protocol = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    sys.stdout = sys.stderr  # nothing else may write to the answers pipe
    _serve(sys.stdin.buffer, protocol)
