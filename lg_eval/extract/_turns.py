"""Top-level segments as :class:`~lg_eval._trajectory.Turn` models: answers keyed by
interrupt id and by node, results decoded lazily, and the ambiguous-resume warning."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lg_eval._trajectory import TaskRun, Turn, walk_tasks
from lg_eval.extract._plans import Segment
from lg_eval.extract._records import CheckpointRecord
from lg_eval.extract._results import turn_result


def make_turn(index: int, segment: Segment) -> Turn:
    end = segment.end or segment.start
    load = _once(end.values if end.values is not None else _no_state)
    runs = list(walk_tasks(segment.supersteps))
    answered = [r for r in runs if r.answered is not None or r.resume_value is not None]
    interrupts = [i for r in runs for i in r.interrupts]
    error = next((r.error for r in runs if r.error), None)
    turn = Turn(
        index=index,
        kind=segment.kind,
        input=segment.input_value,
        resume={r.answered or r.path: r.resume_value for r in answered} or None,
        resume_by_node=_by_node(answered) or None,
        edits=segment.edits,
        update=segment.update,
        supersteps=segment.supersteps,
        status=segment.status,
        interrupts=interrupts if segment.status == "interrupted" else [],
        error=(error or segment.error) if segment.status == "error" else None,
        breakpoint=segment.breakpoint and not segment.branched,
        branched=segment.branched,
        next_nodes=segment.next_nodes if segment.status != "completed" else [],
        result=_result(end, load) if segment.status == "completed" else {},
        start_checkpoint_id=segment.start.id,
        end_checkpoint_id=end.id,
        started_at=segment.start.created_at,
        ended_at=end.created_at,
    )
    turn.defer_state(load)  # decoded only if someone reads turn.state
    return turn


def _by_node(answered: list[TaskRun]) -> dict[str, Any]:
    """Answers keyed by the path of the node that received them; where several runs of one
    path were answered in the turn (``Send`` tasks of one node), by ``path[i]``, ``i``
    counting those runs in listing order, so that no answer is lost."""
    counts: dict[str, int] = {}
    for run in answered:
        counts[run.path] = counts.get(run.path, 0) + 1
    keyed: dict[str, Any] = {}
    seen: dict[str, int] = {}
    for run in answered:
        if counts[run.path] == 1:
            keyed[run.path] = run.resume_value
        else:
            index = seen[run.path] = seen.get(run.path, -1) + 1
            keyed[f"{run.path}[{index}]"] = run.resume_value
    return keyed


def ambiguous_resumes(turns: list[Turn]) -> list[str]:
    """One warning per turn that resumed several interrupts: storage cannot tell one resume
    answering them all from answers given one at a time (a re-raised interrupt overwrites
    its slot), so the turn count is the fewest consistent with storage."""
    found = []
    for turn in turns:
        answered = len(turn.resume or {})
        if answered > 1:
            found.append(
                f"Turn {turn.index + 1} resumes {answered} interrupts at once; the number of "
                "resumes is ambiguous: checkpoints store answers given one at a time "
                "(Command(resume={id: value}) per interrupt) exactly like one resume answering "
                f"all of them, so this may have been up to {answered} invocations. lg_eval "
                "reports the fewest turns consistent with storage."
            )
    return found


def _result(end: CheckpointRecord, load: Callable[[], Any]) -> Any:
    """A completed turn's flat-form result, without decoding the whole state if possible."""
    return end.result() if end.result is not None else turn_result(load())


def _no_state() -> None:
    return None


def _once(load: Callable[[], Any]) -> Callable[[], Any]:
    """``load`` memoized: a completed turn's result and its state share one decode."""
    cache: list[Any] = []

    def once() -> Any:
        if not cache:
            cache.append(load())
        return cache[0]

    return once
