"""Two runs on one run id: the lease refuses the second live run and frees a dead one's.

The attack of #32 item 2: two ``lg-eval run --run-id dup1`` at once on one store both
exited 0 and the stored run held 8 passed, 38 failed and 54 errors. Here the second run
exits 5 naming the first, the first stores every case right; after ``kill -9`` a resume
takes the lease over (at once on this host, after the expiry from another).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lg_eval.errors import InvalidOptionError, RunInUseError
from lg_eval.experiments import Lease, ResultStore, open_store
from lg_eval.experiments._lifecycle import here
from tests.security.conftest import ROOT

CASES = 12
_NO_STORE: Any = None
"""Where bad lease times are refused before any store is touched."""


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'results.sqlite'}"
    return str(request.getfixturevalue("pg_url"))


@pytest.fixture
def store(store_url: str) -> Iterator[ResultStore]:
    with open_store(store_url) as opened:
        yield opened


def _foreign(store: ResultStore, run_id: str, expires_in: float) -> None:
    """A lease row of a run on another host (whose process this host cannot see)."""
    store.execute_many(
        "INSERT INTO lg_eval_leases (run_id, host, pid, token, expires_at) VALUES (?, ?, ?, ?, ?)",
        [(run_id, "elsewhere.example", 4242, "theirs", time.time() + expires_in)],
    )


def test_a_second_live_lease_is_refused_naming_owner_and_expiry(store: ResultStore) -> None:
    first = Lease.acquire(store, "dup1", ttl=30, heartbeat=5)
    try:
        with pytest.raises(RunInUseError) as refused:
            Lease.acquire(store, "dup1", ttl=30, heartbeat=5)
        owner = f"pid {os.getpid()} on host {socket.gethostname()}"
        assert refused.value.owner == owner
        message = str(refused.value)
        assert owner in message and "'dup1'" in message and "expires at" in message
        assert first.owner.token not in message
        other = Lease.acquire(store, "other", ttl=30, heartbeat=5)  # another id is free
        other.release()
    finally:
        first.release()
    again = Lease.acquire(store, "dup1", ttl=30, heartbeat=5)  # released: free again
    again.release()
    again.release()  # idempotent
    assert store.query("SELECT COUNT(*) FROM lg_eval_leases", ())[0][0] == 0


def test_a_foreign_lease_holds_until_it_expires_then_is_taken_over(store: ResultStore) -> None:
    _foreign(store, "r", expires_in=30)
    with pytest.raises(RunInUseError, match=r"pid 4242 on host elsewhere\.example"):
        Lease.acquire(store, "r", ttl=5, heartbeat=1)
    store.execute_many("UPDATE lg_eval_leases SET expires_at = ?", [(time.time() - 1,)])
    taken = Lease.acquire(store, "r", ttl=5, heartbeat=1)
    try:
        rows = store.query("SELECT host, pid, token FROM lg_eval_leases", ())
        assert [tuple(row) for row in rows] == [(here(), os.getpid(), taken.owner.token)]
    finally:
        taken.release()


def test_a_lease_of_a_dead_process_on_this_host_is_taken_at_once(store: ResultStore) -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    store.execute_many(
        "INSERT INTO lg_eval_leases (run_id, host, pid, token, expires_at) VALUES (?, ?, ?, ?, ?)",
        [("r", here(), dead.pid, "dead", time.time() + 3600)],
    )
    Lease.acquire(store, "r", ttl=5, heartbeat=1).release()


def test_the_heartbeat_keeps_a_live_lease_past_its_first_expiry(store_url: str) -> None:
    with open_store(store_url) as first, open_store(store_url) as second:
        lease = Lease.acquire(first, "r", ttl=0.8, heartbeat=0.1)
        try:
            time.sleep(1.6)  # twice the expiry: only renewals keep it
            with pytest.raises(RunInUseError):
                Lease.acquire(second, "r", ttl=0.8, heartbeat=0.1)
        finally:
            lease.release()


def test_of_two_racing_runs_exactly_one_takes_a_stale_lease(store_url: str) -> None:
    with open_store(store_url) as setup:
        _foreign(setup, "race", expires_in=-1)
    stores = [open_store(store_url) for _ in range(4)]
    won: list[Lease] = []
    refused: list[RunInUseError] = []
    barrier = threading.Barrier(len(stores))

    def take(store: ResultStore) -> None:
        barrier.wait()
        try:
            won.append(Lease.acquire(store, "race", ttl=30, heartbeat=5))
        except RunInUseError as exc:
            refused.append(exc)

    threads = [threading.Thread(target=take, args=(s,)) for s in stores]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    try:
        assert (len(won), len(refused)) == (1, 3)
    finally:
        for lease in won:
            lease.release()
        for opened in stores:
            opened.close()


@given(
    st.one_of(
        st.floats(max_value=0) | st.just(float("nan")) | st.just(float("inf")),
        st.integers(max_value=0),
    )
)
def test_a_lease_time_that_is_not_positive_is_refused(bad: float) -> None:
    with pytest.raises(InvalidOptionError, match="ttl="):
        Lease.acquire(_NO_STORE, "r", ttl=bad)
    with pytest.raises(InvalidOptionError, match="heartbeat="):
        Lease.acquire(_NO_STORE, "r", heartbeat=bad)


def test_bad_lease_environment_and_a_heartbeat_past_the_expiry_are_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("LG_EVAL_LEASE_TTL", "soon")
    with pytest.raises(InvalidOptionError, match="LG_EVAL_LEASE_TTL='soon'"):
        Lease.acquire(_NO_STORE, "r")
    monkeypatch.setenv("LG_EVAL_LEASE_TTL", "2")
    with pytest.raises(InvalidOptionError, match=r"heartbeat=5\.0: below the lease expiry ttl=2"):
        Lease.acquire(_NO_STORE, "r")


# --- the attack itself, through the CLI ------------------------------------------------


def _dataset(folder: Path, delay: float, hold: Path | None = None) -> Path:
    log = folder / "starts.log"
    data = folder / "slow.yaml"
    data.write_text(
        json.dumps(
            {
                "name": "slow",
                "graph": "tests.experiments.graphs:slow_echo",
                "cases": [
                    {
                        "id": f"c{n:02d}",
                        "turns": [{"input": _input(n, delay, log, hold)}],
                        "expected": {"output": f"W{n}" if n % 3 else "nope"},
                    }
                    for n in range(CASES)
                ],
            }
        )
    )
    return data


def _command(data: Path, store: str, folder: Path) -> list[str]:
    return [
        sys.executable, "-m", "lg_eval", "run", str(data), "--run-id", "dup1", "--store", store,
        "--checkpointer", f"sqlite:///{folder / 'cp.sqlite'}", "--concurrency", "2", "--quiet",
    ]  # fmt: skip


def _started(folder: Path) -> int:
    log = folder / "starts.log"
    return len(log.read_text().splitlines()) if log.exists() else 0


def _input(n: int, delay: float, log: Path, hold: Path | None) -> dict[str, Any]:
    given: dict[str, Any] = {"text": f"w{n}", "delay": delay, "log": str(log)}
    if hold is not None:
        given["hold"] = str(hold)
    return given


def _wait_started(folder: Path, at_least: int) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and _started(folder) < at_least:
        time.sleep(0.01)
    assert _started(folder) >= at_least


def _statuses(store: str) -> dict[str, str]:
    with open_store(store) as opened:
        return {r.case_id: r.status for r in opened.load_run("dup1").results}


EXPECTED = {f"c{n:02d}": "passed" if n % 3 else "failed" for n in range(CASES)}


def _env(**extra: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), **extra}


def test_a_second_cli_run_on_a_live_run_id_exits_5_and_the_first_is_right(
    store_url: str, tmp_path: Path
) -> None:
    hold = tmp_path / "release"  # the first run's cases wait for it: alive until released
    data = _dataset(tmp_path, delay=0.05, hold=hold)
    first = subprocess.Popen(
        _command(data, store_url, tmp_path), cwd=ROOT, env=_env(), stderr=subprocess.PIPE
    )
    try:
        _wait_started(tmp_path, 1)
        second = subprocess.run(
            _command(data, store_url, tmp_path), cwd=ROOT, env=_env(), capture_output=True,
            timeout=120,
        )  # fmt: skip
        assert first.poll() is None, "the first run ended before the second was refused"
    finally:
        hold.touch()
        _, err = first.communicate(timeout=120)
    assert second.returncode == 5, second.stderr.decode()
    message = " ".join(second.stderr.decode().split())
    assert f"pid {first.pid} on host {socket.gethostname()}" in message
    assert "in use by another live run" in message and "Traceback" not in message
    assert first.returncode == 0, err.decode()
    assert _statuses(store_url) == EXPECTED
    with open_store(store_url) as opened:
        info = opened.run_info("dup1")
        assert info is not None and info.status == "finished"
        assert opened.query("SELECT COUNT(*) FROM lg_eval_leases", ())[0][0] == 0


def test_after_kill_9_a_resume_takes_the_lease_over(tmp_path: Path) -> None:
    """This host: the dead pid frees the lease at once. Seen from another host (the row's
    host rewritten): refused until the killed run's short expiry passes, then taken."""
    short = _env(LG_EVAL_LEASE_TTL="2", LG_EVAL_LEASE_HEARTBEAT="0.2")
    for host in (None, "elsewhere.example"):
        folder = tmp_path / (host or "here")
        folder.mkdir()
        data = _dataset(folder, delay=0.05)
        store = f"sqlite:///{folder / 'results.sqlite'}"
        killed = subprocess.Popen(
            _command(data, store, folder), cwd=ROOT, env=short, start_new_session=True
        )
        _wait_started(folder, 3)
        os.killpg(killed.pid, signal.SIGKILL)
        killed.wait()
        with sqlite3.connect(folder / "results.sqlite") as connection:
            pid, expires = connection.execute(
                "SELECT pid, expires_at FROM lg_eval_leases"
            ).fetchone()
            assert pid == killed.pid  # the killed run left its lease behind
        if host is not None:
            _set_lease(folder, host, time.time() + 600)  # as if still live over there
            early = subprocess.run(
                _command(data, store, folder), cwd=ROOT, env=short, capture_output=True,
                timeout=120,
            )  # fmt: skip
            assert early.returncode == 5, early.stderr.decode()
            _set_lease(folder, host, expires)  # back to what the killed run last renewed
            time.sleep(max(0.0, expires - time.time()))
        began = time.monotonic()
        resumed = subprocess.run(
            _command(data, store, folder), cwd=ROOT, env=short, capture_output=True,
            timeout=120,
        )  # fmt: skip
        assert resumed.returncode == 0, resumed.stderr.decode()
        assert time.monotonic() - began < 30
        assert _statuses(store) == EXPECTED


