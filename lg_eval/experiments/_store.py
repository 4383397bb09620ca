"""The results store: runs, case results and score rows, in SQLite or Postgres.

Six tables (the same DDL on both engines)::

    lg_eval_runs    run_id PK, dataset, dataset_hash, status, started_at, finished_at,
                    info (RunInfo JSON)
    lg_eval_cases   (run_id, case_id, repetition) PK, ordinal, status, latency_s, tokens,
                    cost, model_calls, finished_at, result (CaseResult JSON without scores)
    lg_eval_scores  (run_id, case_id, repetition, idx) PK, evaluator, key, score, passed,
                    row (ScoreRow JSON)
    lg_eval_leases  run_id PK, host, pid, token, expires_at (a run's lease: ._lifecycle)
    lg_eval_labels  (key, run_id, case_id, repetition, thread_id, turn, item, labeler) PK,
                    verdict, score, labeled_at, label (a person's Label JSON; written and
                    read by :mod:`lg_eval.labels`)
    lg_eval_schema  id PK (1), version (set on create, an older store migrated on open,
                    a newer one refused: :mod:`._database`, which holds the DDL)

Rows are only ever inserted (``ON CONFLICT DO NOTHING``: the key is the case's identity,
so a result is stored at most once) and each :meth:`ResultStore.write` is one transaction,
so a case is in the store whole or not at all; SQLite files are ``0600`` in ``0700``, WAL.

A run that holds its run id's lease fences the store (:meth:`ResultStore.fence`): every
transaction that writes the run's rows first checks, inside that transaction, that the
lease is still the run's, so a run that lost it (paused past its expiry while another run
took the id over) stops before it writes anything.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, closing, nullcontext
from types import TracebackType
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, ValidationError

from lg_eval._arguments import kind, validated
from lg_eval._urls import redact_url
from lg_eval._visible import visible
from lg_eval.errors import InvalidOptionError, StoreError
from lg_eval.experiments._compare import CaseCounts, Latencies
from lg_eval.experiments._database import connect, driver_errors, prepare, sqlite_path
from lg_eval.experiments._results import (
    CaseResult,
    ExperimentRun,
    ResultsView,
    RunInfo,
    ScoreRow,
)
from lg_eval.stats import RateMoments

DEFAULT_STORE = "sqlite:///.lg_eval/results.sqlite"

Read = Callable[[str, Sequence[Any]], list[tuple[Any, ...]]]
"""Run a ``SELECT`` (``?`` placeholders) inside the transaction under way."""
Guard = Callable[[Read], None]
"""A fence's check: raises when the run must not write (its lease is no longer its own)."""

_INSERT_CASE = (
    "INSERT INTO lg_eval_cases (run_id, case_id, repetition, ordinal, status, latency_s, tokens,"
    " cost, model_calls, finished_at, result) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
    " ON CONFLICT DO NOTHING"
)
_INSERT_SCORE = (
    "INSERT INTO lg_eval_scores (run_id, case_id, repetition, idx, evaluator, key, score,"
    " passed, row) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING"
)


