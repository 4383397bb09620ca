"""Benchmark: how long ``lg-eval --help`` and ``lg-eval --version`` take from a cold start.

Run with ``make bench`` or ``python -m tests.benchmarks --only cli [--rounds N]``. Each
round starts a fresh interpreter (``python -m lg_eval ...``, the source tree first on
``PYTHONPATH``, its bytecode compiled by a warm-up before the clock, as an installed
package's is: :mod:`tests.benchmarks._interpreters`) and times it to exit; the median over
the rounds counts. The goal is
under 1 s on the development machine: the root command lists its commands from a table
and imports none of them, so neither LangGraph nor the runner is loaded. For contrast it
also times ``lg-eval run --help``, which imports the ``run`` command's module.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence

from tests.benchmarks._interpreters import compiled_env

GOAL_S = 1.0


def cold(args: Sequence[str], env: dict[str, str]) -> float:
    """Seconds for one fresh ``python -m lg_eval ARGS`` to exit (it must exit 0)."""
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "lg_eval", *args], env=env, check=True, capture_output=True
    )
    return time.perf_counter() - started


COMMANDS = (
    ("lg-eval --help", ["--help"]),
    ("lg-eval --version", ["--version"]),
    ("lg-eval run --help", ["run", "--help"]),
)


def main(argv: Sequence[str] = ()) -> None:
    parser = argparse.ArgumentParser(prog="bench_cli")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="3 rounds")
    args, _ = parser.parse_known_args(list(argv))
    rounds = 3 if args.quick else args.rounds
    with compiled_env(*(["-m", "lg_eval", *command] for _, command in COMMANDS)) as env:
        for label, command in COMMANDS:
            times = [cold(command, env) for _ in range(rounds)]
            median = statistics.median(times)
            goal = f"  (goal < {GOAL_S:.1f} s: {'met' if median < GOAL_S else 'NOT met'})"
            print(
                f"{label:<22} median {median:.3f} s, min {min(times):.3f} s over {rounds} rounds"
                + (goal if command != ["run", "--help"] else "")
            )


if __name__ == "__main__":
    main(sys.argv[1:])