def _set_lease(folder: Path, host: str, expires_at: float) -> None:
    with sqlite3.connect(folder / "results.sqlite") as connection:
        connection.execute("UPDATE lg_eval_leases SET host = ?, expires_at = ?", (host, expires_at))


def test_a_sweep_on_a_run_id_a_live_run_holds_exits_5(tmp_path: Path) -> None:
    from langgraph.checkpoint.sqlite import SqliteSaver
    from typer.testing import CliRunner

    from lg_eval.cli import app
    from tests.sweeps import helpers

    conn = sqlite3.connect(tmp_path / "cp.sqlite", check_same_thread=False)
    helpers.populate(helpers.build(SqliteSaver(conn)), 2, 0)
    conn.close()
    store = f"sqlite:///{tmp_path / 'results.sqlite'}"
    command = [
        "sweep", "--graph", helpers.GRAPH, "--checkpointer", f"sqlite:///{tmp_path / 'cp.sqlite'}",
        "--store", store, "--evaluator", "tests.sweeps.helpers:turns", "--run-id", "s1", "--quiet",
    ]  # fmt: skip
    with open_store(store) as opened:
        held = Lease.acquire(opened, "s1", ttl=30, heartbeat=5)
        try:
            refused = CliRunner().invoke(app, command)
        finally:
            held.release()
        assert opened.run_info("s1") is None  # refused before the run was recorded
    assert refused.exit_code == 5, refused.output
    assert "in use by another live run" in " ".join(refused.output.split())
    done = CliRunner().invoke(app, command)
    assert done.exit_code == 0, done.output


