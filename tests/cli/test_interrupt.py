"""Ctrl-C and SIGTERM during ``run``, ``sweep`` and ``replay``: one line (interrupted, how
much is stored, the exact command that resumes), exit 130, and the printed command resumes
without losing or redoing what was stored.

Each child ``lg-eval`` is stopped at a known point: its work waits on a file the test
creates (``tests.cli.held``, ``tests.replay.helpers.HOLD_AT``), and the test waits for
what it can see (a start in a log, rows in the store, a run recorded as interrupted)
before it signals or lets go. No sleep decides anything, so a loaded machine only makes
the test slower.
"""

from __future__ import annotations

import os
import shlex
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.sqlite import SqliteSaver

from lg_eval.cli._progress import resume_command
from lg_eval.experiments import open_store
from tests.cli import held
from tests.experiments.graphs import starts
from tests.replay import helpers as replay_helpers
from tests.sweeps import helpers as sweep_helpers

ROOT = Path(__file__).resolve().parents[2]
PATIENCE = 300.0
"""Seconds before a wait gives up: a guard against a hang, never a measure of speed."""

SIGNALS = [signal.SIGINT, signal.SIGTERM]


def until(condition: Callable[[], bool], child: subprocess.Popen[str], what: str) -> None:
    """Return once ``condition()`` holds; fail (and stop the child) if the child exits first
    or it never does."""
    deadline = time.monotonic() + PATIENCE
    while not condition():
        if child.poll() is not None:
            _, err = child.communicate()
            pytest.fail(f"the child exited ({child.returncode}) before {what}: {err}")
        if time.monotonic() > deadline:
            child.kill()
            pytest.fail(f"gave up waiting for {what}")
        time.sleep(0.02)


