"""Parallel siblings come out in the order LangGraph plans and streams them (``Send`` tasks
first, then the triggered nodes by name), not in the graph's order that ``get_state``
lists, in the two shapes where the two differ visibly: a breakpoint inside a subgraph
beside a plain root node, and ``Command(resume=..., update=..., goto=...)`` whose goto
target runs in the resumed node's superstep. Expectations come from the live stream
(:mod:`tests.extract.live`), on every saver, both readers, sync, async and batched."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command

from graphs import shapes
from graphs.scenarios import SHAPES, Scenario, Turn
from lg_eval import aextract_thread, extract_thread
from lg_eval.extract import aextract_threads, extract_threads
from lg_eval.extract._records import PlanSource, planned_by_name
from tests.extract.live import LiveTurn, arecord, check, record

CONFIG = {"configurable": {"thread_id": "t"}}
READERS = ("fast", "generic")


def build_ask_or_apologize(checkpointer: BaseCheckpointSaver | None = None) -> CompiledStateGraph:
    """``ask -> after``; ``apology``, added last, runs only when a ``Command(goto=...)``
    sends it, and sorts before ``ask`` by name."""
    builder = StateGraph(shapes.Log)
    builder.add_node("ask", shapes.ask)
    builder.add_node("after", shapes.note("after"))
    builder.add_node("apology", shapes.note("apology"))
    builder.add_edge(START, "ask")
    builder.add_edge("ask", "after")
    return builder.compile(checkpointer=checkpointer)


GOTO_FIRST = Scenario(
    "resume_goto_first",
    "A Command(resume=..., update=..., goto=...) whose target sorts before the resumed node.",
    build_ask_or_apologize,
    [Turn({"log": []}), Turn(Command(resume="no", update={"log": ["noted"]}, goto="apology"))],
)
SUBGRAPH_BREAKPOINT = SHAPES["parallel_subgraph_breakpoint"]
SHAPES_WITH_SIBLINGS = {s.name: s for s in (SUBGRAPH_BREAKPOINT, GOTO_FIRST)}


def root_batches(live: list[LiveTurn]) -> list[list[list[str]]]:
    """Per turn, the root supersteps' task paths as the stream started them."""
    return [[paths for parent, paths in turn.batches if parent == ""] for turn in live]


def extracted_root(trajectory: Any) -> list[list[list[str]]]:
    return [[[t.path for t in s.tasks] for s in turn.supersteps] for turn in trajectory.turns]


def without_start(batches: list[list[list[str]]]) -> list[list[list[str]]]:
    """The supersteps without ``__start__`` (LangGraph streams no task for it)."""
    return [
        [kept for s in turn if (kept := [p for p in s if p != "__start__"])] for turn in batches
    ]


def test_the_stream_plans_siblings_by_name_not_in_graph_order() -> None:
    """What the expectations rest on: LangGraph itself streams ``audit`` before ``mailer``
    (graph order: ``mailer`` first) and ``apology`` before ``ask``."""
    from langgraph.checkpoint.memory import InMemorySaver

    graph, live = record(SUBGRAPH_BREAKPOINT, InMemorySaver())
    assert list(graph.nodes) == ["__start__", "mailer", "done", "audit"]
    assert root_batches(live) == [[["audit", "mailer"]], [["mailer"], ["done"]]]
    _, live = record(GOTO_FIRST, InMemorySaver())
    assert root_batches(live) == [[["ask"]], [["apology", "ask"], ["after"]]]


@pytest.mark.parametrize("name", SHAPES_WITH_SIBLINGS)
def test_siblings_come_in_the_streamed_order(name: str, saver: Any) -> None:
    graph, live = record(SHAPES_WITH_SIBLINGS[name], saver)
    for reader in READERS:
        trajectory = extract_thread(graph, CONFIG, reader=reader)
        check(trajectory, live)
        assert without_start(extracted_root(trajectory)) == root_batches(live), reader
    (batched,) = extract_threads(graph, [CONFIG])
    assert without_start(extracted_root(batched)) == root_batches(live)


@pytest.mark.parametrize("name", SHAPES_WITH_SIBLINGS)
async def test_siblings_come_in_the_streamed_order_async(name: str, async_saver: Any) -> None:
    graph, live = await arecord(SHAPES_WITH_SIBLINGS[name], async_saver)
    for reader in READERS:
        trajectory = await aextract_thread(graph, CONFIG, reader=reader)
        check(trajectory, live)
        assert without_start(extracted_root(trajectory)) == root_batches(live), reader
    batched = [t async for t in aextract_threads(graph, [CONFIG])]
    assert without_start(extracted_root(batched[0])) == root_batches(live)


