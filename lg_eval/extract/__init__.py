"""Extractors: checkpointed LangGraph threads to trajectories.

:func:`extract_thread` / :func:`aextract_thread` read a thread from any
checkpointer into a :class:`~lg_eval.ThreadTrajectory`; :func:`extract_threads` /
:func:`aextract_threads` stream the trajectories of many threads, reading a batch of
them per storage round trip where the saver allows it. The agentevals names
(:func:`extract_langgraph_trajectory_from_thread` and its async twin,
:func:`extract_langgraph_trajectory_from_snapshots`) return agentevals' dict
shape; :func:`to_agentevals` converts an extracted trajectory to it.
:func:`ambiguous_resumes` words the warning of a turn that resumed several interrupts
at once (a runner that sent that one resume itself knows there is no ambiguity).
"""

from lg_eval._display import print_trajectory, trajectory_text
from lg_eval._trajectory import InterruptRecord, StateEdit, Superstep, TaskRun
from lg_eval.extract._agentevals_compat import (
    aextract_langgraph_trajectory_from_thread,
    extract_langgraph_trajectory_from_snapshots,
    extract_langgraph_trajectory_from_thread,
    to_agentevals,
)
from lg_eval.extract._batch import aextract_threads, extract_threads
from lg_eval.extract._thread import ExtractionWarning, aextract_thread, extract_thread
from lg_eval.extract._turns import ambiguous_resumes

__all__ = [
    "ExtractionWarning",
    "InterruptRecord",
    "StateEdit",
    "Superstep",
    "TaskRun",
    "aextract_langgraph_trajectory_from_thread",
    "aextract_thread",
    "aextract_threads",
    "ambiguous_resumes",
    "extract_langgraph_trajectory_from_snapshots",
    "extract_langgraph_trajectory_from_thread",
    "extract_thread",
    "extract_threads",
    "print_trajectory",
    "to_agentevals",
    "trajectory_text",
]
