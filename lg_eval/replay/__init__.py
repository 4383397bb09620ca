"""Counterfactual replay: run a new version of a graph from a point of real threads.

:func:`replay_threads` selects threads of a production checkpointer (as sweeps do),
forks each at ``last-interrupt`` (default), ``turn:N`` or ``before:NODE``, copies it up
to there onto a fresh thread of a separate target checkpointer, runs the new graph from
that checkpoint answering its interrupts with the answers the original's humans gave
(by node, in order; ``on_new_question`` says what happens when the new graph asks
something they never answered), and scores old and new with the same evaluators. The
:class:`ReplayResult` says per thread whether the trajectory changed (with a diff) and
how each score moved. The production threads are only read. A named replay (``run=``)
into a kept target is incremental: forks finished at a thread's current newest
checkpoint are reused (:mod:`lg_eval.replay._state`).
"""

from lg_eval.replay._drive import MAX_CALLS, OnNewQuestion, Outcome
from lg_eval.replay._fork import ForkSpec, Humans
from lg_eval.replay._replay import DEFAULT_TARGET, new_run_name, replay_threads
from lg_eval.replay._result import ReplayedThread, ReplayResult, ReplayStatus, ScoreChange

__all__ = [
    "DEFAULT_TARGET",
    "MAX_CALLS",
    "ForkSpec",
    "Humans",
    "OnNewQuestion",
    "Outcome",
    "ReplayResult",
    "ReplayStatus",
    "ReplayedThread",
    "ScoreChange",
    "new_run_name",
    "replay_threads",
]
