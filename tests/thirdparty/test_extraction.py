"""Real third-party agents (tests/thirdparty/agents.py) extract as LangGraph ran them.

Each thread is played with ``stream(..., subgraphs=True, stream_mode=["tasks", "updates"])``
and the extracted trajectory is held to that stream (:func:`tests.extract.live.check`):
turn count, both flat forms, the supersteps under each subgraph path in the order they
started, each turn's kind, status, breakpoint flag and pending interrupt ids, and the
tasks by path and LangGraph's task id (so each namespace is the one that ran); then to
LangGraph's own state (``get_state``): the last turn's pending interrupts. Both readers,
on an in-memory saver and a SQLite file (PostgreSQL for the agents whose threads branch
or re-plan), and on the lineage time travel abandoned."""

from __future__ import annotations

import sqlite3
import warnings
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver

from lg_eval import ExtractionWarning, aextract_thread, extract_thread
from lg_eval.trajectory import START, ThreadTrajectory, walk_tasks
from tests.extract.live import LiveTurn, arecord, check, record
from tests.thirdparty.agents import AGENTS

# langgraph-supervisor builds its supervisor with langgraph's deprecated create_react_agent.
pytestmark = pytest.mark.filterwarnings("ignore:.*create_react_agent.*")

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


def kept(name: str, live: list[LiveTurn]) -> list[LiveTurn]:
    """The live turns on the newest lineage (time travel abandons some)."""
    return [turn for index, turn in enumerate(live) if index not in AGENTS[name].abandoned]


def same_tasks(trajectory: ThreadTrajectory, live: list[LiveTurn]) -> None:
    """Each turn ran the tasks LangGraph started, by path and task id (its namespaces)."""
    for turn, streamed in zip(trajectory.turns, live, strict=True):
        ran = Counter((t.path, t.task_id) for t in walk_tasks(turn.supersteps) if t.name != START)
        assert ran == Counter((t.path, t.key[1]) for t in streamed.started), turn.index


def held_to_langgraph(graph: Any, name: str, live: list[LiveTurn], reader: str) -> None:
    trajectory = extracted(graph, CONFIG, reader)
    check(trajectory, kept(name, live))
    same_tasks(trajectory, kept(name, live))
    pending = graph.get_state(CONFIG).interrupts
    assert [i.id for i in trajectory.turns[-1].interrupts] == [i.id for i in pending]
    if AGENTS[name].abandoned:  # the branch time travel left: where it ended, as it ran
        end = [s for s in graph.get_state_history(CONFIG) if not s.next][-1].config
        before = live[: min(AGENTS[name].abandoned) + 1]
        check(extracted(graph, end, reader), before)


@pytest.mark.parametrize("reader", ["fast", "generic"])
@pytest.mark.parametrize("name", list(AGENTS))
def test_agent_thread_extracts_what_langgraph_ran(name: str, reader: str, local_saver: Any) -> None:
    graph, live = record(AGENTS[name], local_saver)
    held_to_langgraph(graph, name, live, reader)


@pytest.mark.parametrize("name", list(AGENTS))
def test_both_readers_read_an_agent_thread_alike(name: str, local_saver: Any) -> None:
    graph = AGENTS[name].played(local_saver)
    fast, generic = (extracted(graph, CONFIG, r) for r in ("fast", "generic"))
    assert fast.model_dump() == generic.model_dump()  # states included


@pytest.mark.parametrize("reader", ["fast", "generic"])
@pytest.mark.parametrize("name", ON_POSTGRES)
def test_agent_thread_on_postgres(name: str, reader: str, postgres_saver: Any) -> None:
    graph, live = record(AGENTS[name], postgres_saver)
    held_to_langgraph(graph, name, live, reader)


@pytest.mark.parametrize("reader", ["fast", "generic"])
@pytest.mark.parametrize("name", ON_POSTGRES)
async def test_agent_thread_streamed_async(name: str, reader: str, async_saver: Any) -> None:
    graph, live = await arecord(AGENTS[name], async_saver)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ExtractionWarning)
        trajectory = await aextract_thread(graph, CONFIG, reader=reader)
    check(trajectory, kept(name, live))
    same_tasks(trajectory, kept(name, live))
