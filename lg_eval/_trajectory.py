"""Trajectory data models: what a checkpointed LangGraph thread did, turn by turn.

Two shapes live here:

* :class:`GraphTrajectory` is the flat form that agentevals popularised
  (``inputs``, ``results``, ``steps``). It validates plain dicts, so existing
  reference trajectories keep working, and ``model_dump()`` gives them back.
* :class:`ThreadTrajectory` is the full record: every turn of a thread with its
  input or resume values, state edits, supersteps of task runs (nested for
  subgraphs), interrupts, errors and the result. It flattens to a
  :class:`GraphTrajectory` with :meth:`ThreadTrajectory.to_graph_trajectory`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, Literal, get_args

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ModelWrapValidatorHandler,
    PrivateAttr,
    computed_field,
    model_validator,
)

from lg_eval.errors import InvalidOptionError

START = "__start__"
INTERRUPT = "__interrupt__"
RESUMING = "__resuming__"

TurnKind = Literal["input", "resume", "continue"]
TurnStatus = Literal["completed", "interrupted", "error"]
ResumedMode = Literal["omit", "repeat"]
RESUMED_MODES: tuple[ResumedMode, ...] = get_args(ResumedMode)


class GraphTrajectory(BaseModel):
    """The flat, agentevals-compatible trajectory of a thread.

    ``inputs[i]``, ``results[i]`` and ``steps[i]`` describe turn ``i``: what
    started it, what it returned, and the node names that ran, in order.

    A reference may also say what the human was asked and answered, for the
    HITL evaluator: ``interrupts[i]`` the interrupt payloads turn ``i`` should
    end with (in node-path order), ``resumes[i]`` its resume value (``None``
    when it is not a resume). Left as ``None``, they are not checked.
    """

    model_config = ConfigDict(extra="forbid")

    inputs: list[Any] = Field(default_factory=list)
    results: list[Any] = Field(default_factory=list)
    steps: list[list[str]] = Field(default_factory=list)
    # Left out of dumps when unset, so model_dump() stays agentevals' {inputs, results, steps}.
    interrupts: list[list[Any]] | None = Field(
        default=None,
        exclude_if=lambda value: value is None,
        description="Per turn, the interrupt payloads pending when it ended (None: not checked).",
    )
    resumes: list[Any] | None = Field(
        default=None,
        exclude_if=lambda value: value is None,
        description="Per turn, the resume value, None for turns that are not resumes "
        "(None for the whole list: not checked).",
    )


class InterruptRecord(BaseModel):
    """One ``interrupt()`` (or static breakpoint) that paused a task."""

    id: str | None = Field(default=None, description="LangGraph's interrupt id, if any.")
    value: Any = Field(default=None, description="The payload passed to interrupt().")
    path: str = Field(default="", description="Full ':'-joined path of the paused node.")


class TaskRun(BaseModel):
    """One execution of a node (a Pregel task) inside a superstep."""

    name: str = Field(description="The node (or @task) name as LangGraph reports it.")
    path: str = Field(description="Full path of node names from the root, joined by ':'.")
    task_id: str | None = None
    interrupts: list[InterruptRecord] = Field(default_factory=list)
    error: str | None = Field(default=None, description="Error text if the task raised.")
    resumed: bool = Field(
        default=False, description="True when this run re-executes a task that paused earlier."
    )
    answered: str | None = Field(
        default=None, description="Id of the interrupt this run received an answer for."
    )
    resume_value: Any = Field(default=None, description="The answer this run received.")
    subgraph: list[Superstep] = Field(
        default_factory=list,
        description="Supersteps of a subgraph that ran inside this task, in order.",
    )

    @property
    def paused(self) -> bool:
        """Whether this task (not counting its subgraph) called interrupt()."""
        return bool(self.interrupts)

    @property
    def paused_within(self) -> bool:
        """Whether this task or anything nested under it paused."""
        return self.paused or any(t.paused_within for s in self.subgraph for t in s.tasks)


class Superstep(BaseModel):
    """Tasks LangGraph started together in one superstep (siblings run in parallel)."""

    step: int = Field(
        description="LangGraph's superstep number (``langgraph_step`` in traces): one more than "
        "the step of the checkpoint the tasks were planned from."
    )
    checkpoint_id: str | None = Field(
        default=None, description="The checkpoint the superstep's tasks were planned from."
    )
    tasks: list[TaskRun] = Field(default_factory=list)


class StateEdit(BaseModel):
    """An ``update_state`` call made between turns."""

    checkpoint_id: str
    as_node: str | None = None
    values: Any = None
    created_at: str | None = None
    checkpoint_ns: str = Field(
        default="", description="The namespace edited: '' for the root, else a subgraph's."
    )


class Turn(BaseModel):
    """One invocation of the thread: an input, a resume, or a continuation."""

    index: int
    kind: TurnKind
    input: Any = Field(default=None, description="The user input of an 'input' turn.")
    resume: dict[str, Any] | None = Field(
        default=None, description="Resume values keyed by interrupt id (resume turns)."
    )
    resume_by_node: dict[str, Any] | None = Field(
        default=None, description="Resume values keyed by the interrupted node's path."
    )
    edits: list[StateEdit] = Field(
        default_factory=list, description="update_state calls made just before this turn."
    )
    update: dict[str, Any] | None = Field(
        default=None,
        description="The state writes of the Command(resume=..., update=...) that started a "
        "'resume' turn.",
    )
    supersteps: list[Superstep] = Field(
        default_factory=list,
        description="Supersteps in order; an input turn starts with LangGraph's __start__ task.",
    )
    status: TurnStatus
    interrupts: list[InterruptRecord] = Field(
        default_factory=list, description="Interrupts pending when the turn ended."
    )
    error: str | None = None
    breakpoint: bool = Field(
        default=False, description="True when a static interrupt_before/after stopped the turn."
    )
    branched: bool = Field(
        default=False,
        description="True when the run went on in a fork branch this trajectory does not follow.",
    )
    next_nodes: list[str] = Field(
        default_factory=list, description="Nodes LangGraph had planned when the turn stopped."
    )
    result: Any = Field(default=None, description="Flat-form result of the turn.")
    start_checkpoint_id: str | None = None
    end_checkpoint_id: str | None = None
    started_at: str | None = None
    ended_at: str | None = None

    _state: Any = PrivateAttr(default=None)
    _load_state: Callable[[], Any] | None = PrivateAttr(default=None)

    @model_validator(mode="wrap")
    @classmethod
    def _take_state(cls, data: Any, handler: ModelWrapValidatorHandler[Turn]) -> Turn:
        """Accept ``state=`` like a field (it is stored apart so that it can load lazily)."""
        if not (isinstance(data, dict) and "state" in data):
            return handler(data)
        data = dict(data)
        state = data.pop("state")
        turn = handler(data)
        turn._state = state
        return turn

    @computed_field(  # type: ignore[prop-decorator]
        description="Full state values when the turn ended (decoded on first access)."
    )
    @property
    def state(self) -> Any:
        """The full state values when the turn ended.

        Extraction keeps them serialized and decodes them on first access: a long
        thread with many turns would otherwise decode one whole state per turn,
        which costs turns x state size even when only the trajectory is wanted.
        """
        private = self.__pydantic_private__  # one lookup, not pydantic's per-attribute hook
        assert private is not None
        if private["_load_state"] is not None:
            private["_state"], private["_load_state"] = private["_load_state"](), None
        return private["_state"]

    def defer_state(self, load: Callable[[], Any]) -> None:
        """Have :attr:`state` computed by ``load()`` on first access (used by extraction)."""
        private = self.__pydantic_private__
        assert private is not None
        private["_state"], private["_load_state"] = None, load

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Turn):
            return NotImplemented
        return self.__dict__ == other.__dict__ and self.state == other.state

    __hash__ = None  # type: ignore[assignment]

    def __getstate__(self) -> dict[Any, Any]:
        self.state  # noqa: B018 - a pickled turn carries its state, not its loader
        return super().__getstate__()

    def iter_tasks(self) -> Iterator[TaskRun]:
        """Every task run of the turn, depth-first, in listing order."""
        yield from walk_tasks(self.supersteps)


def walk_tasks(supersteps: list[Superstep]) -> Iterator[TaskRun]:
    """Every task run of ``supersteps``, depth-first (subgraph runs after their parent)."""
    for superstep in supersteps:
        for task in superstep.tasks:
            yield task
            yield from walk_tasks(task.subgraph)


class ThreadTrajectory(BaseModel):
    """The full record of a checkpointed thread, as lg_eval extracted it."""

    thread_id: str
    checkpoint_ns: str = ""
    lineage: list[str] = Field(
        default_factory=list,
        description="Checkpoint ids followed, oldest first (the fork lineage that was read).",
    )
    turns: list[Turn] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)

    def __str__(self) -> str:
        """The thread as a plain-text table, one row per turn (see :mod:`lg_eval._display`)."""
        from lg_eval._display import trajectory_text  # display renders this model: import late

        return trajectory_text(self)

    def __rich__(self) -> Any:
        """The same table for ``rich`` (``rich.print(thread)``), as a ``rich.table.Table``."""
        from lg_eval._display import trajectory_table

        return trajectory_table(self)

    def to_graph_trajectory(self, resumed: ResumedMode = "omit") -> GraphTrajectory:
        """Flatten to the agentevals shape.

        ``resumed="omit"`` (the default, agentevals' convention) lists a node
        that paused only in the turn where it paused; ``"repeat"`` lists it
        again in the turn that resumes it, where LangGraph re-executes it.
        """
        inputs = [{START: t.input} if t.kind == "input" else RESUMING for t in self.turns]
        results = [t.result if t.status == "completed" else {} for t in self.turns]
        return GraphTrajectory(inputs=inputs, results=results, steps=flat_steps(self, resumed))

    def step_groups(self, resumed: ResumedMode = "omit") -> list[list[list[str]]]:
        """The flat ``steps`` of each turn, cut into groups: one per superstep (empty
        when all its tasks are omitted), plus a leading ``[__start__]`` a functional-API
        turn gets and a trailing ``[__interrupt__]`` a breakpoint adds. Evaluators use it
        to compare a superstep's parallel siblings as a set."""
        if resumed not in RESUMED_MODES:
            raise InvalidOptionError(
                f"resumed={resumed!r} is not allowed; use one of {', '.join(RESUMED_MODES)}."
            )
        out: list[list[list[str]]] = []
        for turn in self.turns:
            groups = [
                [name for task in superstep.tasks for name in _flatten_task(task, resumed)]
                for superstep in turn.supersteps
            ]
            first = next((name for group in groups for name in group), None)
            if turn.kind == "input" and first != START:
                groups.insert(0, [START])  # functional API: the entrypoint runs without __start__
            if turn.breakpoint:
                groups.append([INTERRUPT])
            out.append(groups)
        return out


def _flatten_task(task: TaskRun, resumed: ResumedMode) -> list[str]:
    """A top-level task, its subtree, then one ``__interrupt__`` per paused leaf."""
    if not task.subgraph:  # a node without a subgraph (most tasks): no walk
        paused = bool(task.interrupts)
        names = [] if resumed == "omit" and task.resumed and not paused else [task.path]
        if paused:
            names.append(INTERRUPT)
        return names
    names = _task_names(task, resumed)
    names.extend(INTERRUPT for _ in _paused_leaves(task))
    return names


def _task_names(task: TaskRun, resumed: ResumedMode) -> list[str]:
    names: list[str] = []
    if not (resumed == "omit" and task.resumed and not task.paused_within):
        names.append(task.path)
    for superstep in task.subgraph:
        for child in superstep.tasks:
            names.extend(_task_names(child, resumed))
    return names


def _paused_leaves(task: TaskRun) -> Iterator[TaskRun]:
    if task.paused:
        yield task
    for superstep in task.subgraph:
        for child in superstep.tasks:
            yield from _paused_leaves(child)


TaskRun.model_rebuild()


def flat_steps(thread: ThreadTrajectory, resumed: ResumedMode = "omit") -> list[list[str]]:
    """The node names of each turn of ``thread``, its supersteps flattened in order: what
    ``thread.to_graph_trajectory(resumed).steps`` holds, without building the model."""
    return [[name for group in groups for name in group] for groups in thread.step_groups(resumed)]
