"""``lg-eval sweep --watch`` as a process: a line per pass, SIGTERM and Ctrl-C stop it with
one line and exit code 130, and the same command goes on without scoring anything twice.

The test waits on the watch's own lines (and the writer's replies), never on the clock."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lg_eval.cli import app
from tests.sweeps.watching import GRAPH, HANG, POLICY, ROOT, Lines, Writer, environment, scored

runner = CliRunner()


def _watch(threads: str, store: str) -> tuple[subprocess.Popen[str], Lines]:
    process = subprocess.Popen(
        [
            sys.executable, "-m", "lg_eval", "sweep", "--watch", "--graph", GRAPH,
            "--checkpointer", threads, "--store", store, "--evaluator", POLICY,
            "--name", "travel", "--every", "0.2",
        ],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT, env=environment(),
    )  # fmt: skip
    assert process.stderr is not None
    lines = Lines(process.stderr)
    lines.until("watching sweep travel every 0.2 s")
    return process, lines


def _stopped(process: subprocess.Popen[str], lines: Lines, how: int) -> str:
    """Send ``how``, and return the watch's last line once it exited."""
    process.send_signal(how)
    assert process.wait(timeout=HANG) == 130
    while lines.next():
        pass
    return lines.seen[-1].strip()


@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGINT], ids=["sigterm", "ctrl-c"])
def test_a_watch_stops_with_one_line_and_goes_on_where_it_stopped(tmp_path: Path, how: int) -> None:
    threads = f"sqlite:///{tmp_path / 'threads.sqlite'}"
    store = f"sqlite:///{tmp_path / 'results.sqlite'}"
    with Writer(threads) as writer:
        stops = [("a", writer("new", "a")), ("b", writer("new", "b"))]
        process, lines = _watch(threads, store)
        assert "travel: 2 thread(s) scored, 0 not passed, in run sweep-" in lines.until("scored")
        stops.append(("a", writer("approve", "a")))
        assert "travel: 1 thread(s) scored" in lines.until("scored")
        assert _stopped(process, lines, how) == (
            "lg-eval: interrupted: watch travel stored 3 scored thread(s) in 2 run(s); run the "
            "same command to go on (threads already scored are not scored again)"
        )
        stops += [("b", writer("reject", "b")), ("c", writer("new", "c"))]  # while stopped
        process, lines = _watch(threads, store)
        assert "travel: 2 thread(s) scored" in lines.until("scored")
        assert "stored 2 scored thread(s) in 1 run(s)" in _stopped(process, lines, how)
    assert scored(store, "travel") == sorted(stops)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--limit", "3"], "--watch stores a run per look: --limit, --full, --run-id"),
        (["--run-id", "r1"], "--watch stores a run per look"),
        (["--alert", "hitl_policy<1"], "--alert needs --alert-hook"),
        (["--alert", "hitl_policy", "--alert-hook", "true"], "write KEY<THRESHOLD"),
        (["--alert", "hitl_policy<x", "--alert-hook", "true"], "'x' is not a number"),
        (["--alert-hook", "true"], "--alert-hook goes with --alert"),
    ],
)
def test_watch_options_that_cannot_go_together_are_refused(
    tmp_path: Path, extra: list[str], message: str
) -> None:
    result = runner.invoke(app, [
        "sweep", "--watch", "--graph", GRAPH, "--checkpointer",
        f"sqlite:///{tmp_path / 't.sqlite'}", "--store", f"sqlite:///{tmp_path / 'r.sqlite'}",
        *extra,
    ])  # fmt: skip
    assert result.exit_code == 2
    assert message in result.output


def test_alerts_without_watch_are_refused(tmp_path: Path) -> None:
    result = runner.invoke(app, [
        "sweep", "--graph", GRAPH, "--checkpointer", f"sqlite:///{tmp_path / 't.sqlite'}",
        "--alert", "hitl_policy<1", "--alert-hook", "true",
    ])  # fmt: skip
    assert result.exit_code == 2
    assert "--alert and --alert-hook go with --watch" in result.output
