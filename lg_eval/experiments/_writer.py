"""A background writer: finished cases go to the store in batches, off the runner's path.

The runner hands each finished case to :meth:`BatchWriter.put` and moves on; one
thread takes whatever has accumulated (up to ``batch`` cases) and writes it in
one transaction, so many quick cases cost a few commits and a slow commit never
holds up the cases being played. :meth:`close` writes what is left and re-raises
a write error, if there was one.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable

from lg_eval.experiments.results import CaseResult
from lg_eval.experiments.store import ResultStore

_STOP = None


class BatchWriter:
    """Writes ``(ordinal, result)`` pairs to ``store`` from one thread, batch by batch."""

    def __init__(
        self,
        store: ResultStore,
        *,
        batch: int = 64,
        on_written: Callable[[int], None] | None = None,
    ) -> None:
        self._store = store
        self._batch = batch
        self._on_written = on_written
        self._queue: queue.SimpleQueue[tuple[int, CaseResult] | None] = queue.SimpleQueue()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._loop, name="lg_eval-store", daemon=True)
        self._thread.start()

    def put(self, ordinal: int, result: CaseResult) -> None:
        if self._error is not None:
            raise self._error
        self._queue.put((ordinal, result))

    def close(self) -> None:
        """Write every queued case, stop the thread, raise its write error if any."""
        self._queue.put(_STOP)
        self._thread.join()
        if self._error is not None:
            raise self._error

    def _loop(self) -> None:
        stopping = False
        while not stopping:
            items = [self._queue.get()]
            while len(items) < self._batch:
                try:
                    items.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            stopping = _STOP in items
            pending = [item for item in items if item is not None]
            if not pending or self._error is not None:
                continue
            try:
                self._store.write(pending)
            except BaseException as exc:  # surfaced by put() / close()
                self._error = exc
            else:
                if self._on_written is not None:
                    self._on_written(len(pending))


__all__ = ["BatchWriter"]
