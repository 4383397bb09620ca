"""Where to fork a recorded thread, what its humans said after that, and the copy.

A fork point is a root checkpoint of the original thread: ``last-interrupt`` (the
newest checkpoint at which a node called ``interrupt()``), ``turn:N`` (the checkpoint
where the thread's input number ``N`` arrived, counted from 0; resumes are not inputs)
or ``before:NODE`` (the newest checkpoint whose next step runs ``NODE``).

The copy (:func:`copy_until`) reads the original through the saver's ``list`` and
writes a fresh thread of the *target* saver with ``put`` / ``put_writes`` — LangGraph's
own checkpointer API, so every saver works and the original is only read. It copies
every checkpoint (root and subgraph namespaces) made before the fork checkpoint with its
pending writes, and the fork checkpoint itself *without* its writes: the step that
starts there runs again, all of its tasks, in the new graph. That is the
counterfactual: the interrupted node (or ``NODE``) is the new graph's code, not the old
one's recorded outcome. A ``turn:N`` fork copies only what came before input ``N``
arrived; the replay then sends input ``N`` to the new graph as a new invocation, so the
turn is the new graph's from its first step (and an input turn in the trajectory).

What the humans said after the fork (:func:`recorded_humans`) comes from the pending
writes LangGraph keeps on each interrupted checkpoint: a task's ``__resume__`` write
lists the answers it consumed, in order; a plain ``Command(resume=value)`` is the
null task's ``__resume__`` write. Each answer keeps the question it answered when the
checkpoint still holds it: a task's ``__interrupt__`` write is its latest question, so
the last answer of a task whose step finished is paired with it, and the answers before
it (a node that asked several times in one step) keep no question. New inputs are the
``__start__`` value of each later ``input`` checkpoint.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import CheckpointTuple
from langgraph.types import Interrupt, StateSnapshot

from lg_eval.errors import InvalidOptionError
from lg_eval.play import PendingInterrupt, RecordedAnswer, Recording

_RESUME = "__resume__"
_INTERRUPT = "__interrupt__"
_NULL_TASK = "00000000-0000-0000-0000-000000000000"
_FORK = re.compile(r"^(last-interrupt|turn:([1-9][0-9]*)|before:([A-Za-z0-9_.:-]+))$")

ForkKind = Literal["last-interrupt", "turn", "before"]


@dataclass(frozen=True)
class ForkSpec:
    """A parsed fork option: its kind and its turn number or node name."""

    kind: ForkKind
    turn: int | None = None
    node: str | None = None

    @classmethod
    def parse(cls, text: str) -> ForkSpec:
        """``last-interrupt``, ``turn:N`` or ``before:NODE``; anything else is an
        :class:`~lg_eval.errors.InvalidOptionError` naming the forms."""
        match = _FORK.match(text.strip()) if isinstance(text, str) else None
        if match is None:
            raise InvalidOptionError(
                f"fork {text!r}: use last-interrupt, turn:N (the thread's N-th input, from 1) or "
                "before:NODE (a node name)."
            )
        if match.group(2) is not None:
            return cls("turn", turn=int(match.group(2)))
        if match.group(3) is not None:
            return cls("before", node=match.group(3))
        return cls("last-interrupt")

    def __str__(self) -> str:
        if self.kind == "turn":
            return f"turn:{self.turn}"
        if self.kind == "before":
            return f"before:{self.node}"
        return "last-interrupt"


Humans = Recording
"""What the original thread's humans said at and after the fork: answers per asking node
(in the order they were given, each with the question it answered when the checkpoints
hold it) and new inputs (in order), as the player's :class:`~lg_eval.play.Recording`
plays them."""


def root_history(graph: Any, thread_id: str) -> list[StateSnapshot]:
    """The thread's root snapshots, oldest first, read through ``graph``."""
    config: RunnableConfig = {"configurable": {"thread_id": thread_id}}
    return list(reversed(list(graph.get_state_history(config))))


def find_fork(history: list[StateSnapshot], spec: ForkSpec) -> int | None:
    """The index in ``history`` of the fork checkpoint, or None when the thread has none."""
    chosen: int | None = None
    inputs = 0
    for index, snapshot in enumerate(history):
        if (spec.kind == "last-interrupt" and any(t.interrupts for t in snapshot.tasks)) or (
            spec.kind == "before" and spec.node in snapshot.next
        ):
            chosen = index
        elif (
            spec.kind == "turn" and snapshot.metadata and snapshot.metadata.get("source") == "input"
        ):
            inputs += 1
            if inputs == spec.turn:
                return index
    return chosen


def describe_missing(spec: ForkSpec) -> str:
    """Why a thread has no fork point of this kind."""
    if spec.kind == "turn":
        return f"the thread has no input {spec.turn} (turn:N counts inputs from 1)"
    if spec.kind == "before":
        return f"no step of the thread runs node {spec.node!r}"
    return "the thread never asked a human (no interrupt to fork at)"