def test_the_run_in_use_error_is_caught_where_run_experiment_is_imported_from() -> None:
    import lg_eval.experiments

    assert lg_eval.experiments.RunInUseError is RunInUseError
    assert issubclass(RunInUseError, lg_eval.experiments.StoreError)


# --- #40 item 2: a run that lost its lease stops writing; ownership is not host + pid -------


def _result(run_id: str, case_id: str) -> Any:
    from lg_eval.experiments import CaseResult

    return CaseResult(run_id=run_id, case_id=case_id, status="passed")


def test_a_run_whose_lease_was_taken_over_writes_nothing_more(store_url: str) -> None:
    """The fence, through the API: once another run took the id over, each kind of write
    of the first run (results, its record, a sweep's rows) raises and stores nothing."""
    from lg_eval.errors import LeaseLostError
    from lg_eval.experiments import RunInfo

    with open_store(store_url) as first, open_store(store_url) as second:
        lost = Lease.acquire(first, "r", ttl=30, heartbeat=5)
        first.write([(0, _result("r", "before"))])  # still ours: stored
        first.execute_many("UPDATE lg_eval_leases SET expires_at = ?", [(time.time() - 1,)])
        taken = Lease.acquire(second, "r", ttl=30, heartbeat=5)
        try:
            info = RunInfo(
                run_id="r", dataset="d", dataset_hash="h", target="t", checkpointer="c",
                started_at="2026-01-01T00:00:00Z",
            )  # fmt: skip
            for attempt in (
                lambda: first.write([(1, _result("r", "after"))]),
                lambda: first.begin_run(info),
                lambda: first.update_run(info),
                lambda: first.execute_many(
                    "UPDATE lg_eval_cases SET status = 'failed' WHERE run_id = ?",
                    [("r",)],
                    run_id="r",
                ),
            ):
                with pytest.raises(LeaseLostError) as caught:
                    attempt()
                message = str(caught.value)
                assert f"pid {os.getpid()} on host {socket.gethostname()} holds it now" in message
                assert "lost its lease" in message and taken.owner.token not in message
            assert isinstance(caught.value, RunInUseError)
            rows = second.query("SELECT case_id, status FROM lg_eval_cases", ())
            assert [tuple(row) for row in rows] == [("before", "passed")]
            assert second.query("SELECT COUNT(*) FROM lg_eval_runs", ())[0][0] == 0
            second.write([(1, _result("r", "after"))])  # the new owner writes
        finally:
            lost.release()  # deletes nothing: the row is the other run's
            assert second.query("SELECT token FROM lg_eval_leases", ())[0][0] == taken.owner.token
            taken.release()


