"""A named replay into a kept target is incremental: a fork finished at the thread's
newest checkpoint is reused, a thread that moved on (or a fork a kill left unfinished) is
forked again, and nothing is duplicated."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.types import Command
from typer.testing import CliRunner

from lg_eval.cli import app
from lg_eval.replay import ReplayResult, replay_threads
from tests.replay import helpers

ROOT = Path(__file__).resolve().parents[2]
IDS = [helpers.thread_id(i) for i in range(150, 156)]  # t154 is still waiting


def _rows(path: Path) -> Counter[str]:
    """Checkpoints per thread of the target file."""
    with sqlite3.connect(path) as conn:
        return Counter(r[0] for r in conn.execute("SELECT thread_id FROM checkpoints"))


def _replay(saver: Any, target: Path, **options: Any) -> ReplayResult:
    return replay_threads(helpers.build_v2, saver, thread_ids=IDS, target=f"sqlite:///{target}",
                          run="nightly", evaluators=["tests.replay.helpers:nodes"],
                          **options)  # fmt: skip


@pytest.fixture
def prod(tmp_path: Path) -> Any:
    conn = sqlite3.connect(tmp_path / "prod.sqlite", check_same_thread=False)
    saver = SqliteSaver(conn)
    helpers.populate(helpers.build(saver), len(IDS), start=150)
    yield saver
    conn.close()


def test_second_replay_reuses_every_fork_and_writes_nothing(prod: Any, tmp_path: Path) -> None:
    target = tmp_path / "replay.sqlite"
    first = _replay(prod, target)
    written = _rows(target)
    assert sorted(written) == sorted(
        [f"replay:nightly:{t}" for t in IDS] + [f"replay-done:nightly:{t}" for t in IDS]
    )
    again = _replay(prod, target)
    assert _rows(target) == written  # the new graph did not run again
    assert [t.reused for t in first.threads] == [False] * len(IDS)
    assert [t.reused for t in again.threads] == [True] * len(IDS)
    assert [t.model_dump(exclude={"reused"}) for t in again.threads] == [
        t.model_dump(exclude={"reused"}) for t in first.threads
    ]


def test_a_thread_that_moved_on_is_forked_again_and_only_it(prod: Any, tmp_path: Path) -> None:
    target = tmp_path / "replay.sqlite"
    first = _replay(prod, target)
    assert next(t for t in first.threads if t.thread_id == "t154").status == "stopped"
    helpers.build(prod).invoke(Command(resume="yes"), {"configurable": {"thread_id": "t154"}})
    again = _replay(prod, target)
    assert [t.thread_id for t in again.threads if not t.reused] == ["t154"]
    row = next(t for t in again.threads if t.thread_id == "t154")
    assert (row.status, row.diff) == ("replayed", ["+ escalate"])
    # now answered "yes" like t153, so the new graph does for it what it does for t153
    assert row.new_steps == helpers.scratch_steps(helpers.build_v2, 153)
    # the outdated fork was replaced, not added to: as many checkpoints as a fresh fork of it
    fresh = tmp_path / "fresh.sqlite"
    replay_threads(helpers.build_v2, prod, thread_ids=["t154"], target=f"sqlite:///{fresh}",
                   run="nightly", evaluators=["tests.replay.helpers:nodes"])  # fmt: skip
    assert _rows(target)["replay:nightly:t154"] == _rows(fresh)["replay:nightly:t154"]


def test_a_fork_left_without_its_marker_is_made_again(prod: Any, tmp_path: Path) -> None:
    target = tmp_path / "replay.sqlite"
    _replay(prod, target)
    written = _rows(target)
    with sqlite3.connect(target) as conn:  # a kill after the fork, before its marker
        conn.execute("DELETE FROM checkpoints WHERE thread_id = 'replay-done:nightly:t152'")
    again = _replay(prod, target)
    assert [t.thread_id for t in again.threads if not t.reused] == ["t152"]
    assert _rows(target) == written


def test_incremental_false_forks_every_thread_again(prod: Any, tmp_path: Path) -> None:
    target = tmp_path / "replay.sqlite"
    _replay(prod, target)
    written = _rows(target)
    full = _replay(prod, target, incremental=False)
    assert [t.reused for t in full.threads] == [False] * len(IDS)
    assert _rows(target) == written


def test_cli_same_run_id_reuses_and_full_forks_again(prod: Any, tmp_path: Path) -> None:
    (path,) = [row[2] for row in prod.conn.execute("PRAGMA database_list") if row[1] == "main"]
    command = [
        "replay", "--graph", "tests.replay.helpers:build_v2", "--checkpointer",
        f"sqlite:///{path}", "--target", f"sqlite:///{tmp_path / 'replay.sqlite'}",
        "--run-id", "nightly", "--evaluator", "tests.replay.helpers:nodes", "--quiet",
    ]  # fmt: skip
    for args, tail in [([], ""), ([], " (6 forks reused)"), (["--full"], "")]:
        out = CliRunner().invoke(app, [*command, *args])
        assert out.exit_code == 0, out.output
        summary = "replayed 6 threads: 4 changed, 1 stopped, 0 errored, 0 skipped"
        assert out.output.splitlines()[-1] == summary + tail


def test_a_replay_killed_mid_thread_resumes_losing_and_duplicating_nothing(
    prod: Any, tmp_path: Path
) -> None:
    target = tmp_path / "replay.sqlite"
    (path,) = [row[2] for row in prod.conn.execute("PRAGMA database_list") if row[1] == "main"]
    script = (
        "from lg_eval.replay import replay_threads\n"
        "from tests.replay import helpers\n"
        f"replay_threads(helpers.build_v2, 'sqlite:///{path}', thread_ids={IDS!r}, "
        f"target='sqlite:///{target}', run='nightly', "
        "evaluators=['tests.replay.helpers:nodes'])\n"
    )
    env = {**os.environ, helpers.DIE_AT: "153", "PYTHONPATH": str(ROOT)}
    killed = subprocess.run([sys.executable, "-c", script], env=env, cwd=ROOT, check=False)
    assert killed.returncode == 9  # died inside t153's escalate, after t150..t152
    done = {t for t in _rows(target) if t.startswith("replay-done:")}
    assert done == {"replay-done:nightly:t150", "replay-done:nightly:t151",
                    "replay-done:nightly:t152"}  # fmt: skip
    resumed = _replay(prod, target)
    assert [t.thread_id for t in resumed.threads if t.reused] == ["t150", "t151", "t152"]
    clean = tmp_path / "clean.sqlite"
    expected = _replay(prod, clean)
    assert _rows(target) == _rows(clean)  # t153's half-made fork was replaced, not added to
    assert [t.model_dump(exclude={"reused"}) for t in resumed.threads] == [
        t.model_dump(exclude={"reused"}) for t in expected.threads
    ]
