"""Real third-party agents (tests/thirdparty/agents.py) extract as LangGraph ran them.

Each thread is played with ``stream(..., subgraphs=True, stream_mode=["tasks", "updates"])``
and the extracted trajectory is held to that stream (:func:`tests.extract.live.check`):
turn count, both flat forms, the supersteps under each subgraph path in the order they
started, each turn's kind, status, breakpoint flag and pending interrupt ids, and the
tasks by path and LangGraph's task id (so each namespace is the one that ran); then to
LangGraph's own state (``get_state`` after each call): the pending interrupts, ids and
payloads. Both readers, on an in-memory saver and a SQLite file (PostgreSQL and async for
the agents whose threads branch or re-plan), and on the lineage time travel abandoned."""

from __future__ import annotations

import sqlite3
import warnings
from collections import Counter
from collections.abc import Iterator
from typing import Any, TypeVar

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver

from graphs.scenarios import drive
from lg_eval import ExtractionWarning, aextract_thread, extract_thread
from lg_eval._trajectory import START, ThreadTrajectory, walk_tasks
from tests.extract.live import LiveTurn, arecord, check, recorder
from tests.thirdparty.agents import AGENTS

# langgraph-supervisor builds its supervisor with langgraph's deprecated create_react_agent.
pytestmark = pytest.mark.filterwarnings("ignore:.*create_react_agent.*")

T = TypeVar("T")
CONFIG = {"configurable": {"thread_id": "t"}}
ON_POSTGRES = [
    "swarm_edit_while_waiting",
    "deep_agent",
    "deep_agent_gated_subagent",
    "breakpoint_agent",
    "toolnode_subgraph_edit_while_waiting",
]


@pytest.fixture(params=["memory", "sqlite_file"])
def local_saver(request: pytest.FixtureRequest, tmp_path: Any) -> Iterator[Any]:
    """An in-memory saver, or a SqliteSaver on a file."""
    if request.param == "memory":
        yield InMemorySaver()
        return
    conn = sqlite3.connect(tmp_path / "agents.sqlite", check_same_thread=False)
    try:
        yield SqliteSaver(conn)
    finally:
        conn.close()


def extracted(graph: Any, config: Any, reader: str) -> ThreadTrajectory:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ExtractionWarning)
        return extract_thread(graph, config, reader=reader)


def kept(name: str, live: list[T]) -> list[T]:
    """What each call on the newest lineage recorded (time travel abandons some calls)."""
    return [turn for index, turn in enumerate(live) if index not in AGENTS[name].abandoned]


def same_tasks(trajectory: ThreadTrajectory, live: list[LiveTurn]) -> None:
    """Each turn ran the tasks LangGraph started, by path and task id (its namespaces)."""
    for turn, streamed in zip(trajectory.turns, live, strict=True):
        ran = Counter((t.path, t.task_id) for t in walk_tasks(turn.supersteps) if t.name != START)
        assert ran == Counter((t.path, t.key[1]) for t in streamed.started), turn.index


def played(name: str, saver: Any) -> tuple[Any, list[LiveTurn], list[list[Any]]]:
    """Play an agent's thread, streaming each call (:func:`tests.extract.live.recorder`);
    also what ``get_state`` said was pending after each call: ``(id, value)`` pairs."""
    graph = AGENTS[name].build(checkpointer=saver)
    live: list[LiveTurn] = []
    pending: list[list[Any]] = []
    stream = recorder(live)

    def call(graph: Any, payload: Any, config: Any) -> None:
        try:
            stream(graph, payload, config)
        finally:
            pending.append([(i.id, i.value) for i in graph.get_state(CONFIG).interrupts])

    drive(graph, "t", AGENTS[name].turns, call=call)
    return graph, live, pending


def held_to_langgraph(name: str, saver: Any, reader: str) -> None:
    graph, live, pending = played(name, saver)
    trajectory = extracted(graph, CONFIG, reader)
    check(trajectory, kept(name, live))
    same_tasks(trajectory, kept(name, live))
    for turn, asked in zip(trajectory.turns, kept(name, pending), strict=True):
        assert [(i.id, i.value) for i in turn.interrupts] == asked, turn.index
    if AGENTS[name].abandoned:  # the branch time travel left: where it ended, as it ran
        end = [s for s in graph.get_state_history(CONFIG) if not s.next][-1].config
        before = live[: min(AGENTS[name].abandoned) + 1]
        check(extracted(graph, end, reader), before)


@pytest.mark.parametrize("reader", ["fast", "generic"])
@pytest.mark.parametrize("name", list(AGENTS))
def test_agent_thread_extracts_what_langgraph_ran(name: str, reader: str, local_saver: Any) -> None:
    held_to_langgraph(name, local_saver, reader)


@pytest.mark.parametrize("name", list(AGENTS))
def test_both_readers_read_an_agent_thread_alike(name: str, local_saver: Any) -> None:
    graph = AGENTS[name].played(local_saver)
    fast, generic = (extracted(graph, CONFIG, r) for r in ("fast", "generic"))
    assert fast.model_dump() == generic.model_dump()  # states included


@pytest.mark.parametrize("reader", ["fast", "generic"])
@pytest.mark.parametrize("name", ON_POSTGRES)
def test_agent_thread_on_postgres(name: str, reader: str, postgres_saver: Any) -> None:
    held_to_langgraph(name, postgres_saver, reader)


@pytest.mark.parametrize("reader", ["fast", "generic"])
@pytest.mark.parametrize("name", ON_POSTGRES)
async def test_agent_thread_streamed_async(name: str, reader: str, async_saver: Any) -> None:
    graph, live = await arecord(AGENTS[name], async_saver)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ExtractionWarning)
        trajectory = await aextract_thread(graph, CONFIG, reader=reader)
    check(trajectory, kept(name, live))
    same_tasks(trajectory, kept(name, live))
