"""A graph that did not write a thread is refused by every reader, whatever its shape.

The thread is written by a scenario graph; it is then read with the same graph rebuilt
from its ``StateGraph`` builder with one node renamed (edges, branch targets, ``Command``
destinations and breakpoints follow the new name). Where the thread was written under
that node's name (LangGraph's ``tasks`` stream announced a task of that name, or an
``update_state`` wrote as that node), every reader (generic, fast,
auto, the batch reader) must raise :class:`GraphMismatchError` naming the stored name;
where it never did, the renamed graph wrote the same checkpoints, and each reader must
give the trajectory the original graph gives.
"""

from __future__ import annotations

import warnings
from collections import defaultdict
from dataclasses import replace
from typing import Any, TypedDict

import pytest
from langchain_core.messages import AIMessage
from langgraph.graph import END, START, MessagesState, StateGraph

from graphs.scenarios import SCENARIOS, SHAPES, Scenario, drive
from lg_eval import ExtractionWarning, aextract_thread, extract_thread
from lg_eval.errors import GraphMismatchError
from lg_eval.extract import aextract_threads, extract_threads

CONFIG: Any = {"configurable": {"thread_id": "t"}}
READERS = ("generic", "fast", "auto")
ALL = {**SCENARIOS, **SHAPES}
GRAPH_SCENARIOS = sorted(n for n, s in ALL.items() if n != "functional")
"""Every scenario built with a ``StateGraph`` (the functional one has no builder)."""


def renamed(graph: Any, old: str, new: str, inside: str | None = None) -> Any:
    """``graph`` rebuilt from its builder with node ``old`` named ``new``, on the same saver;
    with ``inside``, the node renamed is one of the subgraph that node ``inside`` runs."""
    builder = graph.builder
    if inside is not None:
        spec = builder.nodes[inside]
        sub = renamed(spec.runnable, old, new)
        return rebuilt(graph, lambda n: n, {inside: replace(spec, runnable=sub)})

    def name(n: str) -> str:
        return new if n == old else n

    return rebuilt(graph, name, {})


def rebuilt(graph: Any, name: Any, nodes: dict[str, Any]) -> Any:
    """``graph``'s builder copied with node names mapped by ``name`` and the specs of
    ``nodes`` put in place, compiled on the graph's checkpointer and breakpoints."""
    builder = graph.builder

    def ends(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: name(v) for k, v in value.items()}
        return tuple(name(v) for v in value) if value else value

    copy = StateGraph(builder.state_schema, builder.context_schema)
    copy.__dict__.update(builder.__dict__)  # schemas, channels, managed values, defaults
    copy.nodes = {
        name(k): replace(nodes.get(k, v), ends=ends(v.ends)) for k, v in builder.nodes.items()
    }
    copy.edges = {(name(a), name(b)) for a, b in builder.edges}
    copy.waiting_edges = {(tuple(map(name, a)), name(b)) for a, b in builder.waiting_edges}
    copy.branches = defaultdict(dict)
    for start, specs in builder.branches.items():
        copy.branches[name(start)] = {k: s._replace(ends=ends(s.ends)) for k, s in specs.items()}
    copy.compiled = False

    def points(value: Any) -> Any:
        return value if value == "*" else [name(n) for n in value or ()]

    return copy.compile(
        checkpointer=graph.checkpointer,
        interrupt_before=points(graph.interrupt_before_nodes),
        interrupt_after=points(graph.interrupt_after_nodes),
    )


def played(spec: Scenario, saver: Any) -> tuple[Any, dict[str, set[str]]]:
    """The scenario's graph with its script played on thread ``t``, and, per namespace
    (``""``, ``"researcher"``...), the node names the thread was written under: the tasks
    LangGraph's ``tasks`` stream announced, and the nodes ``update_state(..., as_node=...)``
    wrote as."""
    graph = spec.build(checkpointer=saver)
    ran: dict[str, set[str]] = defaultdict(set)
    for turn in spec.turns:
        for edit in turn.edits:
            if edit.as_node:
                ran[edit.subgraph or ""].add(edit.as_node)

    def call(graph: Any, payload: Any, config: Any) -> None:
        stream = graph.stream(payload, config, stream_mode="tasks", subgraphs=True)
        for ns, event in stream:
            ran[bare(ns)].add(event["name"])

    drive(graph, "t", spec.turns, call=call)
    return graph, ran


def stored_namespaces(saver: Any) -> set[str]:
    """The namespaces (without task ids) the thread has checkpoints in."""
    return {bare(t.config["configurable"]["checkpoint_ns"].split("|")) for t in saver.list(CONFIG)}


def bare(ns: Any) -> str:
    """A namespace's parts (``("researcher:<task id>",)``) without task ids, joined."""
    return "|".join(part.split(":")[0] for part in ns)


def quietly(read: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ExtractionWarning)
        return read()


def outcomes(graph: Any) -> dict[str, Any]:
    """What each reader gives for the thread: a dumped trajectory, or the error."""
    found: dict[str, Any] = {}
    for reader in READERS:
        try:
            found[reader] = quietly(lambda: extract_thread(graph, CONFIG, reader=reader))  # noqa: B023
        except Exception as exc:
            found[reader] = exc
    (batched,) = quietly(lambda: list(extract_threads(graph, [CONFIG], return_exceptions=True)))
    found["batch"] = batched
    return {k: v if isinstance(v, Exception) else v.model_dump() for k, v in found.items()}


