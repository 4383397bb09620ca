"""``lg-eval sweep --watch``: keep sweeping until Ctrl-C or SIGTERM, a line per pass.

The watch itself is :class:`lg_eval.sweeps.Watch`; this module turns its passes into
status lines on stderr (one per pass that scored threads or fired an alert), its alerts'
options into :class:`~lg_eval.sweeps.Alert` s, and a stop into one line and exit code 130
(what was scored stays stored; the same command goes on from there). SIGTERM stops it as
Ctrl-C does.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

import typer

from lg_eval.cli._common import INTERRUPTED, fail, input_errors, say
from lg_eval.cli._progress import sigterm_as_ctrl_c
from lg_eval.errors import InvalidOptionError
from lg_eval.sweeps import Alert, SweepOptions, Watch, WatchPass
from lg_eval.sweeps._alerts import shown_hook

_ALERT = re.compile(r"^\s*(?:(?P<stat>pass_rate|mean):)?(?P<key>[^<\s]+)\s*<\s*(?P<below>\S+)\s*$")


def alerts(given: list[str] | None, window: str, hook: str | None) -> list[Alert]:
    """``--alert KEY<THRESHOLD`` (or ``mean:KEY<THRESHOLD``) items, each with the window
    and the hook; a malformed one is a usage error naming it."""
    if not given:
        if hook is not None:
            fail("--alert-hook goes with --alert KEY<THRESHOLD")
        return []
    if hook is None:
        fail("--alert needs --alert-hook (a command, or an http(s):// URL)")
    found = []
    for item in given:
        parsed = _ALERT.match(item)
        if parsed is None:
            fail(f"--alert {item!r}: write KEY<THRESHOLD, e.g. hitl_policy<1.0 (or mean:KEY<0.8)")
        try:
            below = float(parsed["below"])
        except ValueError:
            fail(f"--alert {item!r}: {parsed['below']!r} is not a number")
        fields: dict[str, Any] = {"key": parsed["key"], "below": below, "window": window}
        fields.update(hook=hook, stat=parsed["stat"] or "pass_rate")
        try:
            found.append(Alert.of(fields))
        except InvalidOptionError as exc:
            fail(f"--alert {item!r}: {exc}")
    return found


def watch(
    graph: str | None,
    checkpointer: str | None,
    options: SweepOptions,
    idle: float,
    alerts: list[Alert],
    every: float,
    quiet: bool,
) -> None:
    """Run the watch of ``options`` until stopped."""
    totals = {"scored": 0, "runs": 0, "in_pass": 0}

    def progress(scored: int, passed: int, failed: int) -> None:
        totals["in_pass"] = scored

    def on_pass(done: WatchPass) -> None:
        totals["in_pass"] = 0
        totals["scored"] += done.scored
        totals["runs"] += bool(done.scored)
        if not quiet:
            for line in pass_lines(name, done):
                say(line)

    name = str(options.get("name") or "")
    given = options | SweepOptions(progress=progress)
    try:
        with (
            input_errors(),
            sigterm_as_ctrl_c(),
            Watch(graph, checkpointer, idle=idle, alerts=alerts, **given) as running,
        ):
            name = running.name
            say(f"watching sweep {name} every {every:g} s (Ctrl-C stops)")
            running.run(every=every, on_pass=on_pass)
    except KeyboardInterrupt:
        scored = totals["scored"] + totals["in_pass"]
        fail(
            f"interrupted: watch {name} stored {scored} scored thread(s) in "
            f"{totals['runs'] + bool(totals['in_pass'])} run(s); run the same command to go "
            "on (threads already scored are not scored again)",
            INTERRUPTED,
        )
    raise typer.Exit(0)


def pass_lines(name: str, done: WatchPass) -> list[str]:
    """What a pass says: the threads it scored (and how many failed), its alerts."""
    lines = []
    stamp = f"{done.at.astimezone():%H:%M:%S}" if isinstance(done.at, datetime) else ""
    if done.scored and done.result is not None:
        counts = done.result.counts
        failing = counts.total - counts.passed
        waiting = f"; {done.waiting} still running" if done.waiting else ""
        lines.append(
            f"{stamp} {name}: {done.scored} thread(s) scored, {failing} not passed, in run "
            f"{done.result.info.run_id}{waiting}"
        )
    for fired in done.fired:
        alert = fired.alert
        sent = "not sent: " + fired.error if fired.error else f"sent to {shown_hook(alert.hook)}"
        lines.append(
            f"{stamp} alert {alert.key} {alert.stat} {fired.value:.3g} < {alert.below:g}: "
            f"{len(fired.failing)} new failing thread(s) {sent}"
        )
    return lines
