"""A background writer: finished cases go to the store in group commits, off the runner's path.

The runner hands each finished case to :meth:`BatchWriter.put`, which returns a
future, and awaits that future before it takes its next case. One thread takes
whatever is queued the moment it is free (up to ``batch`` cases, without
waiting for more to arrive), writes it in one transaction and then settles
each case's future. Cases that finish while a commit is under way queue up
and share the next one, so many quick cases cost few commits and the store
keeps up however fast the cases come.

The guarantee this gives a killed run (``kill -9``, a crashed machine): a case
counts as in flight until its future is settled, that is until its rows are
committed, and a worker holds at most one case that is not yet stored (runs
whose scoring process stores the results do not use this writer, see
:mod:`._scoring_process`). A resumed run therefore re-runs
only the cases that were in flight, and never finds one half-stored (each write
is one transaction).
:meth:`close` writes what is still queued and re-raises a write error, if there
was one; a failed write also fails the futures of its cases.
"""

from __future__ import annotations

import queue
import threading
from concurrent.futures import Future

from lg_eval.experiments.results import CaseResult
from lg_eval.experiments.store import ResultStore

_Item = tuple[list[tuple[int, CaseResult]], "Future[None]"]


class BatchWriter:
    """Writes ``(ordinal, result)`` pairs to ``store`` from one thread, in group commits."""

    def __init__(self, store: ResultStore, *, batch: int = 256) -> None:
        self._store = store
        self._batch = batch
        self._queue: queue.SimpleQueue[_Item | None] = queue.SimpleQueue()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._loop, name="lg_eval-store", daemon=True)
        self._thread.start()

    def put(self, ordinal: int, result: CaseResult) -> Future[None]:
        """Queue ``result`` for the next commit; the future is settled once it is stored.

        Raises:
            BaseException: an earlier write failed (the store's own error).
        """
        return self.put_many([(ordinal, result)])

    def put_many(self, results: list[tuple[int, CaseResult]]) -> Future[None]:
        """Queue ``(ordinal, result)`` pairs for the same commit; one future for them all.

        Raises:
            BaseException: an earlier write failed (the store's own error).
        """
        if self._error is not None:
            raise self._error
        done: Future[None] = Future()
        self._queue.put((results, done))
        return done

    def close(self) -> None:
        """Write every queued case, stop the thread, raise its write error if any."""
        self._queue.put(None)
        self._thread.join()
        if self._error is not None:
            raise self._error

    def _loop(self) -> None:
        stopping = False
        while not stopping:
            items = [self._queue.get()]  # block for the first; take the rest without waiting
            while len(items) < self._batch:
                try:
                    items.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            stopping = None in items
            pending = [item for item in items if item is not None]
            if pending:
                self._commit(pending)

    def _commit(self, pending: list[_Item]) -> None:
        # Every queued case is written, even one whose waiter was cancelled (Ctrl-C): its
        # future is just not settled. The rest are marked running, so they can no longer
        # be cancelled between the commit and being settled.
        futures = [done for _, done in pending if done.set_running_or_notify_cancel()]
        error = self._error
        if error is None:
            try:
                self._store.write([each for results, _ in pending for each in results])
            except BaseException as exc:  # surfaced by the futures, put() and close()
                error = self._error = exc
        for done in futures:
            if error is None:
                done.set_result(None)
            else:
                done.set_exception(error)


__all__ = ["BatchWriter"]