@pytest.mark.parametrize("scenario", GRAPH_SCENARIOS)
def test_renaming_any_node_is_refused_by_every_reader(scenario: str, saver: Any) -> None:
    spec: Scenario = ALL[scenario]
    graph, ran = played(spec, saver)
    original = outcomes(graph)
    assert all(not isinstance(v, Exception) for v in original.values()), original
    for node in graph.builder.nodes:
        found = outcomes(renamed(graph, node, f"{node}_renamed"))
        if node in ran[""]:
            for reader, outcome in found.items():
                assert isinstance(outcome, GraphMismatchError), (node, reader, outcome)
                assert f"record nodes {node!r} that the graph does not have" in str(outcome)
        else:  # never ran: the renamed graph would have written the same thread
            assert found == original, node


SUBGRAPH_SCENARIOS = [
    "research",
    "research_shallow",
    "handoff",
    "deep_handoff",
    "subgraph_breakpoint",
    "parallel_subgraph_breakpoint",
]


@pytest.mark.parametrize("scenario", SUBGRAPH_SCENARIOS)
def test_renaming_any_node_of_a_subgraph_is_refused_by_every_reader(
    scenario: str, saver: Any
) -> None:
    graph, ran = played(ALL[scenario], saver)
    original = outcomes(graph)
    stored = stored_namespaces(saver)
    subgraphs = [n for n, s in graph.builder.nodes.items() if hasattr(s.runnable, "builder")]
    assert subgraphs
    for inside in subgraphs:
        for node in graph.builder.nodes[inside].runnable.builder.nodes:
            found = outcomes(renamed(graph, node, f"{node}_renamed", inside=inside))
            if node in ran[inside] and inside in stored:
                for reader, outcome in found.items():
                    assert isinstance(outcome, GraphMismatchError), (inside, node, reader)
                    assert f"record nodes {node!r} in subgraph {inside!r}" in str(outcome)
            else:  # never ran, or ran without checkpoints of its own: nothing stored names it
                assert found == original, (inside, node)


def react(tools: str, saver: Any) -> Any:
    """A ReAct-shaped graph (agent <-> ``tools``) whose nodes do nothing."""
    builder = StateGraph(MessagesState)
    builder.add_node("agent", lambda state: {})
    builder.add_node(tools, lambda state: {})
    builder.add_edge(START, "agent")

    def route(state: MessagesState) -> str:
        last = state["messages"][-1]
        return tools if isinstance(last, AIMessage) and last.tool_calls else END

    builder.add_conditional_edges("agent", route, [tools, END])
    builder.add_edge(tools, "agent")
    return builder.compile(checkpointer=saver)


@pytest.mark.parametrize("reader", READERS)
def test_another_react_graph_with_its_tools_node_named_otherwise_is_refused(
    reader: str, saver: Any
) -> None:
    SCENARIOS["weather"].played(saver)  # agent -> tools (interrupt, resume) -> agent
    with pytest.raises(GraphMismatchError) as raised:
        extract_thread(react("act", saver), CONFIG, reader=reader)  # type: ignore[arg-type]
    assert str(raised.value) == (
        "Thread 't' was not written by this graph: its checkpoints record nodes 'tools' that "
        "the graph does not have (its nodes: act, agent). Pass the graph that ran the thread "
        "(a renamed node or another graph gives a wrong trajectory)."
    )


def test_the_batch_reader_refuses_it_in_its_place(saver: Any) -> None:
    SCENARIOS["weather"].played(saver, "t")
    other = react("act", saver)
    found = list(extract_threads(other, [CONFIG], return_exceptions=True))
    assert [type(f) for f in found] == [GraphMismatchError]
    assert "record nodes 'tools'" in str(found[0])


class Log(TypedDict):
    log: list[str]


class Notes(TypedDict):
    notes: list[str]


def one_node(state: type, saver: Any) -> Any:
    key = next(iter(state.__annotations__))
    builder = StateGraph(state)
    builder.add_node("write", lambda s: {key: ["x"]})
    builder.add_edge(START, "write")
    return builder.compile(checkpointer=saver)


@pytest.mark.parametrize("reader", READERS)
def test_a_graph_lacking_a_stored_state_channel_is_refused(reader: str, saver: Any) -> None:
    one_node(Log, saver).invoke({"log": []}, CONFIG)
    with pytest.raises(GraphMismatchError) as raised:
        extract_thread(one_node(Notes, saver), CONFIG, reader=reader)  # type: ignore[arg-type]
    assert str(raised.value) == (
        "Thread 't' was not written by this graph: its checkpoints record state channels "
        "'log' that the graph does not have (its state: notes). Pass the graph that ran the "
        "thread (another state schema gives a wrong trajectory)."
    )


@pytest.mark.parametrize("reader", READERS)
async def test_the_async_readers_refuse_another_react_graph_too(
    reader: str, async_saver: Any
) -> None:
    await SCENARIOS["weather"].aplayed(async_saver)
    with pytest.raises(GraphMismatchError, match="record nodes 'tools' that the graph"):
        await aextract_thread(react("act", async_saver), CONFIG, reader=reader)  # type: ignore[arg-type]
    found = [
        t
        async for t in aextract_threads(react("act", async_saver), [CONFIG], return_exceptions=True)
    ]
    assert [type(f) for f in found] == [GraphMismatchError]
