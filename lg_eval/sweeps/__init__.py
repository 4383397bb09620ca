"""Sweeps: score the threads already in a checkpointer (production traffic), incrementally.

:func:`sweep_threads` lists a SQLite or Postgres checkpointer's threads by the time
of their newest checkpoint and their checkpoint metadata, extracts each with the
fast reader, scores it with reference-free evaluators and stores it in the results
store as a run (dataset ``sweep:<name>``, one case per thread), remembering the
checkpoint it scored so that the next sweep scores only what changed. :class:`Watch`
keeps sweeping as threads change (scoring each when its run stops), and calls the hooks of
its :class:`Alert` s when a key's pass rate falls.
"""

from lg_eval.sweeps._alerts import Alert, Fired
from lg_eval.sweeps._listing import SweepError, ThreadHead, checkpoint_bound, checkpoint_time
from lg_eval.sweeps._options import SweepOptions
from lg_eval.sweeps._report import sweep_json, write_sweep_html, write_sweep_json
from lg_eval.sweeps._result import SweepResult, WorstThread
from lg_eval.sweeps._sweep import sweep_threads
from lg_eval.sweeps._watch import Watch, WatchPass, WatchTotals

__all__ = [
    "Alert",
    "Fired",
    "SweepError",
    "SweepOptions",
    "SweepResult",
    "ThreadHead",
    "Watch",
    "WatchPass",
    "WatchTotals",
    "WorstThread",
    "checkpoint_bound",
    "checkpoint_time",
    "sweep_json",
    "sweep_threads",
    "write_sweep_html",
    "write_sweep_json",
]