class ResultStore:
    """Append-only experiment results over one DB-API connection (SQLite or psycopg)."""

    def __init__(
        self,
        connection: Any,
        *,
        url: str,
        postgres: bool = False,
        errors: tuple[type[BaseException], ...] | None = None,
    ) -> None:
        self._conn = connection
        self._postgres = postgres
        self._lock = threading.Lock()
        self._raw_url = url  # only for scrubbing driver messages; never shown
        self._errors = errors if errors is not None else _driver_errors(postgres)
        self._fences: dict[str, Guard] = {}
        self.url = redact_url(url)
        with self._lock, self._guard():
            self.opened_version = prepare(connection, postgres=postgres, url=self.url)
            self._where = url if postgres else _sqlite_file(connection, url)
            """The schema version the store had when opened (None: created now); it is
            :data:`~lg_eval.experiments._database.SCHEMA_VERSION` from here on."""

    @property
    def postgres(self) -> bool:
        """Whether the store is a Postgres database (else SQLite): for SQL written per engine."""
        return self._postgres

    # --- writing -----------------------------------------------------------------------------

    def fence(self, run_id: str, guard: Guard | None) -> None:
        """From now on, check ``guard`` at the start of every transaction that writes
        ``run_id``'s rows (None: stop checking). The check runs inside the transaction,
        after it took the write lock (SQLite ``BEGIN IMMEDIATE``) or with the rows it reads
        locked (Postgres ``FOR SHARE``, appended by the guard), so nothing can change what
        it read before the transaction commits."""
        with self._lock:
            if guard is None:
                self._fences.pop(run_id, None)
            else:
                self._fences[run_id] = guard

    def _fenced(self, cursor: Any, run_ids: Sequence[str]) -> None:
        """Begin the write transaction and run the guards of ``run_ids`` in it."""
        fences = self._fences
        guards = [fences[run_id] for run_id in dict.fromkeys(run_ids) if run_id in fences]
        if not guards:
            return
        if not self._postgres and not self._conn.in_transaction:
            cursor.execute("BEGIN IMMEDIATE")  # the write lock first: what is read stays true

        def read(statement: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
            return list(cursor.execute(self._sql(statement), params).fetchall())

        for guard in guards:
            guard(read)

    def begin_run(self, info: RunInfo) -> tuple[RunInfo, bool]:
        """Record a run as running; ``(info, resumed)``: an existing run keeps its start time.

        Raises:
            StoreError: the run id exists for another dataset or another version of it.
        """
        existing = self.run_info(info.run_id)
        if existing is None:
            self._execute(
                "INSERT INTO lg_eval_runs (run_id, dataset, dataset_hash, status, started_at,"
                " finished_at, info) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (info.run_id, info.dataset, info.dataset_hash, info.status,
                 info.started_at.isoformat(), None, info.model_dump_json()),
                run_id=info.run_id,
            )  # fmt: skip
            return info, False
        if (existing.dataset, existing.dataset_hash) != (info.dataset, info.dataset_hash):
            raise StoreError(
                f"Run {info.run_id!r} in {self.url} was started on dataset {existing.dataset!r} "
                f"(hash {existing.dataset_hash[:12]}), not {info.dataset!r} (hash "
                f"{info.dataset_hash[:12]}); resume it with that dataset or choose a new run_id."
            )
        resumed = info.model_copy(update={"started_at": existing.started_at, "status": "running"})
        self.update_run(resumed)
        return resumed, True

    def update_run(self, info: RunInfo) -> None:
        """Store ``info`` as the run's record (status, finish time, config)."""
        finished = info.finished_at.isoformat() if info.finished_at else None
        self._execute(
            "UPDATE lg_eval_runs SET status = ?, finished_at = ?, info = ? WHERE run_id = ?",
            (info.status, finished, info.model_dump_json(), info.run_id),
            run_id=info.run_id,
        )

    def write(
        self,
        results: Sequence[tuple[int, CaseResult]],
        *,
        beside: Sequence[tuple[str, Sequence[Sequence[Any]]]] = (),
    ) -> None:
        """Insert finished cases (``(ordinal in the dataset, result)``) in one transaction.

        ``beside``: ``(statement, rows)`` of a table kept beside the store's own (a sweep's
        incremental state, see :meth:`execute_many`), run first in the same transaction, so
        those rows and the results are stored together or not at all.
        """
        if not results:
            return
        cases, scores = [], []
        for ordinal, result in results:
            key = (result.run_id, result.case_id, result.repetition)
            finished = result.finished_at.isoformat() if result.finished_at else None
            cases.append(
                (*key, ordinal, result.status, result.latency_s, result.tokens, result.cost,
                 result.model_calls, finished, result.model_dump_json(exclude={"scores"}))
            )  # fmt: skip
            for idx, row in enumerate(result.scores):
                passed = None if row.passed is None else int(row.passed)
                scores.append(
                    (*key, idx, row.evaluator, row.key, _number(row.score), passed,
                     row.model_dump_json())
                )  # fmt: skip
        with self._lock, self._guard():
            try:
                cursor = self._conn.cursor()
                self._fenced(cursor, [result.run_id for _, result in results])
                for statement, rows in beside:
                    cursor.executemany(self._sql(statement), rows)
                cursor.executemany(self._sql(_INSERT_CASE), cases)
                if scores:
                    cursor.executemany(self._sql(_INSERT_SCORE), scores)
                self._conn.commit()
            except BaseException:
                self._conn.rollback()
                raise

    # --- reading -----------------------------------------------------------------------------

    def run_info(self, run_id: str) -> RunInfo | None:
        """The stored record of ``run_id``, or None.

        Raises:
            StoreError: the stored record does not read as a run record (:func:`stored`).
        """
        rows = self._query("SELECT info FROM lg_eval_runs WHERE run_id = ?", (run_id,))
        return stored(RunInfo, rows[0][0], self.url, run_id, "record") if rows else None

    def runs(self) -> list[RunInfo]:
        """Every stored run, oldest first."""
        rows = self._query("SELECT run_id, info FROM lg_eval_runs ORDER BY started_at, run_id", ())
        return [stored(RunInfo, info, self.url, str(run_id), "record") for run_id, info in rows]

    def finished(self, run_id: str) -> dict[tuple[str, int], str]:
        """The status of every result stored for ``run_id``, by ``(case_id, repetition)``."""
        rows = self._query(
            "SELECT case_id, repetition, status FROM lg_eval_cases WHERE run_id = ?", (run_id,)
        )
        return {(case_id, int(repetition)): status for case_id, repetition, status in rows}

    def load_run(self, run_id: str) -> ExperimentRun:
        """The run and its results, in dataset order then repetition.

        Raises:
            StoreError: no run ``run_id`` is stored (the message lists the latest ids).
        """
        info = self.run_info(run_id)
        if info is None:
            known = ", ".join(i.run_id for i in self.runs()[-5:]) or "none"
            raise StoreError(f"No run {run_id!r} in {self.url}; latest runs: {known}.")
        scores = grouped_scores(
            self._query(
                "SELECT case_id, repetition, row FROM lg_eval_scores WHERE run_id = ?"
                " ORDER BY case_id, repetition, idx",
                (run_id,),
            ),
            self.url,
            run_id,
        )
        rows = self._query(
            "SELECT case_id, repetition, result FROM lg_eval_cases WHERE run_id = ?"
            " ORDER BY ordinal, repetition",
            (run_id,),
        )
        results = list(with_scores(rows, scores, self.url, run_id))
        return ExperimentRun(info=info, results=results)

    def iter_results(self, run_id: str, *, batch: int = 500) -> Iterator[CaseResult]:
        """The results of ``run_id`` one by one, in the order of :meth:`load_run`, read in
        pages of ``batch`` cases (keyset on ``(ordinal, repetition)``, one query for the
        page's cases and one for their scores): memory is one page, whatever the run's size.

        Each page is its own read, so the store can be written to between pages; a
        generator left unfinished holds nothing open.

        Raises:
            InvalidOptionError: ``batch`` is below 1.
        """
        if batch < 1:
            raise InvalidOptionError(f"batch={batch}: at least 1.")
        after = (-1, -1)  # ordinals and repetitions start at 0
        while True:
            page = self._query(
                "SELECT ordinal, case_id, repetition, result FROM lg_eval_cases"
                " WHERE run_id = ? AND (ordinal > ? OR (ordinal = ? AND repetition > ?))"
                " ORDER BY ordinal, repetition LIMIT ?",
                (run_id, after[0], after[0], after[1], batch),
            )
            if not page:
                return
            scores = self._scores_of(run_id, sorted({str(row[1]) for row in page}))
            yield from with_scores([row[1:] for row in page], scores, self.url, run_id)
            if len(page) < batch:
                return
            after = (int(page[-1][0]), int(page[-1][2]))

    def _scores_of(
        self, run_id: str, case_ids: Sequence[str]
    ) -> dict[tuple[str, int], list[ScoreRow]]:
        marks = ", ".join("?" for _ in case_ids)
        return grouped_scores(
            self._query(
                "SELECT case_id, repetition, row FROM lg_eval_scores WHERE run_id = ?"
                f" AND case_id IN ({marks}) ORDER BY case_id, repetition, idx",
                (run_id, *case_ids),
            ),
            self.url,
            run_id,
        )

    def status_counts(self, run_id: str) -> dict[str, int]:
        """``{status: results}`` of ``run_id``, counted in SQL (statuses with no result absent)."""
        rows = self._query(
            "SELECT status, COUNT(*) FROM lg_eval_cases WHERE run_id = ? GROUP BY status",
            (run_id,),
        )
        return {str(status): int(n) for status, n in rows}

    def case_counts(self, run_id: str) -> CaseCounts:
        """``(cases, k, cases with a passed repetition, cases whose every repetition passed)``
        of ``run_id``, grouped by case in SQL (the inputs of pass@k and pass^k), equal to
        :func:`~lg_eval.experiments.case_counts` of its results."""
        rows = self._query(
            "SELECT COUNT(*), MAX(n), SUM(CASE WHEN p > 0 THEN 1 ELSE 0 END),"
            " SUM(CASE WHEN p = n THEN 1 ELSE 0 END), SUM(p), SUM(n), SUM(p * p), SUM(p * n),"
            " SUM(n * n) FROM (SELECT case_id, COUNT(*) AS n,"
            " SUM(CASE WHEN status = 'passed' THEN 1 ELSE 0 END) AS p FROM lg_eval_cases"
            " WHERE run_id = ? GROUP BY case_id) AS g",
            (run_id,),
        )
        cases, k, some, every, *sums = (int(value or 0) for value in rows[0])
        passed, results, passed_sq, cross, results_sq = sums
        passes = RateMoments(cases, passed, results, passed_sq, cross, results_sq, k)
        return CaseCounts(cases, k, some, every, passes)

    def latencies(self, run_id: str) -> Latencies:
        """p50, p95 and the maximum of ``run_id``'s latencies from SQL, equal to
        :func:`~lg_eval.experiments.latencies` of its results."""
        return Latencies(
            self.latency_percentile(run_id, 50),
            self.latency_percentile(run_id, 95),
            self.latency_max(run_id),
        )

    def latency_percentile(self, run_id: str, q: float) -> float | None:
        """The ``q``-th percentile (0-100) of ``run_id``'s latencies, linearly interpolated
        as :func:`~lg_eval.experiments.percentile` does, reading only the one or
        two ranked rows it needs from SQL; None for a run without results."""
        if not 0 <= q <= 100:
            raise InvalidOptionError(f"q={q}: a percentile in [0, 100].")
        total = self._query("SELECT COUNT(*) FROM lg_eval_cases WHERE run_id = ?", (run_id,))
        n = int(total[0][0])
        if n == 0:
            return None
        rank = (n - 1) * q / 100
        low = int(rank // 1)
        high = low if rank == low else low + 1
        rows = self._query(
            "SELECT latency_s FROM lg_eval_cases WHERE run_id = ? ORDER BY latency_s"
            " LIMIT ? OFFSET ?",
            (run_id, high - low + 1, low),
        )
        lo_value, hi_value = float(rows[0][0]), float(rows[-1][0])
        return lo_value + (hi_value - lo_value) * (rank - low)

    def latency_max(self, run_id: str) -> float | None:
        """The longest latency of ``run_id`` (None without results)."""
        rows = self._query("SELECT MAX(latency_s) FROM lg_eval_cases WHERE run_id = ?", (run_id,))
        return None if rows[0][0] is None else float(rows[0][0])

    def latest_runs(self, dataset: str, n: int = 10) -> list[ExperimentRun]:
        """The ``n`` most recent runs of ``dataset``, oldest first (for trend charts)."""
        rows = self._query(
            "SELECT run_id FROM lg_eval_runs WHERE dataset = ? ORDER BY started_at DESC, run_id"
            " DESC LIMIT ?",
            (dataset, n),
        )
        return [self.load_run(run_id) for (run_id,) in reversed(rows)]

    # --- plumbing ----------------------------------------------------------------------------

    def reopen(self) -> ResultStore:
        """Another store on the same database, over a connection of its own: for a thread
        that must not wait for this store's queries (a connection serves one at a time).

        Raises:
            StoreError: the database cannot be opened again.
        """
        return open_store(self._where)

    def stored_results(self, run_id: str, *, owned: bool) -> StoredResults:
        """``run_id``'s results as a view that reads them from this database whenever they
        are read (:class:`StoredResults`), counted now. ``owned``: this store is closed
        when the caller is done with it, so the view opens the database again for each
        read (by its absolute location); else it reads through this store."""
        counts = self.status_counts(run_id)
        where = self._where

        def source() -> AbstractContextManager[ResultStore]:
            if not owned:
                return nullcontext(self)
            file = None if self._postgres else sqlite_path(where)
            if file is not None and not file.exists():  # never a new, empty store instead
                raise StoreError(
                    f"The results store {self.url} is gone, so the results of run {run_id!r} "
                    "cannot be read: read run.results before deleting it."
                )
            return closing(open_store(where))

        return StoredResults(source, run_id, sum(counts.values()), counts.get("passed", 0))

    def close(self) -> None:
        with self._lock, self._guard():
            self._conn.close()

    def __enter__(self) -> ResultStore:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # --- tables kept beside the store's own (a sweep's incremental state) --------------

    def execute_many(
        self, statement: str, rows: Sequence[Sequence[Any]], *, run_id: str | None = None
    ) -> int:
        """Run ``statement`` (``?`` placeholders) once per row, in one transaction; the
        number of rows it changed.

        For tables other packages keep in the same database (a sweep's incremental
        state, the leases), so they share the store's connection, lock and placeholder
        style. An empty ``rows`` runs the statement once without parameters (DDL).
        ``run_id``: the run whose rows these are, checked by its fence (:meth:`fence`).
        """
        with self._lock, self._guard():
            try:
                cursor = self._conn.cursor()
                if run_id is not None:
                    self._fenced(cursor, [run_id])
                if rows:
                    cursor.executemany(self._sql(statement), rows)
                else:
                    cursor.execute(statement)
                changed = max(0, int(cursor.rowcount or 0))
                self._conn.commit()
            except BaseException:
                self._conn.rollback()
                raise
        return changed

    def query(self, statement: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        """The rows ``statement`` (``?`` placeholders) selects, read in its own transaction."""
        return self._query(statement, params)

    def _sql(self, statement: str) -> str:
        return statement.replace("?", "%s") if self._postgres else statement

    def _guard(self) -> Any:
        """Driver errors inside as a StoreError naming the store (see :mod:`._database`)."""
        return driver_errors(self._raw_url, self._errors)

    def _execute(self, statement: str, params: Sequence[Any], *, run_id: str) -> None:
        with self._lock, self._guard():
            try:
                cursor = self._conn.cursor()
                self._fenced(cursor, [run_id])
                cursor.execute(self._sql(statement), params)
                self._conn.commit()
            except BaseException:
                self._conn.rollback()
                raise

    def _query(self, statement: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        with self._lock, self._guard():
            try:
                return list(self._conn.execute(self._sql(statement), params).fetchall())
            finally:
                if self._postgres:  # end the read transaction, also one a failed read aborted
                    self._conn.rollback()


M = TypeVar("M", bound=BaseModel)


def stored(model: type[M], text: Any, store: str, run_id: str, row: str) -> M:
    """A JSON column of the store read as ``model``.

    A row that does not parse or validate (changed by hand, written by another program, cut
    short on a disk) is a :class:`StoreError` naming the store, the run and the row, and
    what is wrong where in it; never its content, which a stranger may have written.
    """
    try:
        return model.model_validate_json(text)
    except ValidationError as exc:
        problems = exc.errors(include_input=False, include_url=False)
        first = problems[0]
        where = ".".join(str(part) for part in first["loc"])
        at = f" at {visible(where)[:60]!r}" if where and first["type"] != "extra_forbidden" else ""
        more = f" (and {len(problems) - 1} more problems)" if len(problems) > 1 else ""
        raise StoreError(
            f"the results store {store} holds a {row} of run {run_id!r} that lg_eval cannot "
            f"read: {first['msg']}{at}{more}. It was changed or written by something else: "
            "restore the store from a backup, or delete the run."
        ) from None


def grouped_scores(
    rows: Sequence[Sequence[Any]], store: str, run_id: str
) -> dict[tuple[str, int], list[ScoreRow]]:
    """``(case_id, repetition, row)`` score rows of ``run_id`` as
    ``{(case_id, repetition): [ScoreRow]}`` (a row that does not read: :func:`stored`)."""
    scores: dict[tuple[str, int], list[ScoreRow]] = {}
    for case_id, repetition, row in rows:
        what = f"feedback row (case {str(case_id)!r}, repetition {repetition})"
        scores.setdefault((str(case_id), int(repetition)), []).append(
            stored(ScoreRow, row, store, run_id, what)
        )
    return scores


def with_scores(
    rows: Sequence[Sequence[Any]],
    scores: dict[tuple[str, int], list[ScoreRow]],
    store: str,
    run_id: str,
) -> Iterator[CaseResult]:
    """``(case_id, repetition, result)`` case rows of ``run_id`` as results holding their
    scores (a row that does not read: :func:`stored`)."""
    for case_id, repetition, data in rows:
        what = f"case result (case {str(case_id)!r}, repetition {repetition})"
        result = stored(CaseResult, data, store, run_id, what)
        result.scores = scores.get((str(case_id), int(repetition)), [])
        yield result


class StoredResults(ResultsView):
    """A stored run's results, read from the store page by page each time they are read
    (:meth:`ResultStore.iter_results`): nothing per case is held between reads."""

    def __init__(
        self,
        source: Callable[[], AbstractContextManager[ResultStore]],
        run_id: str,
        length: int,
        passed: int,
    ) -> None:
        super().__init__(length, passed)
        self._source = source
        self._run_id = run_id

    def __iter__(self) -> Iterator[CaseResult]:
        with self._source() as store:
            yield from store.iter_results(self._run_id)


def _sqlite_file(connection: Any, url: str) -> str:
    """The URL of the SQLite file ``connection`` has open, by its absolute path (the same
    database whatever the working directory is when it is opened again)."""
    for _, name, path in connection.execute("PRAGMA database_list").fetchall():
        if name == "main" and path:
            return f"sqlite:///{path}"
    return url


def _number(score: Any) -> float | None:
    return None if score is None else float(score)


def is_store_url(value: Any) -> bool:
    """Whether ``value`` can name a results store: a non-blank text or path (``123`` would
    otherwise become a file named ``123``)."""
    return isinstance(value, str | os.PathLike) and bool(str(value).strip())


StoreURL = Annotated[
    str | os.PathLike[str],
    kind(is_store_url, "a file path, sqlite:///file.sqlite or a postgresql:// URL"),
]
"""Where a results store is: a file path, ``sqlite:///...`` or ``postgresql://...``."""


@validated
def open_store(url: StoreURL | None = None) -> ResultStore:
    """The results store at ``url``: ``sqlite:///rel``, ``sqlite:////abs``, a file path,
    or ``postgresql://...``; default ``.lg_eval/results.sqlite``.

    Raises:
        StoreError: the store cannot be opened: unreachable, malformed URL, corrupt
            or not a database (the URL is shown without its password).
        InvalidOptionError: ``url`` cannot name a results store (no text or path, empty,
            ``memory://``, a libpq keyword DSN).
    """
    opened = connect(str(url) if url is not None else DEFAULT_STORE)
    try:
        return ResultStore(
            opened.connection, url=opened.url, postgres=opened.postgres, errors=opened.errors
        )
    except BaseException:
        opened.connection.close()
        raise


def _driver_errors(postgres: bool) -> tuple[type[BaseException], ...]:
    if not postgres:
        return (sqlite3.Error,)
    import psycopg

    return (psycopg.Error,)
