"""Scripted human-in-the-loop conversations for every example graph.

Each scenario is a list of `Turn`s: what to send to the thread on each call
(a fresh input, a ``Command(resume=...)``, or ``None`` to continue after a
breakpoint or an error). A turn may instead compute its input from the current
`StateSnapshot` (needed to answer parallel interrupts by id), and may expect the
call to raise. One sync driver (`drive`) and one async driver (`adrive`) execute
any turn list; `Scenario.run` / `Scenario.arun` play a scenario's script.

`SCENARIOS` maps each scenario name to a `Scenario` (name, description, build,
turns, and the run / arun methods).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.errors import GraphRecursionError
from langgraph.pregel import Pregel
from langgraph.types import Command, StateSnapshot

from graphs import (
    approval,
    command_goto,
    flaky,
    functional,
    hitl_agent,
    map_reduce,
    research,
    shapes,
    weather,
)
from graphs import breakpoint as static_breakpoint


class ScenarioError(AssertionError):
    """A scenario did not play out as scripted."""


@dataclass(frozen=True)
class Edit:
    """An ``update_state`` call made before a turn.

    With `subgraph`, the state edited is that of the pending subgraph task of that
    name, through the subgraph's own config (from ``get_state(config, subgraphs=True)``).
    """

    values: Any
    as_node: str | None = None
    subgraph: str | None = None


@dataclass(frozen=True)
class Turn:
    """One call on the thread: `input`, or `from_state(snapshot)` when it is set.

    `raises` names the exception type this call is expected to raise; the driver
    swallows exactly that and fails if the call succeeds instead. `edits` are
    ``update_state`` calls made just before the call; `at` picks, from the thread's
    history (newest first), the checkpoint to invoke from (time travel), instead of
    the newest one; `recursion_limit` is passed in the call's config.
    """

    input: Any = None
    from_state: Callable[[StateSnapshot], Any] | None = None
    raises: type[Exception] | None = None
    edits: Sequence[Edit] = ()
    at: Callable[[list[StateSnapshot]], StateSnapshot] | None = None
    recursion_limit: int | None = None

    def resolve(self, snapshot: StateSnapshot | None) -> Any:
        """The payload to send, given the thread's current state (if needed)."""
        if self.from_state is None:
            return self.input
        assert snapshot is not None
        return self.from_state(snapshot)


def thread_config(thread_id: str) -> RunnableConfig:
    """The run config addressing `thread_id`."""
    return {"configurable": {"thread_id": thread_id}}


@contextmanager
def _expect(turn: Turn, index: int) -> Iterator[None]:
    try:
        yield
    except Exception as exc:
        if turn.raises is None or not isinstance(exc, turn.raises):
            raise
        return
    if turn.raises is not None:
        raise ScenarioError(f"turn {index} should have raised {turn.raises.__name__}")


def _check_done(snapshot: StateSnapshot) -> None:
    if snapshot.next:
        raise ScenarioError(f"thread did not finish; next nodes: {snapshot.next}")


Call = Callable[[Pregel, Any, RunnableConfig], Any]
"""How a driver sends one turn's payload (``graph.invoke`` unless told otherwise)."""


def _edit_target(snapshot: StateSnapshot, edit: Edit, config: RunnableConfig) -> RunnableConfig:
    if edit.subgraph is None:
        return config
    task = next(t for t in snapshot.tasks if t.name == edit.subgraph and t.state is not None)
    assert isinstance(task.state, StateSnapshot)
    return task.state.config


def drive(
    graph: Pregel,
    thread_id: str,
    turns: Sequence[Turn],
    *,
    finish: bool = True,
    call: Call | None = None,
) -> None:
    """Play `turns` on `thread_id` with `invoke` (or `call`); with `finish`, require the
    thread to end."""
    config = thread_config(thread_id)
    for index, turn in enumerate(turns):
        for edit in turn.edits:
            snapshot = graph.get_state(config, subgraphs=edit.subgraph is not None)
            graph.update_state(_edit_target(snapshot, edit, config), edit.values, edit.as_node)
        target = config
        if turn.at is not None:
            target = turn.at(list(graph.get_state_history(config))).config
        if turn.recursion_limit is not None:
            target = {**target, "recursion_limit": turn.recursion_limit}
        snapshot = graph.get_state(config) if turn.from_state else None
        with _expect(turn, index):
            (call or _invoke)(graph, turn.resolve(snapshot), target)
    if finish:
        _check_done(graph.get_state(config))


def _invoke(graph: Pregel, payload: Any, config: RunnableConfig) -> Any:
    return graph.invoke(payload, config)


async def _ainvoke(graph: Pregel, payload: Any, config: RunnableConfig) -> Any:
    return await graph.ainvoke(payload, config)


