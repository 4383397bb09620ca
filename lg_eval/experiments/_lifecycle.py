"""One run's life in the results store: its run id leased, begun (or resumed), what is left,
counted, recorded.

Every way of running an experiment (cases played here, partitions played by an executor's
workers) and every sweep go through the same steps, so they live here once:
:meth:`RunLifecycle.begin` takes the run id's lease and records the run as running (an
existing run id resumes, keeping what is stored), :meth:`RunLifecycle.left` says which
case × repetition pairs still have to run, :attr:`RunLifecycle.counter` counts finished
cases and reports progress, and :meth:`RunLifecycle.recording` stores the run's final
record (``finished``, or ``interrupted`` when the run stopped on an error or Ctrl-C).

**The lease** (:class:`Lease`): one live run per run id in a results store.

Two processes running the same run id at once would both play the cases left and
store each other's half-finished work as their own. So a run takes a lease before it
touches the run's record: a row in ``lg_eval_leases`` (one of the store's tables)
naming its owner — a random token, and for messages its host and process id — and when
it expires. While the run lives a daemon thread renews the expiry every ``heartbeat``
seconds; the run deletes the row when it ends.

Ownership is the token, and liveness is the renewal: a second run on the same id gets
:class:`~lg_eval.errors.RunInUseError` naming the owner and the expiry, until the expiry
passes without a renewal (the owner was killed, paused or lost its store). The one
shortcut: when the owner ran in this very process namespace (same host, same boot, same
PID namespace, kept in the ``host`` column) and its process no longer exists, the lease
is taken at once (``kill -9`` then resume does not wait). A process id seen from another
PID namespace (a container with host networking has the same host name) says nothing, so
such an owner is presumed live until its lease expires. Taking over is a compare-and-set
on the old token, so of two runs racing for a stale lease exactly one wins.

A lease fences the store (:meth:`ResultStore.fence`): each of
the run's write transactions, and each renewal, checks that the lease is still its own. A
run paused past its expiry (``SIGSTOP``, a frozen VM) whose id another run took over meanwhile
gets :class:`~lg_eval.errors.LeaseLostError` at its next write and stores nothing more.

The expiry and heartbeat default to 30 s and 5 s; ``LG_EVAL_LEASE_TTL`` and
``LG_EVAL_LEASE_HEARTBEAT`` (seconds) change them, e.g. for tests. Expiry times come
from each host's clock, so hosts sharing a Postgres store should keep their clocks in
step to within the expiry.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import math
import os
import platform
import secrets
import shlex
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

from langgraph.checkpoint.base import BaseCheckpointSaver

from lg_eval._urls import parse_checkpointer_url, redact_url
from lg_eval.datasets import Dataset, dataset_hash
from lg_eval.errors import InvalidOptionError, LeaseLostError, RunInUseError, StoreError
from lg_eval.experiments._options import Progress, RunOptions
from lg_eval.experiments._results import (
    CaseResult,
    CaseStatus,
    ExperimentRun,
    RunInfo,
    RunStatus,
    scrub_secrets,
)
from lg_eval.experiments._store import Read, ResultStore

DEFAULT_CHECKPOINTER = parse_checkpointer_url(None).url
"""Where a run keeps its threads when given no checkpointer."""


@dataclass
class CaseCounter:
    """Finished cases of a run, counted as they finish (on the event loop or on the OS
    threads playing blocking cases), with ``progress`` told after each."""

    total: int
    progress: Progress | None
    stored: list[str] = field(default_factory=list)
    """The statuses of the cases a resumed run already holds."""
    done: int = 0
    passed: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.done = len(self.stored)
        self.passed = sum(status == "passed" for status in self.stored)

    def add(self, status: CaseStatus) -> None:
        """Count a finished case and report progress."""
        with self.lock:
            self.done += 1
            self.passed += status == "passed"
            if self.progress is not None:
                self.progress(self.done, self.total, self.passed, self.done - self.passed)


@dataclass
class RunLifecycle:
    """A run begun in ``store``: its record, whether it resumed, and its count of cases."""

    store: ResultStore
    info: RunInfo
    resumed: bool
    stored: dict[tuple[str, int], str]
    """The status of every case × repetition already stored for the run."""
    counter: CaseCounter
    lease: Lease

    @classmethod
    def begin(
        cls,
        store: ResultStore,
        info: RunInfo,
        progress: Progress | None,
        lease: Lease | None = None,
    ) -> RunLifecycle:
        """Take the lease on the run id (or keep ``lease``, taken on it already: a sweep
        holds it while it lists threads), then record the run described by ``info`` as
        running (resuming a stored one). The caller releases the lease with :meth:`release`
        (``recording`` does) even when it fails before recording.

        Raises:
            RunInUseError: another live run holds the run id.
            StoreError: the run id exists for another dataset or another version of it.
        """
        lease = lease or Lease.acquire(store, info.run_id)
        try:
            info, resumed = store.begin_run(info)
            stored = store.finished(info.run_id)
        except BaseException:
            lease.release()
            raise
        counter = CaseCounter(info.cases, progress, list(stored.values()))
        return cls(store, info, resumed, stored, counter, lease)

    def release(self) -> None:
        """Give up the run id's lease (idempotent)."""
        self.lease.release()

    def left(self, dataset: Dataset, repetitions: int) -> list[tuple[int, int]]:
        """``(ordinal of the case in the dataset, repetition)`` for every pair not stored yet,
        in dataset order then repetition."""
        return [
            (ordinal, repetition)
            for ordinal, case_id in enumerate(dataset.case_ids())
            for repetition in range(repetitions)
            if (case_id, repetition) not in self.stored
        ]

    @contextmanager
    def recording(
        self,
        config: Callable[[], Mapping[str, Any]],
        fields: Callable[[], Mapping[str, Any]] = dict,
    ) -> Iterator[None]:
        """Run the body, then store the run's record: ``finished`` when the body returned,
        ``interrupted`` when it raised (re-raised), with ``config()`` merged into its config
        (what the run learned: judge cache and limiter statistics, the executor) and the
        record's other ``fields()`` set (a sweep's count of the threads it scored)."""
        status: RunStatus = "interrupted"
        try:
            with resumable(self.info.run_id):
                yield
            status = "finished"
        finally:
            done = self.info.model_copy(
                update={
                    "status": status,
                    "finished_at": datetime.now(UTC),
                    "config": {**self.info.config, **config()},
                    **fields(),
                }
            )
            try:
                with resumable(self.info.run_id):
                    self.store.update_run(done)
            finally:
                self.release()

    def result(self, *, owned: bool) -> ExperimentRun:
        """The run as stored. Up to :data:`HELD_RESULTS` results are read back into a list;
        a larger run's results are a view that reads them from the store whenever they are
        read, so nothing per case stays in the process however many cases ran.
        ``owned``: the store is closed after the run (the view opens it again to read)."""
        results = self.store.stored_results(self.info.run_id, owned=owned)
        if len(results) <= HELD_RESULTS:
            return self.store.load_run(self.info.run_id)
        info = self.store.run_info(self.info.run_id) or self.info
        # a Sequence read like the list it stands for (ExperimentRun's docstring says so)
        return ExperimentRun.model_construct(info=info, results=cast(list[CaseResult], results))


