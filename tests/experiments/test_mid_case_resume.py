"""Mid-case resume: a run killed inside a case goes on from the case's last finished turn."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from lg_eval.experiments import open_store
from tests.experiments import mid_case_run
from tests.experiments.mid_case_run import CASES, KILLED_CASE, KILLED_TURN, TURNS

ROOT = Path(__file__).resolve().parents[2]


def calls(folder: Path) -> Counter[str]:
    log = folder / "calls.log"
    return Counter(log.read_text().splitlines()) if log.exists() else Counter()


def essentials(run: Any) -> list[tuple[Any, ...]]:
    """What must be equal between a killed-then-resumed run and an undisturbed one."""
    return [
        (
            r.case_id,
            r.repetition,
            r.status,
            r.thread_id.split(":", 1)[1],
            r.trajectory,
            r.error,
            r.turns,
            [(s.evaluator, s.key, s.score, s.passed) for s in r.scores],
        )
        for r in run.results
    ]


def killed_run(folder: Path, kill_at: str, checkpointer: str = "") -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "tests.experiments.mid_case_run", str(folder), "r1"]
    done = subprocess.run([*command, kill_at, checkpointer], cwd=folder, env=env, timeout=240)
    assert done.returncode == -signal.SIGKILL


def every_call_once() -> Counter[str]:
    return Counter(
        f"{node}:{case}:{text}" for case in CASES for text in TURNS for node in ("model", "tool")
    )


@pytest.mark.parametrize(
    ("kill_at", "replayed"),
    [
        ("tool", [f"{node}:{KILLED_CASE}:{TURNS[KILLED_TURN]}" for node in ("model", "tool")]),
        ("model", [f"model:{KILLED_CASE}:{TURNS[KILLED_TURN]}"]),
    ],
    ids=["killed-in-the-turns-second-superstep", "killed-in-the-turns-first-superstep"],
)
def test_a_case_killed_after_two_finished_turns_goes_on_from_its_checkpoint(
    tmp_path: Path, kill_at: str, replayed: list[str]
) -> None:
    """kill -9 in turn 2 of 4, then the same run id: turns 0 and 1 are not played again;
    of turn 2 only the superstep the kill cut runs again (the tool, killed after the model
    finished, costs no model call twice); the results equal an undisturbed run's."""
    killed_run(tmp_path, kill_at)
    before = calls(tmp_path)
    assert before[f"{kill_at}:{KILLED_CASE}:{TURNS[KILLED_TURN]}"] == 1
    assert before[f"model:{KILLED_CASE}:{TURNS[1]}"] == 1  # turns 0 and 1 finished
    with open_store(tmp_path / "results.sqlite") as store:
        assert [r.case_id for r in store.load_run("r1").results] == ["chat-0"]

    mid_case_run.main(tmp_path, "r1")  # the resumed run
    assert calls(tmp_path) == every_call_once() + Counter(replayed)
    (tmp_path / "calls.log").unlink()
    mid_case_run.main(tmp_path, "clean")  # an undisturbed run to compare with
    assert calls(tmp_path) == every_call_once()
    with open_store(tmp_path / "results.sqlite") as store:
        resumed, clean = store.load_run("r1"), store.load_run("clean")
    assert essentials(resumed) == essentials(clean)
    assert [r.status for r in resumed.results] == ["passed", "passed", "passed"]
    assert [t.sent for t in resumed.results[1].turns] == [
        {"case": KILLED_CASE, "text": text} for text in TURNS
    ]