async def adrive(
    graph: Pregel,
    thread_id: str,
    turns: Sequence[Turn],
    *,
    finish: bool = True,
    call: Callable[[Pregel, Any, RunnableConfig], Awaitable[Any]] | None = None,
) -> None:
    """Async twin of `drive`, using `ainvoke` (or `call`) and `aget_state`."""
    config = thread_config(thread_id)
    for index, turn in enumerate(turns):
        for edit in turn.edits:
            snapshot = await graph.aget_state(config, subgraphs=edit.subgraph is not None)
            target = _edit_target(snapshot, edit, config)
            await graph.aupdate_state(target, edit.values, edit.as_node)
        target = config
        if turn.at is not None:
            target = turn.at([s async for s in graph.aget_state_history(config)]).config
        if turn.recursion_limit is not None:
            target = {**target, "recursion_limit": turn.recursion_limit}
        snapshot = await graph.aget_state(config) if turn.from_state else None
        with _expect(turn, index):
            await (call or _ainvoke)(graph, turn.resolve(snapshot), target)
    if finish:
        _check_done(await graph.aget_state(config))


def user(content: str, id: str) -> dict[str, str]:
    """A user chat message (as a dict, so each run builds a fresh message object)."""
    return {"role": "user", "content": content, "id": id}


# --- weather: tool interrupts, resumed with the human's answer ---------------------

WEATHER_TURNS = [
    Turn({"messages": [user(weather.QUESTION, "weather-human-1")]}),
    Turn(Command(resume=weather.HUMAN_ANSWER)),
]

# --- research: interrupts one and two subgraph levels down ---------------------------

RESEARCH_TOPIC = "solid state batteries"
APPROVED_SOURCES = [
    "https://example.org/solid-state-batteries/1",
    "https://example.org/solid-state-batteries/2",
]
VERDICT = "Confirmed by the domain expert."

RESEARCH_TURNS = [
    Turn({"topic": RESEARCH_TOPIC, "deep": True}),
    Turn(Command(resume=APPROVED_SOURCES)),
    Turn(Command(resume=VERDICT)),
]
RESEARCH_SHALLOW_TURNS = [
    Turn({"topic": RESEARCH_TOPIC, "deep": False}),
    Turn(Command(resume=APPROVED_SOURCES)),
]

# --- approval: two parallel interrupts answered by one Command ----------------------

APPROVAL_REQUEST = "Buy 3 laptops for the design team."
REVIEWS = {
    "legal": {"approved": True, "comment": "No legal concerns."},
    "finance": {"approved": True, "comment": "Within the quarterly budget."},
}


def answer_reviews(snapshot: StateSnapshot) -> Command:
    """Resume every pending reviewer interrupt at once, keyed by interrupt id."""
    return Command(resume={i.id: REVIEWS[i.value["reviewer"]] for i in snapshot.interrupts})


APPROVAL_TURNS = [Turn({"request": APPROVAL_REQUEST}), Turn(from_state=answer_reviews)]
DOUBLE_CHECK_TURNS = [
    Turn({"amount": 120}),
    Turn(Command(resume="ops-credit-card")),
    Turn(Command(resume=True)),
]

# --- the rest -------------------------------------------------------------------------

MAP_REDUCE_TURNS = [Turn({"document": map_reduce.DOCUMENT})]
HITL_AGENT_TURNS = [
    Turn({"messages": [user("Check my inbox and answer Bob.", "hitl-human-1")]}),
    Turn(Command(resume={"decisions": [{"type": "approve"}]})),
    Turn({"messages": [user("Also tell the whole company.", "hitl-human-2")]}),
    Turn(
        Command(
            resume={"decisions": [{"type": "reject", "message": "Do not email the whole company."}]}
        )
    ),
]
BREAKPOINT_TURNS = [Turn({"request": "Tell the team the offsite moved to Thursday."}), Turn(None)]
FUNCTIONAL_TURNS = [Turn({"topic": "cats"}), Turn(Command(resume="Mention their naps."))]
FLAKY_TURNS = [
    Turn({"query": "LangGraph  Checkpointers"}, raises=flaky.FlakyServiceError),
    Turn(None),
]
COMMAND_GOTO_TURNS = [
    Turn({"request": "I was charged twice this month."}),
    Turn({"request": "The app crashes when I upload a photo."}),
]


# --- registry -------------------------------------------------------------------------


