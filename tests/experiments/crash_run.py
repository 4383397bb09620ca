"""Run the crash test's experiment: ``python -m tests.experiments.crash_run DIR RUN_ID``.

Every case start is appended (and fsynced) to ``DIR/starts.log`` before the
case's node runs, so the test can count how often each case was started across a
``kill -9`` and the resumed run. The cases from :data:`HELD_FROM` on wait until
``DIR/go`` exists: a run the test stops is stopped with exactly the cases before them
stored, however fast or slow the machine is (the test creates the file before a rerun).
"""

from __future__ import annotations

import sys
from pathlib import Path

from lg_eval.datasets import Dataset
from lg_eval.experiments import run_experiment
from tests.experiments.graphs import slow_echo

CASES = 60
CONCURRENCY = 2
DELAY = 0.005
"""Seconds each case's node sleeps."""
HELD_FROM = CASES // 3
"""The first case that waits for ``DIR/go``."""


def dataset(folder: Path, delay: float = DELAY) -> Dataset:
    log, go = str(folder / "starts.log"), str(folder / "go")
    return Dataset.model_validate(
        {
            "name": "slow",
            "cases": [
                {
                    "id": f"case-{n:02d}",
                    "turns": [
                        {
                            "input": {"text": f"word {n}", "delay": delay, "log": log}
                            | ({"hold": go} if n >= HELD_FROM else {})
                        }
                    ],
                    "expected": {"output": f"WORD {n}" if n % 3 else "nope"},
                }
                for n in range(CASES)
            ],
        }
    )


def main(folder: Path, run_id: str) -> None:
    run_experiment(
        slow_echo,
        dataset(folder),
        checkpointer=f"sqlite:///{folder / 'checkpoints.sqlite'}",
        store=folder / "results.sqlite",
        run_id=run_id,
        concurrency=CONCURRENCY,
        judge_cache=False,
    )


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2])
