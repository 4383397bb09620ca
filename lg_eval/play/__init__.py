"""The turn player: play a dataset case on a graph, on a checkpointer named by URL.

:func:`play_case` / :func:`aplay_case` play a :class:`~lg_eval.datasets.Case`'s
turns on one fresh thread and return a :class:`PlayedCase`; they are the only
turn loop in lg_eval (experiments, the LangSmith target and the pytest fixture
call them). :func:`resolve_target` turns a ``"module:attr"`` reference, a
compiled graph, a builder or a factory into a graph bound to a checkpointer;
:func:`open_checkpointer` / :func:`aopen_checkpointer` open the checkpointer a
URL names (``sqlite:///...``, ``postgresql://...``, ``memory://``, or the
default ``.lg_eval/checkpoints.sqlite``).
"""

from lg_eval.play._checkpointers import aopen_checkpointer, open_checkpointer
from lg_eval.play._models import PendingInterrupt, PlayedCase, PlayedTurn
from lg_eval.play._player import (
    Reviewer,
    aplay_case,
    call_user,
    describe_asks,
    pending_interrupts,
    play_case,
    playing,
    read_state,
    run_turn,
    thread_config,
)
from lg_eval.play._targets import import_reference, resolve_target
from lg_eval.play._types import Graph, Saver
from lg_eval.play.reviewer import ReviewerError, SimulatedReviewer

__all__ = [
    "Graph",
    "PendingInterrupt",
    "PlayedCase",
    "PlayedTurn",
    "Reviewer",
    "ReviewerError",
    "Saver",
    "SimulatedReviewer",
    "aopen_checkpointer",
    "aplay_case",
    "call_user",
    "describe_asks",
    "import_reference",
    "open_checkpointer",
    "pending_interrupts",
    "play_case",
    "playing",
    "read_state",
    "resolve_target",
    "run_turn",
    "thread_config",
]