@dataclass(frozen=True)
class Scenario:
    """A graph factory plus the script that drives one thread through it."""

    name: str
    description: str
    build: Callable[..., Pregel]
    """Called as ``build(checkpointer=...)``; returns a fresh graph and scripted model."""
    turns: Sequence[Turn]
    exact: bool = True
    """False when checkpoints cannot tell every turn apart (the extraction warns instead)."""
    abandoned: tuple[int, ...] = ()
    """Turns (indexes into `turns`) whose work time travel abandoned: the newest lineage
    does not contain them."""

    def run(self, graph: Pregel, thread_id: str) -> None:
        """Play the script on ``thread_id`` with ``invoke``."""
        drive(graph, thread_id, self.turns)

    async def arun(self, graph: Pregel, thread_id: str) -> None:
        """Play the script on ``thread_id`` with ``ainvoke``."""
        await adrive(graph, thread_id, self.turns)

    def played(self, checkpointer: Any, thread_id: str = "t") -> Pregel:
        """A fresh graph on ``checkpointer`` with the script played on ``thread_id``."""
        graph = self.build(checkpointer=checkpointer)
        self.run(graph, thread_id)
        return graph

    async def aplayed(self, checkpointer: Any, thread_id: str = "t") -> Pregel:
        """:meth:`played` with ``ainvoke`` (for async checkpointers)."""
        graph = self.build(checkpointer=checkpointer)
        await self.arun(graph, thread_id)
        return graph


SCENARIOS: dict[str, Scenario] = {
    s.name: s
    for s in [
        Scenario(
            "weather",
            "Weather agent: ask, tool interrupts, human answers, agent replies.",
            weather.build,
            WEATHER_TURNS,
        ),
        Scenario(
            "research",
            "Deep research: approve sources, then verify findings in the nested subgraph.",
            research.build,
            RESEARCH_TURNS,
        ),
        Scenario(
            "research_shallow",
            "Shallow research: only the source approval (the deep_dive branch is skipped).",
            research.build,
            RESEARCH_SHALLOW_TURNS,
        ),
        Scenario(
            "approval",
            "Approval: both parallel reviews answered by one id-keyed resume.",
            approval.build,
            APPROVAL_TURNS,
        ),
        Scenario(
            "double_check",
            "Double check: one node asks two questions, answered by two resumes.",
            approval.build_double_check,
            DOUBLE_CHECK_TURNS,
        ),
        Scenario(
            "map_reduce",
            "Map-reduce: one turn, fan-out over three sentences.",
            map_reduce.build,
            MAP_REDUCE_TURNS,
        ),
        Scenario(
            "hitl_agent",
            "HITL agent: one approved and one rejected `send_email`.",
            hitl_agent.build,
            HITL_AGENT_TURNS,
        ),
        Scenario(
            "breakpoint",
            "Breakpoint: stop before ``send_email``, continue with ``None``.",
            static_breakpoint.build,
            BREAKPOINT_TURNS,
        ),
        Scenario(
            "functional",
            "Functional API: draft, review interrupt, revise.",
            functional.build,
            FUNCTIONAL_TURNS,
        ),
        Scenario(
            "flaky",
            "Flaky: the first turn fails in ``fetch``, ``invoke(None)`` retries it.",
            flaky.build,
            FLAKY_TURNS,
        ),
        Scenario(
            "command_goto",
            "Command routing: a billing request, then a technical one, on one thread.",
            command_goto.build,
            COMMAND_GOTO_TURNS,
        ),
    ]
}


def _answer_one(snapshot: StateSnapshot) -> Command:
    """Answer only the first pending interrupt, by id."""
    first = snapshot.interrupts[0]
    return Command(resume={first.id: f"ok-{first.value['reviewer']}"})


def _answer_each(snapshot: StateSnapshot) -> Command:
    """Answer every pending interrupt, by id, each with its own value."""
    return Command(resume={i.id: f"ok-{i.value}" for i in snapshot.interrupts})


def _stop_before(node: str) -> Callable[[list[StateSnapshot]], StateSnapshot]:
    """The oldest checkpoint where the run stopped before ``node`` (time travel target)."""

    def at(history: list[StateSnapshot]) -> StateSnapshot:
        return [s for s in history if s.next == (node,) and s.metadata["source"] == "loop"][-1]

    return at


def _first_pause(history: list[StateSnapshot]) -> StateSnapshot:
    """The oldest checkpoint where the thread waited at ``first`` (time travel target)."""
    return [s for s in history if s.next == ("first",) and s.metadata["source"] == "loop"][-1]