def _lease_expired(store: str) -> bool:
    with open_store(store) as opened:
        rows = opened.query("SELECT expires_at FROM lg_eval_leases WHERE run_id = 'dup1'", ())
    return bool(rows) and float(rows[0][0]) < time.time()


def _wait(condition: Any, what: str) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not condition():
        time.sleep(0.05)
    assert condition(), f"timed out waiting until {what}"


def test_a_run_paused_past_its_lease_stops_with_a_clear_error_when_resumed(
    store_url: str, tmp_path: Path
) -> None:
    """SIGSTOP the first run past its lease's expiry, let a second run take the id over,
    SIGCONT the first: it exits 5 at its next write, naming the loss; the second finishes
    the run right."""
    short = _env(LG_EVAL_LEASE_TTL="2", LG_EVAL_LEASE_HEARTBEAT="0.2")
    hold = tmp_path / "release"
    data = _dataset(tmp_path, delay=0.0, hold=hold)
    command = _command(data, store_url, tmp_path)
    paused = subprocess.Popen(
        command, cwd=ROOT, env=short, stderr=subprocess.PIPE, start_new_session=True
    )
    second = None
    try:
        _wait_started(tmp_path, 1)  # its cases wait for `hold`: in flight, nothing stored
        os.killpg(paused.pid, signal.SIGSTOP)
        _wait(lambda: _lease_expired(store_url), "the paused run's lease expired")
        started = _started(tmp_path)
        second = subprocess.Popen(command, cwd=ROOT, env=short, stderr=subprocess.PIPE)
        _wait_started(tmp_path, started + 1)  # the second run holds the id and plays
        os.killpg(paused.pid, signal.SIGCONT)
        hold.touch()
        _, paused_err = paused.communicate(timeout=120)
        _, second_err = second.communicate(timeout=120)
    finally:
        hold.touch()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(paused.pid, signal.SIGCONT)
        for process in (paused, second):
            if process is not None and process.poll() is None:
                process.kill()
                process.wait()
    message = " ".join(paused_err.decode().split())
    assert paused.returncode == 5, message
    assert "lost its lease" in message and f"pid {second.pid} on host" in message
    assert "Traceback" not in message
    assert second.returncode == 0, second_err.decode()
    assert _statuses(store_url) == EXPECTED
    with open_store(store_url) as opened:
        info = opened.run_info("dup1")
        assert info is not None and info.status == "finished"
        assert opened.query("SELECT COUNT(*) FROM lg_eval_leases", ())[0][0] == 0


def _can_unshare() -> bool:
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        return False
    done = subprocess.run(["unshare", "--pid", "--fork", "true"], capture_output=True)
    return done.returncode == 0


@pytest.mark.skipif(not _can_unshare(), reason="needs root and unshare --pid (util-linux)")
def test_a_second_run_in_another_pid_namespace_is_refused_while_the_first_lives(
    tmp_path: Path,
) -> None:
    """A container with host networking has this host's name and its own process ids: the
    first run's pid means nothing there, so the second run must wait for the expiry, not
    take the lease because that pid looks dead from where it stands."""
    store = f"sqlite:///{tmp_path / 'results.sqlite'}"
    hold = tmp_path / "release"
    data = _dataset(tmp_path, delay=0.0, hold=hold)
    first = subprocess.Popen(
        _command(data, store, tmp_path), cwd=ROOT, env=_env(), stderr=subprocess.PIPE
    )
    try:
        _wait_started(tmp_path, 1)
        inside = subprocess.run(
            ["unshare", "--pid", "--fork", "--kill-child", *_command(data, store, tmp_path)],
            cwd=ROOT, env=_env(), capture_output=True, timeout=120,
        )  # fmt: skip
        assert first.poll() is None, "the first run ended before the second was refused"
    finally:
        hold.touch()
        _, err = first.communicate(timeout=120)
    message = " ".join(inside.stderr.decode().split())
    assert inside.returncode == 5, message
    assert f"pid {first.pid} on host {socket.gethostname()} in another PID namespace" in message
    assert first.returncode == 0, err.decode()
    assert _statuses(store) == EXPECTED
