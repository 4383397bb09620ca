"""Assemble turns from checkpoint records: the semantics of lg_eval's extraction.

LangGraph saves one checkpoint per superstep. The tasks planned at checkpoint
``C`` run to produce its child, but a run can *stop* at ``C`` (an interrupt, a
static breakpoint, an error, the end of the graph) and later invocations can
resume there, so one checkpoint's tasks may execute over several invocations.
We call each invocation's presence at a checkpoint a *visit*:

* visit 0 is the *arrival*: the run that created ``C`` goes on with its tasks
  (``update``/``fork`` checkpoints have no arrival; no graph run made them);
* each later visit is a resume (``Command(resume=...)``) or a continuation
  (``invoke(None)`` after a breakpoint or an error) at ``C``.

What each task did on each visit is read from its control writes: every answer
in its ``RESUME`` list follows one pause, an ``ERROR`` next to an output write
means it failed once and then succeeded, and a subgraph task ran once per
invocation of its subgraph (found recursively in the child namespace). A visit
that is not the checkpoint's last ends a turn; the last one ends a turn only if
the run stopped there. Everything here is pure: readers do the I/O.
"""

from __future__ import annotations

from itertools import pairwise

from lg_eval._trajectory import ThreadTrajectory
from lg_eval.extract._index import CheckpointIndex
from lg_eval.extract._records import ROOT_NS, CheckpointRecord, ThreadRecords
from lg_eval.extract._segments import lineage_segments
from lg_eval.extract._turns import ambiguous_resumes, make_turn


def assemble(records: ThreadRecords) -> ThreadTrajectory:
    """Build the :class:`ThreadTrajectory` for the lineage ending at ``records.tip_id``."""
    index = CheckpointIndex(records)
    lineage = index.lineage(ROOT_NS, records.tip_id, lambda r: True)
    warnings = list(records.warnings) + _gap_warnings(lineage)
    segments = lineage_segments(lineage, index, path_prefix="")
    turns = [make_turn(i, seg) for i, seg in enumerate(segments)]
    warnings.extend(ambiguous_resumes(turns))
    warnings.extend(_unread_shapes(records, lineage))
    return ThreadTrajectory(
        thread_id=records.thread_id,
        lineage=[r.id for r in lineage],
        turns=turns,
        warnings=warnings,
    )


def _gap_warnings(lineage: list[CheckpointRecord]) -> list[str]:
    """Say so when history is missing (``durability="exit"`` or pruned checkpoints)."""
    if not lineage:
        return []
    gaps = [(a, b) for a, b in pairwise(lineage) if b.source == "loop" and b.step != a.step + 1]
    first = lineage[0]
    if first.source == "input" and not gaps:
        return []
    return [
        "Checkpoint history is incomplete: the thread has no checkpoint for some supersteps "
        "(it was probably run with durability='exit', or old checkpoints were pruned). Steps "
        "that ran between saved checkpoints are missing from this trajectory; run the graph "
        "with durability='async' or 'sync' to record every superstep."
    ]


def _unread_shapes(records: ThreadRecords, lineage: list[CheckpointRecord]) -> list[str]:
    """Warnings naming shapes lg_eval does not read exactly yet (never a silent gap)."""
    return []