SHAPES: dict[str, Scenario] = {
    s.name: s
    for s in [
        Scenario(
            "handoff",
            "Handoff: a sub-agent's tool hands off with Command(graph=Command.PARENT, goto=...).",
            shapes.build_handoff,
            [Turn({"log": []}), Turn({"log": ["again"]})],
        ),
        Scenario(
            "deep_handoff",
            "Two-level handoff: the specialist the sub-agent hands off to runs in a subgraph.",
            shapes.build_deep_handoff,
            [Turn({"log": []})],
        ),
        Scenario(
            "subgraph_breakpoint",
            "A breakpoint compiled into a subgraph; its state edited through its own config.",
            shapes.build_subgraph_breakpoint,
            [
                Turn({"log": []}),
                Turn(None, edits=[Edit({"log": ["fixed"]}, subgraph="mailer")]),
            ],
        ),
        Scenario(
            "parallel_subgraph_breakpoint",
            "A subgraph breakpoint while a root node runs in parallel.",
            shapes.build_parallel_subgraph_breakpoint,
            [
                Turn({"log": []}),
                Turn(None, edits=[Edit({"log": ["fixed"]}, subgraph="mailer")]),
            ],
        ),
        Scenario(
            "recursion_limit",
            "The recursion limit stops the first run; invoke(None) finishes it.",
            shapes.build_looping,
            [
                Turn({"log": []}, raises=GraphRecursionError, recursion_limit=shapes.LIMIT),
                Turn(None, recursion_limit=shapes.LIMIT),
            ],
        ),
        Scenario(
            "resume_goto",
            "An interrupt answered by Command(resume=..., update=..., goto=...).",
            shapes.build_ask,
            [
                Turn({"log": []}),
                Turn(Command(resume="yes", update={"log": ["noted"]}, goto="bonus")),
            ],
        ),
        Scenario(
            "time_travel",
            "Answer two questions, go back to the first one and answer it differently.",
            shapes.build_two_questions,
            [
                Turn({"log": []}),
                Turn(Command(resume="a")),
                Turn(Command(resume="b")),
                Turn(None, at=_first_pause),
                Turn(Command(resume="A")),
                Turn(Command(resume="B")),
            ],
            abandoned=(1, 2),
        ),
        Scenario(
            "subgraph_calls",
            "One node invokes a subgraph once per item; the second call asks the human.",
            shapes.build_subgraph_calls,
            [Turn({"log": []}), Turn(Command(resume="stale"))],
        ),
        Scenario(
            "nested_subgraph_calls",
            "A node invokes a subgraph twice, whose node invokes another twice; one call asks.",
            shapes.build_nested_subgraph_calls,
            [Turn({"log": []}), Turn(Command(resume="fresh"))],
        ),
        Scenario(
            "breakpoint_as_node",
            "A breakpoint before review, answered by update_state(..., as_node='review').",
            shapes.build_breakpoint_chain,
            [Turn({"log": []}), Turn(None, edits=[Edit({"log": ["approved"]}, as_node="review")])],
        ),
        Scenario(
            "parallel_one_at_a_time",
            "Two parallel interrupts, answered one per Command(resume={id: value}).",
            shapes.build_parallel_reviews,
            [Turn({"log": []}), Turn(from_state=_answer_one), Turn(from_state=_answer_one)],
            exact=False,
        ),
        Scenario(
            "send_answers",
            "Two Send tasks of one node, each asking, answered by one id-keyed resume.",
            shapes.build_send_checks,
            [Turn({"log": []}), Turn(from_state=_answer_each)],
        ),
        Scenario(
            "edit_while_paused",
            "update_state while a node waits at interrupt(), then Command(resume=...).",
            shapes.build_ask,
            [Turn({"log": []}), Turn(Command(resume="yes"), edits=[Edit({"log": ["edited"]})])],
        ),
        Scenario(
            "edit_while_subgraph_paused",
            "update_state on the root while a subgraph node waits, then Command(resume=...); "
            "then a second question, answered as usual.",
            shapes.build_ask_in_subgraph,
            [
                Turn({"log": []}),
                Turn(Command(resume="yes"), edits=[Edit({"log": ["edited"]})]),
                Turn({"log": ["again"]}),
                Turn(Command(resume="no")),
            ],
        ),
        Scenario(
            "edit_while_paused_two_down",
            "update_state on the root while a node two subgraphs down waits, then a resume.",
            shapes.build_ask_two_down,
            [Turn({"log": []}), Turn(Command(resume="yes"), edits=[Edit({"log": ["edited"]})])],
        ),
        Scenario(
            "breakpoint_time_travel",
            "Stop at a breakpoint, continue, then replay from the breakpoint's checkpoint.",
            shapes.build_breakpoint_chain,
            [Turn({"log": []}), Turn(None), Turn(None, at=_stop_before("review"))],
            abandoned=(1,),
        ),
        Scenario(
            "subgraph_breakpoint_time_travel",
            "Stop at a subgraph's breakpoint, continue, replay from the root checkpoint of the "
            "stop (the subgraph starts again and stops again), continue.",
            shapes.build_subgraph_breakpoint,
            [Turn({"log": []}), Turn(None), Turn(None, at=_stop_before("mailer")), Turn(None)],
            abandoned=(1,),
        ),
    ]
}
"""Human-in-the-loop thread shapes real applications use (handoffs, subgraph breakpoints,
time travel...), each a small graph built to show one shape (see `graphs.shapes`). Kept
apart from `SCENARIOS`, the scripted-model demos."""

EVERY_SCENARIO: dict[str, Scenario] = {**SCENARIOS, **SHAPES}
