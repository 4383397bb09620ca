"""What ran, from LangGraph itself: record a scenario's live task stream, turn by turn,
and check an extracted trajectory against it.

:func:`record` plays a scenario with ``graph.stream(..., stream_mode=["tasks", "updates"],
subgraphs=True)`` instead of ``invoke``: every task start and result LangGraph reports, in
every namespace, and the ``__interrupt__`` updates the root reports. :func:`check` then
compares an extracted :class:`~lg_eval.ThreadTrajectory` with that record, turn by turn:

* the multiset of node paths that started equals the turn's ``resumed="repeat"`` steps
  (without ``__start__`` and ``__interrupt__``, which LangGraph does not stream as tasks);
  with ``resumed="omit"``, the same minus the tasks that paused in an earlier turn and did
  not pause again;
* within each parent (the root, or one subgraph path), the supersteps come in the order
  they started, each with the same nodes in the same order: the order LangGraph planned
  and streamed them (``Send`` tasks first, then the triggered nodes by name);
* ``__interrupt__`` appears once per interrupt the root reported when the turn paused (once
  for a static breakpoint, which reports none), and never otherwise;
* the turn starts with ``__start__`` exactly when its input was fresh (not ``None``, not a
  ``Command``);
* its status is ``"interrupted"`` exactly when the root paused, ``"error"`` exactly when
  the call raised; ``breakpoint`` exactly when it paused with no interrupt (a static
  breakpoint); its pending interrupts are the ids the root reported;
* its kind is ``"input"`` for a fresh input, ``"resume"`` for a ``Command(resume=...)``,
  ``"continue"`` otherwise.

So expected trajectories come from LangGraph's behaviour, not from lists written by hand.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.pregel import Pregel
from langgraph.types import Command

from graphs.scenarios import Scenario, adrive, drive
from lg_eval._trajectory import INTERRUPT, START, Superstep, ThreadTrajectory

MODES = ["tasks", "updates"]


@dataclass
class LiveTask:
    """One task start LangGraph streamed."""

    path: str
    """Node names from the root joined by ':' (as the trajectory lists them)."""
    key: tuple[str, str]
    """``(namespace with task ids, task id)``: the same for a task and its resumed re-run."""


@dataclass
class LiveTurn:
    """What one call on the thread streamed."""

    fresh: bool
    resuming: bool = False
    """Whether the call was a ``Command(resume=...)``."""
    started: list[LiveTask] = field(default_factory=list)
    paused: set[tuple[str, str]] = field(default_factory=set)
    """Tasks whose result carried interrupts (a paused node, or the parent of one)."""
    raised: bool = False
    """Whether the call raised (an error, not a pause)."""
    interrupts: int | None = None
    """How many interrupts the root reported (``0`` for a static breakpoint), ``None`` if it
    did not pause."""
    interrupt_ids: list[str] = field(default_factory=list)
    """The ids of the interrupts the root reported, in order."""

    done: set[tuple[str, str]] = field(default_factory=set)
    """Tasks whose result carried no interrupt and no error (they finished)."""
    batches: list[tuple[str, list[str]]] = field(default_factory=list)
    """Consecutive starts in one namespace (one superstep there): ``(parent path, paths)``."""
    _open: dict[str, list[str]] = field(default_factory=dict)

    def waiting(self) -> set[tuple[str, str]]:
        """Tasks this call left waiting: they paused (or hold a paused subgraph), or, when the
        call paused, started without finishing (a static breakpoint inside a subgraph)."""
        if self.interrupts is None:
            return self.paused
        return self.paused | {t.key for t in self.started if t.key not in self.done}

    @property
    def kind(self) -> str:
        """The turn kind the call makes: fresh input, a resume, or a continuation."""
        return "input" if self.fresh else "resume" if self.resuming else "continue"

    def take(
        self, ns: tuple[str, ...], mode: str, data: Any, finished: set[tuple[str, str]]
    ) -> None:
        """One stream event; ``finished`` holds the tasks that finished in earlier turns
        (LangGraph streams them as started again when it re-applies their writes)."""
        if mode == "updates":
            if not ns and isinstance(data, dict) and INTERRUPT in data:
                self.interrupts = (self.interrupts or 0) + len(data[INTERRUPT])
                self.interrupt_ids.extend(i.id for i in data[INTERRUPT])
            return
        namespace = "|".join(ns)
        key = (namespace, data["id"])
        if "triggers" not in data:  # a result event
            self._open.pop(namespace, None)
            if data.get("interrupts"):
                self.paused.add(key)
            elif not data.get("error"):
                self.done.add(key)
            return
        if key in finished:
            return
        prefix = "".join(f"{_owner(part)}:" for part in ns if not part.isdigit())
        path = f"{prefix}{data['name']}"
        self.started.append(LiveTask(path, key))
        batch = self._open.get(namespace)
        if batch is None:
            batch = self._open[namespace] = []
            self.batches.append((prefix[:-1], batch))
        batch.append(path)


def _owner(part: str) -> str:
    """The node name of one namespace part (``"node:<task id>"``)."""
    return part.split(":")[0]


def _resuming(payload: Any) -> bool:
    return isinstance(payload, Command) and payload.resume is not None


def _fresh(payload: Any) -> bool:
    return payload is not None and not isinstance(payload, Command)


def recorder(turns: list[LiveTurn]) -> Any:
    def call(graph: Pregel, payload: Any, config: RunnableConfig) -> None:
        finished = set().union(*(t.done for t in turns))
        turn = LiveTurn(fresh=_fresh(payload), resuming=_resuming(payload))
        turns.append(turn)
        try:
            for ns, mode, data in graph.stream(payload, config, stream_mode=MODES, subgraphs=True):
                turn.take(ns, mode, data, finished)
        except Exception:
            turn.raised = True
            raise

    return call


def arecorder(turns: list[LiveTurn]) -> Any:
    async def call(graph: Pregel, payload: Any, config: RunnableConfig) -> None:
        finished = set().union(*(t.done for t in turns))
        turn = LiveTurn(fresh=_fresh(payload), resuming=_resuming(payload))
        turns.append(turn)
        try:
            async for ns, mode, data in graph.astream(
                payload, config, stream_mode=MODES, subgraphs=True
            ):
                turn.take(ns, mode, data, finished)
        except Exception:
            turn.raised = True
            raise

    return call


def record(scenario: Scenario, checkpointer: Any, thread_id: str = "t") -> tuple[Pregel, list]:
    """Play ``scenario`` on a fresh graph, streaming; the graph and what each turn ran."""
    graph = scenario.build(checkpointer=checkpointer)
    turns: list[LiveTurn] = []
    drive(graph, thread_id, scenario.turns, call=recorder(turns))
    return graph, turns


async def arecord(
    scenario: Scenario, checkpointer: Any, thread_id: str = "t"
) -> tuple[Pregel, list]:
    """:func:`record` with ``astream`` (for async checkpointers)."""
    graph = scenario.build(checkpointer=checkpointer)
    turns: list[LiveTurn] = []
    await adrive(graph, thread_id, scenario.turns, call=arecorder(turns))
    return graph, turns


def _nodes(steps: Sequence[str]) -> list[str]:
    return [s for s in steps if s != INTERRUPT and not (s == START or s.endswith(f":{START}"))]


def _order(batches: Sequence[tuple[str, list[str]]]) -> dict[str, list[list[str]]]:
    """Per parent path, its supersteps in order, each listing its tasks in order (the
    stream reports a superstep's task starts in the order LangGraph planned them)."""
    grouped: dict[str, list[list[str]]] = {}
    for parent, paths in batches:
        if paths:
            grouped.setdefault(parent, []).append(list(paths))
    return grouped


def _extracted_batches(supersteps: list[Superstep], parent: str = "") -> list:
    """The extracted supersteps as ``(parent path, paths)`` batches, depth-first. The
    ``@task`` calls of a functional-API entrypoint start in its own namespace's superstep
    (LangGraph streams them as pushed there), so they join the entrypoint's batch."""
    found: list[tuple[str, list[str]]] = []
    for superstep in supersteps:
        names = [t.path for t in superstep.tasks if t.name != START]
        found.append((parent, names))
        for task in superstep.tasks:
            nested = _extracted_batches(task.subgraph, task.path)
            for owner, paths in nested:
                if paths and all(p.rpartition(":")[0] == parent for p in paths):
                    names.extend(paths)  # functional-API calls: same namespace
                else:
                    found.append((owner, paths))
    return found


def expected_omitted(live: list[LiveTurn], index: int) -> Counter[str]:
    """Paths ``resumed="omit"`` leaves out of turn ``index``: tasks re-run after a pause in
    an earlier turn that do not pause again. A task re-planned by an ``update_state`` made
    while it waited has a new id; a ``Command(resume=...)`` answering it still resumes it:
    the first run of each path that waited (a subgraph starts again, so a node inside it may
    run once more later in the turn, afresh)."""
    earlier = set().union(*(t.waiting() for t in live[:index]))
    turn = live[index]
    if not turn.resuming or not index or any(t.key in earlier for t in turn.started):
        return Counter(
            t.path for t in turn.started if t.key in earlier and t.key not in turn.waiting()
        )
    waiting = Counter(t.path for t in live[index - 1].started if t.key in earlier)
    omitted: Counter[str] = Counter()
    for task in turn.started:
        if waiting[task.path]:
            waiting[task.path] -= 1
            if task.key not in turn.waiting():
                omitted[task.path] += 1
    return omitted


def check(trajectory: ThreadTrajectory, live: list[LiveTurn]) -> None:
    """Assert that ``trajectory`` lists what LangGraph streamed, turn by turn."""
    repeat = trajectory.to_graph_trajectory(resumed="repeat").steps
    omit = trajectory.to_graph_trajectory(resumed="omit").steps
    assert len(repeat) == len(live), (repeat, [[t.path for t in turn.started] for turn in live])
    for index, (steps, omitted, turn) in enumerate(zip(repeat, omit, live, strict=True)):
        where = f"turn {index}: {steps} (live: {[t.path for t in turn.started]})"
        started = [t.path for t in turn.started]
        assert Counter(_nodes(steps)) == Counter(started), where
        ours = _order(_extracted_batches(trajectory.turns[index].supersteps))
        assert ours == _order(turn.batches), f"order, {where}"
        expected = Counter(started) - expected_omitted(live, index)
        assert Counter(_nodes(omitted)) == expected, f"omit {where}: {omitted}"
        markers = steps.count(INTERRUPT)
        wanted = 0 if turn.interrupts is None else max(turn.interrupts, 1)
        assert markers == wanted, f"{where}: {markers} markers, live paused: {turn.interrupts}"
        assert omitted.count(INTERRUPT) == wanted, f"omit {where}"
        assert (steps[:1] == [START]) == turn.fresh, where
        assert (omitted[:1] == [START]) == turn.fresh, where
        extracted = trajectory.turns[index]
        status = extracted.status
        assert (status == "interrupted") == (turn.interrupts is not None), f"{where}: {status}"
        assert (status == "error") == turn.raised, f"{where}: {status}"
        assert extracted.kind == turn.kind, f"{where}: {extracted.kind}"
        assert extracted.breakpoint == (turn.interrupts == 0), f"{where}: breakpoint"
        pending = sorted(i.id or "" for i in extracted.interrupts)
        assert pending == sorted(turn.interrupt_ids), f"{where}: interrupts {pending}"