def test_the_flat_form_lists_siblings_in_that_order(saver: Any) -> None:
    graph, _ = record(SUBGRAPH_BREAKPOINT, saver, thread_id="breakpoint")
    assert extract_thread(graph, {"configurable": {"thread_id": "breakpoint"}}).to_graph_trajectory(
        resumed="repeat"
    ).steps == [
        ["__start__", "audit", "mailer", "mailer:__start__", "mailer:draft", "__interrupt__"],
        ["mailer", "mailer:send", "done"],
    ]
    graph, _ = record(GOTO_FIRST, saver, thread_id="goto")
    assert extract_thread(graph, {"configurable": {"thread_id": "goto"}}).to_graph_trajectory(
        resumed="repeat"
    ).steps == [
        ["__start__", "ask", "__interrupt__"],
        ["apology", "ask", "after"],
    ]


def _fan_out(checkpointer: BaseCheckpointSaver, *, pause: bool = True) -> CompiledStateGraph:
    """``plan`` then ``zeta`` and ``alpha`` in parallel (added in that order), with a
    breakpoint before both when ``pause``."""
    builder = StateGraph(shapes.Log)
    builder.add_node("plan", shapes.note("plan"))
    builder.add_node("zeta", shapes.note("zeta"))
    builder.add_node("alpha", shapes.note("alpha"))
    builder.add_edge(START, "plan")
    builder.add_edge("plan", "zeta")
    builder.add_edge("plan", "alpha")
    return builder.compile(
        checkpointer=checkpointer, interrupt_before=["zeta", "alpha"] if pause else None
    )


@pytest.mark.parametrize("edited", [False, True])
def test_a_run_continued_after_update_state_plans_in_graph_order(edited: bool, saver: Any) -> None:
    """An ``update_state`` checkpoint records no updated channels: LangGraph then plans the
    next superstep in the graph's order (``zeta`` first), and so does every reader."""
    graph = _fan_out(saver)
    graph.invoke({"log": []}, CONFIG)
    if edited:
        graph.update_state(CONFIG, {"log": ["edit"]})
    streamed = _started(graph, None, CONFIG)
    assert streamed == (["zeta", "alpha"] if edited else ["alpha", "zeta"])
    for reader in READERS:
        last = extract_thread(graph, CONFIG, reader=reader).turns[-1].supersteps[0]
        assert [task.path for task in last.tasks] == streamed, reader


def _started(graph: CompiledStateGraph, payload: Any, config: Any) -> list[str]:
    """The nodes a run started, in the order LangGraph streamed their starts."""
    return [
        data["name"]
        for data in graph.stream(payload, config, stream_mode="tasks")
        if "triggers" in data
    ]


@pytest.mark.parametrize("copy", [False, True])
def test_a_time_travel_run_plans_as_the_checkpoint_it_was_given(copy: bool, saver: Any) -> None:
    """Time travel to the checkpoint before the fan-out saves a ``"fork"`` checkpoint that
    stores no updated channels, yet LangGraph plans from the given checkpoint's: by name.
    A ``__copy__`` fork is planned in the graph's order."""
    graph = _fan_out(saver, pause=False)
    assert _started(graph, {"log": []}, CONFIG) == ["plan", "alpha", "zeta"]
    fan_out = next(s for s in graph.get_state_history(CONFIG) if len(s.next) == 2)
    origin = fan_out.config
    if copy:
        origin = graph.update_state(fan_out.config, None, as_node="__copy__")
    replayed = _started(graph, None, origin)
    assert replayed == (["zeta", "alpha"] if copy else ["alpha", "zeta"])
    for reader in READERS:
        last = extract_thread(graph, CONFIG, reader=reader).turns[-1].supersteps[0]
        assert [task.path for task in last.tasks] == replayed, reader


_SOURCES = st.sampled_from(["input", "loop", "update", "fork", None])


@given(
    st.lists(
        st.tuples(_SOURCES, st.one_of(st.none(), st.integers(-1, 6)), st.booleans()),
        max_size=8,
    ),
    st.data(),
)
def test_planned_by_name_is_decided_by_the_checkpoint_or_a_forks_parent(
    rows: list[tuple[str | None, int | None, bool]], data: st.DataObject
) -> None:
    ids = [f"c{i}" for i in range(len(rows))]
    checkpoints = [
        PlanSource(ids[i], data.draw(st.sampled_from([None, *ids[:i]])), source, step, updates)
        for i, (source, step, updates) in enumerate(rows)
    ]
    by_id = {c.id: c for c in checkpoints}
    found = planned_by_name(checkpoints)
    for c in checkpoints:
        parent = by_id.get(c.parent_id) if c.parent_id else None
        inherits = (
            c.source == "fork"
            and parent is not None
            and parent.records_updates
            and c.step is not None
            and parent.step == c.step - 1
        )
        assert (c.id in found) == (c.records_updates or inherits)
