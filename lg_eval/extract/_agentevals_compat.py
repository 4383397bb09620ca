"""Drop-in twins of agentevals' LangGraph extractors, with lg_eval's semantics.

``extract_langgraph_trajectory_from_thread`` returns exactly agentevals' dict
shape, ``{"inputs": [...], "outputs": {"inputs": [], "results": [...],
"steps": [...]}}``, so switching is a change of import. Where agentevals is
right the values are identical; where it misreads a thread (subgraphs,
breakpoints, errors, repeated interrupts, forks ...) they are correct.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, TypedDict

from langchain_core.runnables import RunnableConfig
from langgraph.types import StateSnapshot

from lg_eval._trajectory import ResumedMode, ThreadTrajectory
from lg_eval.errors import ThreadNotFoundError, TrajectoryFormatError
from lg_eval.extract._assemble import assemble
from lg_eval.extract._records import (
    PUSH,
    ROOT_NS,
    CheckpointRecord,
    TaskRecord,
    ThreadRecords,
    plan_source,
    planned_by_name,
    planning_order,
)
from lg_eval.extract._selection import choose_tip, group_by_namespace
from lg_eval.extract._thread import Reader, aextract_thread, extract_thread


class FlatOutputs(TypedDict):
    inputs: list[Any]
    results: list[Any]
    steps: list[list[str]]


class ExtractedThread(TypedDict):
    """agentevals' ``ExtractedLangGraphThreadTrajectory`` shape."""

    inputs: list[Any]
    outputs: FlatOutputs


def to_agentevals(trajectory: ThreadTrajectory, resumed: ResumedMode = "omit") -> ExtractedThread:
    """The agentevals dict for a :class:`ThreadTrajectory`."""
    if not isinstance(trajectory, ThreadTrajectory):
        raise TrajectoryFormatError(
            f"trajectory={trajectory!r:.80}: expected a ThreadTrajectory (extract_thread)."
        )
    flat = trajectory.to_graph_trajectory(resumed=resumed)
    return {
        "inputs": flat.inputs,
        "outputs": {"inputs": [], "results": flat.results, "steps": flat.steps},
    }


def extract_langgraph_trajectory_from_thread(
    graph: Any, config: RunnableConfig, *, resumed: ResumedMode = "omit", reader: Reader = "auto"
) -> ExtractedThread:
    """Extract a thread in agentevals' shape (see :func:`lg_eval.extract_thread`)."""
    return to_agentevals(extract_thread(graph, config, reader=reader), resumed)


async def aextract_langgraph_trajectory_from_thread(
    graph: Any, config: RunnableConfig, *, resumed: ResumedMode = "omit", reader: Reader = "auto"
) -> ExtractedThread:
    """Async twin of :func:`extract_langgraph_trajectory_from_thread`."""
    return to_agentevals(await aextract_thread(graph, config, reader=reader), resumed)


def extract_langgraph_trajectory_from_snapshots(
    snapshots: Iterable[Any], *, resumed: ResumedMode = "omit"
) -> ExtractedThread:
    """Build the trajectory from ``StateSnapshot`` objects alone (agentevals' entry point).

    Pass the thread's history, including subgraph snapshots, as agentevals'
    recursive history helper collects it. Snapshots do not carry the control
    writes a checkpointer keeps, so a node that called ``interrupt()`` several
    times, and a static breakpoint in the middle of a thread, can only be seen
    by :func:`extract_langgraph_trajectory_from_thread`; prefer it when you have
    the graph.
    """
    return to_agentevals(assemble(records_from_snapshots(snapshots)), resumed)


def records_from_snapshots(snapshots: Iterable[Any]) -> ThreadRecords:
    """Best-effort :class:`ThreadRecords` from state snapshots.

    Raises:
        TrajectoryFormatError: ``snapshots`` is no iterable of ``StateSnapshot``.
        ThreadNotFoundError: it is empty.
    """
    if isinstance(snapshots, str | bytes | Mapping) or not isinstance(snapshots, Iterable):
        raise TrajectoryFormatError(
            f"snapshots={snapshots!r:.80}: pass list(graph.get_state_history(config))."
        )
    items = list(snapshots)
    for index, item in enumerate(items):
        if not isinstance(item, StateSnapshot):
            raise TrajectoryFormatError(
                f"snapshots[{index}]={item!r:.80}: expected a StateSnapshot, as "
                "graph.get_state_history(config) yields."
            )
    if not items:
        raise ThreadNotFoundError(
            "No snapshots were given. Pass list(graph.get_state_history(config)) of a thread "
            "that has run, or use extract_langgraph_trajectory_from_thread(graph, config)."
        )
    thread_id = str(items[0].config["configurable"].get("thread_id", "<snapshots>"))
    by_name = planned_by_name(plan_source(s) for s in items)
    records = (
        _snapshot_record(s, s.config["configurable"]["checkpoint_id"] in by_name) for s in items
    )
    by_ns = group_by_namespace(records, thread_id)
    return ThreadRecords(
        thread_id=thread_id, by_ns=by_ns, tip_id=choose_tip(by_ns, thread_id, None)
    )


def _snapshot_record(snapshot: Any, by_name: bool) -> CheckpointRecord:
    configurable = snapshot.config["configurable"]
    metadata = snapshot.metadata or {}
    tasks = []
    for task in snapshot.tasks:
        record = TaskRecord(id=task.id, name=task.name)
        record.interrupts = [(i.id, i.value) for i in task.interrupts]
        record.error = str(task.error) if task.error else None
        record.finished = task.result is not None
        if record.interrupts and record.finished:
            record.resumes = [None]  # it paused, then finished: one answer, value not kept
        if task.name == "__start__":
            record.input_value = task.result
        tasks.append(record)
    # get_state lists the tasks in the graph's order, the order of a run without
    # updated_channels; a run with them plans by name (planned_by_name).
    pushed = {t.id for t in snapshot.tasks if t.path[:1] == (PUSH,)}
    tasks = planning_order(tasks, pushed, None if by_name else {})
    values = snapshot.values
    return CheckpointRecord(
        id=configurable["checkpoint_id"],
        ns=configurable.get("checkpoint_ns", ROOT_NS),
        parent_id=(snapshot.parent_config or {}).get("configurable", {}).get("checkpoint_id"),
        source=metadata.get("source", "loop"),
        step=metadata.get("step", 0),
        parents=dict(metadata.get("parents") or {}),
        created_at=snapshot.created_at,
        tasks=tasks,
        interrupt_seen=None,
        values=lambda: values,
        input_value=next((t.input_value for t in tasks if t.name == "__start__"), None),
    )
