"""One run's life in the results store: begun (or resumed), what is left, counted, recorded.

Every way of running an experiment — cases played here, cases scored by the scoring
process, partitions played by an executor's workers — and every sweep go through the same
steps, so they live here once: :meth:`RunLifecycle.begin` names the run and records it as running
(an existing run id resumes, keeping what is stored), :meth:`RunLifecycle.left` says which
case × repetition pairs still have to run, :attr:`RunLifecycle.tally` counts finished cases
and reports progress, and :meth:`RunLifecycle.recording` stores the run's final record
(``finished``, or ``interrupted`` when the run stopped on an error or Ctrl-C).

A run holds the lease on its run id (:mod:`.lease`) from :meth:`~RunLifecycle.begin`
until :meth:`~RunLifecycle.recording` has stored its record, so a second live run on the
same id is refused before it touches the run.
"""

from __future__ import annotations

import importlib.metadata
import platform
import secrets
import shlex
import subprocess
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver

from lg_eval.errors import RunInUseError, StoreError
from lg_eval.experiments._upstream import DEFAULT_CHECKPOINTER, Dataset, dataset_hash, redact_url
from lg_eval.experiments.lease import Lease
from lg_eval.experiments.options import Progress, RunOptions
from lg_eval.experiments.redaction import scrub_secrets
from lg_eval.experiments.results import CaseStatus, ExperimentRun, RunInfo, RunStatus
from lg_eval.experiments.store import ResultStore


@dataclass
class Tally:
    """Finished cases of a run, counted as they finish (from the loop or from case
    threads), with ``progress`` told after each."""

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
    """A run begun in ``store``: its record, whether it resumed, and its tally."""

    store: ResultStore
    info: RunInfo
    resumed: bool
    stored: dict[tuple[str, int], str]
    """The status of every case × repetition already stored for the run."""
    tally: Tally
    lease: Lease

    @classmethod
    def begin(
        cls,
        store: ResultStore,
        info: RunInfo,
        progress: Progress | None,
        lease: Lease | None = None,
        token: str | None = None,
    ) -> RunLifecycle:
        """Take the lease on the run id (or keep ``lease``, taken on it already: a sweep
        holds it while it lists threads), then record the run described by ``info`` as
        running (resuming a stored one); ``token``: the owner token to take it under (one
        already handed to a process that writes the run's results). The caller releases
        the lease with :meth:`release` (``recording`` does) even when it fails before
        recording.

        Raises:
            RunInUseError: another live run holds the run id.
            StoreError: the run id exists for another dataset or another version of it.
        """
        lease = lease or Lease.acquire(store, info.run_id, token=token)
        try:
            info, resumed = store.begin_run(info)
            stored = store.finished(info.run_id)
        except BaseException:
            lease.release()
            raise
        tally = Tally(info.cases, progress, list(stored.values()))
        return cls(store, info, resumed, stored, tally, lease)

    def release(self) -> None:
        """Give up the run id's lease (idempotent)."""
        self.lease.release()

    def left(self, dataset: Dataset, repetitions: int) -> list[tuple[int, int]]:
        """``(ordinal of the case in the dataset, repetition)`` for every pair not stored yet,
        in dataset order then repetition."""
        return [
            (ordinal, repetition)
            for ordinal, case in enumerate(dataset.cases)
            for repetition in range(repetitions)
            if (case.id, repetition) not in self.stored
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

    def result(self) -> ExperimentRun:
        """The run as stored, every result included."""
        return self.store.load_run(self.info.run_id)


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
    options: RunOptions,
    dataset: Dataset,
    run_id: str,
    target: str,
    store: ResultStore,
    scoring: str = "inline",
) -> RunInfo:
    """The record a run starts with: what it runs, how, on which versions (no secrets)."""
    saver = options.checkpointer
    if isinstance(saver, BaseCheckpointSaver):
        checkpointer = type(saver).__name__
    else:
        checkpointer = redact_url(saver or DEFAULT_CHECKPOINTER)
    redact = options.redact
    limits = options.limits
    config: dict[str, Any] = {
        "concurrency": options.concurrency,
        "repetitions": options.repetitions,
        "timeout": options.timeout,
        "retries": options.retries,
        "thresholds": dict(options.thresholds or {}),
        "fail_under": options.fail_under,
        "require_verdict": options.require_verdict,
        "judge_cache": {"enabled": options.judge_cache is not False},
        "judge_limits": None if limits is None else limits.model_dump(),
        "store": store.url,
        "scoring": scoring,
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
        cases=len(dataset.cases) * options.repetitions,
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


__all__ = ["RunLifecycle", "Tally", "new_run_id", "resumable", "run_info"]