HELD_RESULTS = 1_000
"""Results a finished run hands back as a list (readable after its store is gone, as a
temporary folder's); a larger run's are read from the store whenever they are read."""


@contextmanager
def resumable(run_id: str) -> Iterator[None]:
    """A store failure inside (the database went away mid-run) re-raised naming the run
    id to resume with, which a run given no ``--run-id`` never showed."""
    try:
        yield
    except RunInUseError:
        raise
    except StoreError as exc:
        if f"--run-id {shlex.quote(run_id)}" in str(exc):
            raise
        raise StoreError(f"{exc} To resume, add --run-id {shlex.quote(run_id)}.") from None


def new_run_id(dataset: str) -> str:
    """``<dataset>-<UTC time>-<random>``, the default run id."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    return f"{dataset}-{stamp}-{secrets.token_hex(3)}"


def run_info(
    options: RunOptions, dataset: Dataset, run_id: str, target: str, store: ResultStore
) -> RunInfo:
    """The record a run starts with: what it runs, how, on which versions (no secrets)."""
    saver = options["checkpointer"]
    if isinstance(saver, BaseCheckpointSaver):
        checkpointer = type(saver).__name__
    else:
        checkpointer = redact_url(saver or DEFAULT_CHECKPOINTER)
    redact, limits = options["redact"], options["judge_limits"]
    config: dict[str, Any] = {
        "concurrency": options["concurrency"],
        "repetitions": options["repetitions"],
        "timeout": options["timeout"],
        "retries": options["retries"],
        "thresholds": dict(options["thresholds"] or {}),
        "fail_under": options["fail_under"],
        "require_verdict": options["require_verdict"],
        "judge_cache": {"enabled": options["judge_cache"] is not False},
        "judge_limits": None if limits is None else limits.model_dump(),
        "store": store.url,
        "redact": None if redact is None else "function" if callable(redact) else "patterns",
    }
    info = RunInfo(
        run_id=run_id,
        dataset=dataset.name,
        dataset_hash=dataset_hash(dataset),
        target=target,
        checkpointer=checkpointer,
        config=config,
        git_commit=_git_commit(dataset.source),
        versions=_versions(),
        started_at=datetime.now(UTC),
        cases=len(dataset.cases) * options["repetitions"],
    )
    return RunInfo.model_validate(scrub_secrets(info.model_dump(mode="json")))


def _git_commit(source: Path | None) -> str | None:
    where = source.parent if source is not None else Path.cwd()
    try:
        done = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=where, capture_output=True, text=True, timeout=5
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() or None if done.returncode == 0 else None


def _versions() -> dict[str, str]:
    found = {"python": platform.python_version()}
    for package in ("lg-eval", "langgraph", "langchain-core"):
        try:
            found[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            continue
    return found


# --------------------------------------------------------------------------- the lease

DEFAULT_TTL = 30.0
DEFAULT_HEARTBEAT = 5.0

_READ = "SELECT host, pid, token, expires_at FROM lg_eval_leases WHERE run_id = ?"


@dataclass(frozen=True)
class Owner:
    """Who holds a lease and until when (seconds since the epoch, the owner's clock).

    ``host`` is the host name followed by the process namespace the ``pid`` belongs to
    (``ci-7 pidns:4026531836 boot:6f0c…``): a process id means something only there."""

    host: str
    pid: int
    token: str
    expires_at: float

    @property
    def hostname(self) -> str:
        """The host name alone."""
        return self.host.partition(" ")[0]

    def describe(self) -> str:
        """``pid 123 on host h``: the owner as a message names it (never the token)."""
        apart = self.host != here() and self.hostname == socket.gethostname()
        return f"pid {self.pid} on host {self.hostname}" + (
            " in another PID namespace" if apart else ""
        )

    def stale(self, now: float) -> bool:
        """Whether the lease may be taken over: expired, or its owner ran in this process
        namespace and is gone."""
        if self.expires_at <= now:
            return True
        return self.host == here() and not _alive(self.pid)


def here() -> str:
    """This process's host and process namespace, as a lease's ``host`` column holds them:
    the host name, then (on Linux) the PID namespace and the boot id, the only place where
    this process's id names this process."""
    parts = [socket.gethostname()]
    try:
        namespace = os.readlink("/proc/self/ns/pid")  # pid:[4026531836]
        with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as boot:
            parts += [f"pidns:{namespace.strip('pid:[]')}", f"boot:{boot.read().strip()}"]
    except OSError:
        pass  # no /proc: the host name is all there is
    return " ".join(parts)


@dataclass
class Lease:
    """A held lease on ``run_id`` in ``store``, renewed by a daemon thread until released."""

    store: ResultStore
    run_id: str
    owner: Owner
    ttl: float
    heartbeat: float
    _stop: threading.Event = field(default_factory=threading.Event, repr=False)
    _thread: threading.Thread | None = field(default=None, repr=False)

    @classmethod
    def acquire(
        cls,
        store: ResultStore,
        run_id: str,
        *,
        ttl: float | None = None,
        heartbeat: float | None = None,
    ) -> Lease:
        """Take the lease on ``run_id`` (taking over a stale one), fence the store with it
        and start renewing it.

        Raises:
            RunInUseError: another live run holds the lease (the message names its
                owner and when the lease expires).
            InvalidOptionError: ``ttl`` or ``heartbeat`` (or their environment
                variables) is not a positive number, or ``heartbeat`` is not below ``ttl``.
        """
        ttl = _seconds("ttl", ttl, "LG_EVAL_LEASE_TTL", DEFAULT_TTL)
        heartbeat = _seconds("heartbeat", heartbeat, "LG_EVAL_LEASE_HEARTBEAT", DEFAULT_HEARTBEAT)
        if heartbeat >= ttl:
            raise InvalidOptionError(
                f"heartbeat={heartbeat}: below the lease expiry ttl={ttl}, so a live run's "
                "lease is renewed before it expires."
            )
        mine = Owner(here(), os.getpid(), secrets.token_hex(16), 0.0)
        for _ in range(3):  # a lost race re-reads the row once more before giving up
            now = time.time()
            mine = Owner(mine.host, mine.pid, mine.token, now + ttl)
            held = _read(store, run_id)
            if held is None:
                store.execute_many(
                    "INSERT INTO lg_eval_leases (run_id, host, pid, token, expires_at)"
                    " VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                    [(run_id, mine.host, mine.pid, mine.token, mine.expires_at)],
                )
            elif held.stale(now):
                store.execute_many(
                    "UPDATE lg_eval_leases SET host = ?, pid = ?, token = ?, expires_at = ?"
                    " WHERE run_id = ? AND token = ?",
                    [(mine.host, mine.pid, mine.token, mine.expires_at, run_id, held.token)],
                )
            else:
                raise _in_use(store, run_id, held, now)
            won = _read(store, run_id)
            if won is not None and won.token == mine.token:
                lease = cls(store, run_id, mine, ttl, heartbeat)
                _fence(store, run_id, mine.token)
                lease._start()
                return lease
        held = _read(store, run_id)
        raise _in_use(store, run_id, held or mine, time.time())

    def release(self) -> None:
        """Stop renewing and delete the lease (only if still ours); safe to call twice.

        A store that cannot be reached now (the reason the run is ending, often) keeps
        the row; it is stale once this process is gone or its expiry passes, so the
        store's error is left to the run to report, not raised again here."""
        thread, self._thread = self._thread, None
        if thread is None:
            return
        self._stop.set()
        thread.join()
        self.store.fence(self.run_id, None)
        with contextlib.suppress(StoreError):
            self.store.execute_many(
                "DELETE FROM lg_eval_leases WHERE run_id = ? AND token = ?",
                [(self.run_id, self.owner.token)],
            )

    def _start(self) -> None:
        self._thread = threading.Thread(
            target=self._renew, name=f"lg-eval-lease-{self.run_id}", daemon=True
        )
        self._thread.start()

    def _renew(self) -> None:
        while not self._stop.wait(self.heartbeat):
            try:
                renewed = self.store.execute_many(
                    "UPDATE lg_eval_leases SET expires_at = ? WHERE run_id = ? AND token = ?",
                    [(time.time() + self.ttl, self.run_id, self.owner.token)],
                )
            except Exception:
                continue  # a store that is down now may be back by the next beat
            if not renewed:
                return  # taken over: the fence stops the run's next write


def _read(store: ResultStore, run_id: str) -> Owner | None:
    rows = store.query(_READ, (run_id,))
    return _owner(rows[0]) if rows else None


def _owner(row: tuple[object, ...]) -> Owner:
    host, pid, token, expires_at = row
    return Owner(str(host), int(str(pid)), str(token), float(str(expires_at)))


def _fence(store: ResultStore, run_id: str, token: str) -> None:
    """Make every write of ``run_id``'s rows through ``store`` check first, inside its
    transaction, that the lease is held by ``token`` (:class:`LeaseLostError` if not)."""
    lock = " FOR SHARE" if store.postgres else ""  # a takeover waits for the write to end

    def check(read: Read) -> None:
        rows = read(_READ + lock, (run_id,))
        held = _owner(rows[0]) if rows else None
        if held is None or held.token != token:
            raise _lost(store, run_id, held)

    store.fence(run_id, check)


def _lost(store: ResultStore, run_id: str, held: Owner | None) -> LeaseLostError:
    now = "no run holds it now" if held is None else f"{held.describe()} holds it now"
    return LeaseLostError(
        f"Run {run_id!r} in {store.url} lost its lease ({now}): this run was paused or cut "
        "off from the store past the lease's expiry, and another run took the run id over. "
        "It stopped before writing again; what it stored before is kept, and the run "
        "holding the id goes on from there.",
        owner=None if held is None else held.describe(),
    )


def _in_use(store: ResultStore, run_id: str, held: Owner, now: float) -> RunInUseError:
    expires = datetime.fromtimestamp(held.expires_at, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    left = max(0.0, held.expires_at - now)
    return RunInUseError(
        f"Run {run_id!r} in {store.url} is in use by another live run ({held.describe()}); "
        f"its lease expires at {expires} (in {left:.0f} s) unless that run renews it. Wait "
        "for it to finish, or choose another --run-id.",
        owner=held.describe(),
    )


def _seconds(name: str, value: float | None, variable: str, default: float) -> float:
    if value is None:
        raw = os.environ.get(variable)
        if raw is None:
            return default
        try:
            value = float(raw)
        except ValueError:
            value = math.nan
        where = f"{variable}={raw!r}"
    else:
        where = f"{name}={value!r}"
    if isinstance(value, bool) or not math.isfinite(value) or value <= 0:
        raise InvalidOptionError(f"{where}: a positive, finite number of seconds.")
    return float(value)


def _alive(pid: int) -> bool:
    """Whether process ``pid`` exists on this host and is not a zombie (killed, not reaped)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process
    except OSError:
        return True  # cannot tell: assume alive, the expiry still frees the lease
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as stat:
            state = stat.read().rpartition(")")[2].split()
    except OSError:
        return True  # no /proc (macOS): os.kill is the answer
    return not (state and state[0] in {"Z", "X"})
