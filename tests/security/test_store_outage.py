"""A Postgres results store that goes away mid-sweep: one line, no password, the resume.

The connection is cut for real (``pg_terminate_backend`` on the sweep's backends) while
the sweep is writing; the next write fails inside psycopg. The user sees a typed one-line
error naming the store without its password and the command that resumes, and running
that command stores every thread exactly once.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pytest
from langgraph.checkpoint.sqlite import SqliteSaver

from lg_eval._evaluator import make_evaluator
from lg_eval._feedback import Feedback
from tests.security.conftest import ROOT
from tests.sweeps import helpers

pytestmark = pytest.mark.postgres

THREADS = 16


def _slow(*, outputs: Any, **_: Any) -> Feedback:
    """Reference-free and slow enough (0.15 s a thread) to cut the store mid-sweep."""
    time.sleep(0.15)
    return Feedback(score=1.0, comment=f"{len(outputs['trajectory'].turns)} turns")


slow = make_evaluator("slow", _slow)


def _with_password(url: str, password: str) -> str:
    parts = urlsplit(url)
    netloc = f"{parts.username or 'postgres'}:{password}@{parts.hostname}:{parts.port}"
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def _stored(pg_url: str) -> int:
    import psycopg

    with psycopg.connect(pg_url, autocommit=True) as conn:
        exists = conn.execute("SELECT to_regclass('lg_eval_cases')").fetchone()
        if exists is None or exists[0] is None:
            return 0
        row = conn.execute("SELECT COUNT(*) FROM lg_eval_cases").fetchone()
        return int(row[0]) if row else 0


def _cut(pg_url: str) -> int:
    """Terminate every other connection to the store's database; how many were cut."""
    import psycopg

    name = urlsplit(pg_url).path.lstrip("/")
    with psycopg.connect(pg_url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE datname = %s AND pid <> pg_backend_pid()",
            (name,),
        ).fetchall()
    return sum(bool(cut) for (cut,) in rows)


def test_a_store_cut_mid_sweep_is_one_line_without_the_password_and_resumes(
    pg_url: str, tmp_path: Path
) -> None:
    conn = sqlite3.connect(tmp_path / "cp.sqlite", check_same_thread=False)
    helpers.populate(helpers.build(SqliteSaver(conn)), THREADS, 0)
    conn.close()
    store = _with_password(pg_url, "PASSWORD")  # the test server trusts local connections
    command = [
        sys.executable, "-m", "lg_eval", "sweep", "--graph", helpers.GRAPH,
        "--checkpointer", f"sqlite:///{tmp_path / 'cp.sqlite'}", "--store", store,
        "--evaluator", "tests.security.test_store_outage:slow", "--run-id", "cut1",
        "--partition-size", "2", "--quiet",
    ]  # fmt: skip
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    sweep = subprocess.Popen(command, cwd=ROOT, env=env, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and _stored(pg_url) == 0:
        time.sleep(0.02)
    assert 0 < _stored(pg_url) < THREADS, "the sweep must be cut mid-way"
    assert _cut(pg_url) >= 1
    _, err = sweep.communicate(timeout=120)
    message = err.decode()
    assert sweep.returncode == 2, message
    assert "Traceback" not in message and "PASSWORD" not in message
    assert "error ignored" not in message  # psycopg's own log line stays out of the terminal
    flat = " ".join(message.split())
    assert flat.startswith("lg-eval: the results store") and flat.count("lg-eval:") == 1, flat
    assert ":***@" in flat and "OperationalError" in flat
    assert "--run-id cut1" in flat, flat  # the resume names the run

    resumed = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, timeout=120)
    assert resumed.returncode == 0, resumed.stderr.decode()
    import psycopg

    with psycopg.connect(pg_url, autocommit=True) as conn:
        rows = conn.execute("SELECT case_id FROM lg_eval_cases WHERE run_id = 'cut1'").fetchall()
        (status,) = conn.execute("SELECT status FROM lg_eval_runs WHERE run_id = 'cut1'").fetchone()
    assert sorted(case for (case,) in rows) == [f"old-{i:02d}" for i in range(THREADS)]
    assert status == "finished"
