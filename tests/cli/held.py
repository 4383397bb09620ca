"""What the interrupt tests run in a child ``lg-eval``: a sweep evaluator that holds one
thread until the test lets it go, and the dataset of a run whose last cases hold.

The child process reads where to record and what to wait for from the environment
(``HELD_LOG``: a start per line; ``HELD_THREAD``, ``HELD_FILE``: the thread that waits until
that file exists), so the test stops it at a known point, whatever the machine's load.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from lg_eval._evaluator import make_evaluator
from lg_eval._feedback import Feedback
from tests.experiments.graphs import record_start, wait_for


def _held(*, outputs: Any, **_: Any) -> Feedback:
    thread_id = outputs["trajectory"].thread_id
    record_start(Path(os.environ["HELD_LOG"]), thread_id)
    if thread_id == os.environ.get("HELD_THREAD"):
        wait_for(Path(os.environ["HELD_FILE"]), timeout=120)
    return Feedback(score=True)


held = make_evaluator("held", _held)


def dataset(folder: Path, quick: int, held_cases: int) -> Path:
    """``quick`` cases that answer at once, then ``held_cases`` that wait for ``folder /
    "go"``; every start is logged to ``folder / "starts.log"``."""
    lines = ["name: held", "graph: tests.experiments.graphs:slow_echo", "cases:"]
    log, hold = folder / "starts.log", folder / "go"
    for n in range(quick + held_cases):
        extra = f', hold: "{hold}"' if n >= quick else ""
        lines += [
            f"  - id: case-{n}",
            f'    turns: [{{input: {{text: "w{n}", log: "{log}"{extra}}}}}]',
            f"    expected: {{output: W{n}}}",
        ]
    path = folder / "held.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path