def lg_eval(folder: Path, args: list[str], **env: str) -> subprocess.Popen[str]:
    environment = {**os.environ, "PYTHONPATH": str(ROOT), **env}
    return subprocess.Popen(
        [sys.executable, "-m", "lg_eval", *args], cwd=folder, env=environment,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def resumed(folder: Path, line: str, **env: str) -> subprocess.CompletedProcess[str]:
    """Run the command the interrupted child printed after ``resume with:``."""
    command = shlex.split(line.partition("; resume with: ")[2])
    assert command[0] == "lg-eval"
    environment = {**os.environ, "PYTHONPATH": str(ROOT), **env}
    return subprocess.run(
        [sys.executable, "-m", "lg_eval", *command[1:]], cwd=folder, env=environment,
        capture_output=True, text=True, timeout=PATIENCE,
    )  # fmt: skip


def stored(store: Path) -> dict[str, Any]:
    """The store's runs by id: (status, case ids stored); empty before the file exists."""
    if not store.exists():
        return {}
    with open_store(store) as results:
        return {
            info.run_id: (info.status, sorted(results.finished(info.run_id)))
            for info in results.runs()
        }


@pytest.mark.parametrize("stop", SIGNALS, ids=["ctrl-c", "sigterm"])
def test_an_interrupted_run_says_what_is_stored_and_how_to_resume(tmp_path, stop) -> None:
    dataset = held.dataset(tmp_path, quick=3, held_cases=2)
    store = tmp_path / "res.sqlite"
    args = ["run", dataset.name, "--store", f"sqlite:///{store.name}", "--concurrency", "1",
            "--quiet"]  # fmt: skip
    child = lg_eval(tmp_path, args)
    until(lambda: "w3" in starts(tmp_path / "starts.log"), child, "the held case started")
    until(lambda: any(len(cases) == 3 for _, cases in stored(store).values()), child,
          "three cases were stored")  # fmt: skip
    child.send_signal(stop)
    until(lambda: any(s == "interrupted" for s, _ in stored(store).values()), child,
          "the run was recorded as interrupted")  # fmt: skip
    (tmp_path / "go").touch()  # the held case's thread may end now: its result is dropped
    out, err = child.communicate(timeout=PATIENCE)
    ((run_id, (status, cases)),) = stored(store).items()
    assert child.returncode == 130
    assert out == ""
    assert err.splitlines() == [
        f"lg-eval: interrupted: 3 of 5 cases stored in run {run_id}; resume with: lg-eval run "
        f"held.yaml --store sqlite:///res.sqlite --concurrency 1 --quiet "
        f"--run-id {run_id}"
    ]
    assert (status, [case for case, _ in cases]) == ("interrupted", ["case-0", "case-1",
                                                                      "case-2"])  # fmt: skip
    again = resumed(tmp_path, err)
    assert again.returncode == 0, again.stderr
    assert stored(store) == {run_id: ("finished", [(f"case-{n}", 0) for n in range(5)])}
    # The held case's node finished on its thread before the child exited (the run waits
    # for its case threads), so the resumed run went on from that finished turn: no case
    # was played twice.
    assert starts(tmp_path / "starts.log") == {f"w{n}": 1 for n in range(5)}


@pytest.mark.parametrize("stop", SIGNALS, ids=["ctrl-c", "sigterm"])
def test_an_interrupted_sweep_resumes_with_the_printed_command(tmp_path, stop) -> None:
    conn = sqlite3.connect(tmp_path / "cp.sqlite", check_same_thread=False)
    sweep_helpers.populate(sweep_helpers.build(SqliteSaver(conn)), 40, 0)
    conn.close()
    store = tmp_path / "res.sqlite"
    args = ["sweep", "--graph", sweep_helpers.GRAPH, "--checkpointer", "sqlite:///cp.sqlite",
            "--store", f"sqlite:///{store.name}", "--evaluator", "tests.cli.held:held",
            "--partition-size", "1", "--quiet"]  # fmt: skip
    env = {"HELD_LOG": str(tmp_path / "starts.log"), "HELD_FILE": str(tmp_path / "go")}
    child = lg_eval(tmp_path, args, HELD_THREAD="old-05", **env)
    until(lambda: "old-05" in starts(tmp_path / "starts.log"), child, "old-05 was held")
    child.send_signal(stop)  # both workers wait: old-05 here, the other on the next thread
    (tmp_path / "go").touch()
    out, err = child.communicate(timeout=PATIENCE)
    ((run_id, (status, cases)),) = stored(store).items()
    assert child.returncode == 130, err
    assert out == ""
    assert err.splitlines() == [
        f"lg-eval: interrupted: {len(cases)} threads scored and stored in run {run_id}; resume "
        f"with: lg-eval sweep --graph {sweep_helpers.GRAPH} --checkpointer sqlite:///cp.sqlite "
        f"--store sqlite:///res.sqlite --evaluator tests.cli.held:held --partition-size 1 "
        f"--quiet --run-id {run_id}"
    ]
    assert status == "interrupted" and len(cases) < 40
    again = resumed(tmp_path, err, **env)
    assert again.returncode == 0, again.stderr
    ((_, (status, cases)),) = stored(store).items()
    assert status == "finished"
    assert [case for case, _ in cases] == sorted(f"old-{n:02d}" for n in range(40))


@pytest.mark.parametrize("stop", SIGNALS, ids=["ctrl-c", "sigterm"])
def test_an_interrupted_replay_keeps_its_forks_and_resumes(tmp_path, stop) -> None:
    conn = sqlite3.connect(tmp_path / "prod.sqlite", check_same_thread=False)
    replay_helpers.populate(replay_helpers.build(SqliteSaver(conn)), 10, start=151)
    conn.close()
    hold = tmp_path / "go"
    args = ["replay", "--graph", "tests.replay.helpers:build_v2", "--checkpointer",
            "sqlite:///prod.sqlite", "--target", "sqlite:///target.sqlite", "--concurrency",
            "1", "--quiet", "--evaluator", "tests.replay.helpers:nodes"]  # fmt: skip
    env = {replay_helpers.HOLD_AT: f"155:{hold}"}
    child = lg_eval(tmp_path, args, **env)
    until(lambda: Path(f"{hold}.waiting").exists(), child, "the replay reached t155")
    child.send_signal(stop)
    out, err = child.communicate(timeout=PATIENCE)
    assert child.returncode == 130, err
    assert out == ""
    (line,) = err.splitlines()
    run_id = line.rpartition(" ")[2]
    assert line == (
        "lg-eval: interrupted: 4 of 10 threads replayed, their forks kept in "
        "sqlite:///target.sqlite; resume with: lg-eval replay --graph "
        "tests.replay.helpers:build_v2 --checkpointer sqlite:///prod.sqlite --target "
        "sqlite:///target.sqlite --concurrency 1 --quiet --evaluator "
        f"tests.replay.helpers:nodes --run-id {run_id}"
    )
    hold.touch()
    again = resumed(tmp_path, line, **env)
    assert again.returncode == 0, again.stderr
    assert again.stdout.splitlines() == [
        # the 9 answered refunds over 150 now escalate; t154 still waits for its human
        "replayed 10 threads: 9 changed, 1 stopped, 0 errored, 0 skipped (4 forks reused)"
    ]


def test_the_resume_command_hides_secrets_and_replaces_the_run_id(monkeypatch) -> None:
    monkeypatch.setattr(sys, "argv", [
        "lg-eval", "run", "d.yaml", "--server", "http://u:hunter2@host:2024", "--api-key",
        "sk-secret", "--header=X-Key=abc", "--run-id", "old", "--run-id=older",
    ])  # fmt: skip
    command = resume_command("r 1")
    assert command == (
        "lg-eval run d.yaml --server 'http://u:***@host:2024' --api-key '***' "
        "'--header=***' --run-id 'r 1'"
    )
    assert "hunter2" not in command and "sk-secret" not in command and "abc" not in command