def recorded_humans(saver: Any, history: list[StateSnapshot], fork: int, spec: ForkSpec) -> Humans:
    """The answers and inputs the original thread's humans gave from ``history[fork]`` on
    (for a ``turn:N`` fork, the N-th input itself is the first recorded input)."""
    humans = Humans()
    newest = len(history) - 1
    for index in range(fork, len(history)):
        snapshot = history[index]
        source = (snapshot.metadata or {}).get("source")
        if source == "input" and (index > fork or spec.kind == "turn"):
            tup = saver.get_tuple(snapshot.config)
            if tup is not None:
                humans.inputs.append(tup.checkpoint["channel_values"].get("__start__"))
        asking = [t for t in snapshot.tasks if t.interrupts]
        if not asking:
            continue
        tup = saver.get_tuple(snapshot.config)
        writes = tup.pending_writes or [] if tup is not None else []
        null_answer = [w[2] for w in writes if w[0] == _NULL_TASK and w[1] == _RESUME]
        answered = index < newest  # a later checkpoint: the asking step finished
        for task in asking:
            given = [w[2] for w in writes if w[0] == task.id and w[1] == _RESUME]
            values = list(given[0]) if given and isinstance(given[0], list) else given
            answers = _paired(values, task.name, list(task.interrupts), answered)
            if not answers:  # a subgraph node: its own tasks hold what they consumed
                answers = _subgraph_answers(saver, snapshot.config, task.name, task.id)
            if not answers and null_answer and len(asking) == 1:
                answers = _paired(null_answer[:1], task.name, list(task.interrupts), answered)
            humans.answers.setdefault(task.name, deque()).extend(answers)
    return humans


def _paired(
    values: list[Any], node: str, questions: list[Interrupt], answered: bool
) -> list[RecordedAnswer]:
    """The answers one task consumed, in order, as recorded answers: the last one with the
    task's question when the task holds exactly one and its step finished (``answered``),
    the others without one (LangGraph keeps only a task's latest question)."""
    recorded = [RecordedAnswer(value) for value in values]
    if recorded and answered and len(questions) == 1:
        asked = questions[0]
        question = PendingInterrupt(id=asked.id, path=node, value=asked.value)
        recorded[-1] = RecordedAnswer(values[-1], question)
    return recorded


def _subgraph_answers(
    saver: Any, config: RunnableConfig, node: str, task_id: str
) -> list[RecordedAnswer]:
    """The answers the tasks of a subgraph run (the namespace of ``node``'s task
    ``task_id`` and those nested in it) consumed, in checkpoint order, each task's last
    with its question when its step finished (a later checkpoint in its namespace). The
    parent checkpoint keeps only the last ``Command(resume=...)`` value (LangGraph stores
    the null task's resume under one index), so a subgraph node asked several times is
    read here."""
    namespace = f"{node}:{task_id}"
    thread = {"configurable": {"thread_id": config["configurable"]["thread_id"]}}
    inside = sorted(
        (
            t
            for t in saver.list(thread)
            if (t.config["configurable"].get("checkpoint_ns") or "").startswith(namespace)
        ),
        key=lambda t: t.config["configurable"]["checkpoint_id"],
    )
    newest: dict[str, str] = {}
    for tup in inside:
        newest[tup.config["configurable"]["checkpoint_ns"]] = tup.config["configurable"][
            "checkpoint_id"
        ]
    found: list[RecordedAnswer] = []
    for tup in inside:
        conf = tup.config["configurable"]
        answered = conf["checkpoint_id"] != newest[conf["checkpoint_ns"]]
        asked: dict[str, list[Interrupt]] = {}
        for writer, channel, value in tup.pending_writes or []:
            if channel == _INTERRUPT:
                items = value if isinstance(value, list | tuple) else [value]
                asked[writer] = [item for item in items if isinstance(item, Interrupt)]
        for writer, channel, value in tup.pending_writes or []:
            if channel == _RESUME and writer != _NULL_TASK:
                values = value if isinstance(value, list) else [value]
                found.extend(_paired(values, node, asked.get(writer, []), answered))
    return found


def copy_until(
    source: Any, target: Any, thread_id: str, fork_id: str, new_thread: str, *, inclusive: bool
) -> int:
    """Copy ``thread_id``'s checkpoints older than ``fork_id`` (with their writes) and, if
    ``inclusive``, the fork checkpoint (without) to ``new_thread`` of ``target``; returns
    how many."""
    tuples = sorted(
        (
            t
            for t in source.list({"configurable": {"thread_id": thread_id}})
            if t.config["configurable"]["checkpoint_id"] < fork_id
            or (inclusive and t.config["configurable"]["checkpoint_id"] == fork_id)
        ),
        key=lambda t: t.config["configurable"]["checkpoint_id"],
    )
    for tup in tuples:
        _put(
            target,
            tup,
            new_thread,
            with_writes=tup.config["configurable"]["checkpoint_id"] < fork_id,
        )
    return len(tuples)


def _put(target: Any, tup: CheckpointTuple, new_thread: str, *, with_writes: bool) -> None:
    conf = tup.config["configurable"]
    ns = conf.get("checkpoint_ns", "")
    parent = (tup.parent_config or {}).get("configurable", {}).get("checkpoint_id")
    at: RunnableConfig = {
        "configurable": {"thread_id": new_thread, "checkpoint_ns": ns, "checkpoint_id": parent}
    }
    checkpoint = tup.checkpoint
    saved = target.put(at, checkpoint, tup.metadata, dict(checkpoint["channel_versions"]))
    if not with_writes:
        return
    for task_id, writes in _by_task(tup.pending_writes or []):
        target.put_writes(saved, writes, task_id)


def _by_task(writes: Iterable[tuple[str, str, Any]]) -> list[tuple[str, list[tuple[str, Any]]]]:
    grouped: dict[str, list[tuple[str, Any]]] = {}
    for task_id, channel, value in writes:
        grouped.setdefault(task_id, []).append((channel, value))
    return list(grouped.items())
