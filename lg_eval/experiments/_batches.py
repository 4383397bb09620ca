"""Quick cases played back to back, then scored back to back, on one worker thread.

Scoring a case (reading its thread back, assembling the trajectory, the evaluators,
building its result) runs lg_eval's own code; right after the graph's run that code and
its data are cold in the CPU's caches, and it costs about twice what it costs warm. A
worker therefore plays quick cases one after another, holding each at the
:data:`~lg_eval.experiments._case.PLAYED` point of its core, and then finishes them one
after another: up to :data:`BATCH_CASES` cases, while the batch has taken less than
:data:`BATCH_SECONDS`. A case that takes longer (a real model) ends the batch at once, so
slow cases are played and stored one at a time as before.

Held cases are in flight: they are not stored until the batch is scored, so a killed run
plays again at most ``concurrency * BATCH_CASES`` quick cases (each worker's batch), and at
most ``concurrency`` cases that took :data:`BATCH_SECONDS` or longer.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable

from lg_eval._effects import Paused, drive_until
from lg_eval.experiments._case import PLAYED, CaseContext, CasePlan, run_case
from lg_eval.experiments.results import CaseResult

BATCH_CASES = 8
"""Most cases a worker plays before it scores them."""
BATCH_SECONDS = 0.05
"""A batch takes no more cases once it has run this long (seconds of wall time)."""

Finished = list[tuple[CasePlan, CaseResult]]


class PlanSource:
    """The run's plans, taken one at a time by any worker thread."""

    def __init__(self, plans: Iterable[CasePlan]) -> None:
        self._plans = iter(plans)
        self._lock = threading.Lock()

    def take(self) -> CasePlan | None:
        """The next plan, or None when every plan was taken."""
        with self._lock:
            return next(self._plans, None)


def play_batch(
    context: CaseContext, first: CasePlan, more: Callable[[], CasePlan | None] | None
) -> Finished:
    """Play ``first`` and, while the batch is quick, more plans from ``more`` (None: just
    ``first``); then score the held cases. Results in the order the cases finished."""
    done: Finished = []
    held: list[tuple[CasePlan, Paused[CaseResult], float]] = []
    started = time.perf_counter()
    plan: CasePlan | None = first
    while plan is not None:
        state = drive_until(run_case(context, plan), PLAYED)
        if isinstance(state, Paused):
            held.append((plan, state, time.perf_counter()))
        else:  # it ended before its scoring (a script mismatch, a refused option)
            done.append((plan, state))
        full = len(done) + len(held) >= BATCH_CASES
        if more is None or full or time.perf_counter() - started >= BATCH_SECONDS:
            break
        plan = more()
    for plan, paused, since in held:
        done.append((plan, paused.resume(time.perf_counter() - since)))
    return done


__all__ = ["BATCH_CASES", "BATCH_SECONDS", "Finished", "PlanSource", "play_batch"]
