"""Thread shapes agentevals misreads: edits, forks, replays, persistent subgraphs, Send
pauses, durability="exit", graphs invoked inside nodes, mixed parallel outcomes."""

from __future__ import annotations

import operator
import warnings
from typing import Annotated, Any, TypedDict

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from langgraph.types import Command, Send, interrupt

from lg_eval import ExtractionWarning, extract_thread
from lg_eval.extract._thread import READERS

READER_NAMES = [r for r in READERS if r != "auto"]


class Log(TypedDict, total=False):
    log: Annotated[list, operator.add]
    item: str


@pytest.fixture(params=READER_NAMES)
def reader(request: pytest.FixtureRequest) -> str:
    return request.param


def cfg(**extra: Any) -> dict[str, Any]:
    return {"configurable": {"thread_id": "t", **extra}}


def steps(graph: Any, reader: str, config: Any = None, resumed: str = "omit") -> list[list[str]]:
    trajectory = extract_thread(graph, config or cfg(), reader=reader)
    return trajectory.to_graph_trajectory(resumed=resumed).steps  # type: ignore[arg-type]


def note(name: str) -> Any:
    return lambda state: {"log": [name]}


def chain(*names: str, checkpointer: Any = None, **compile_options: Any) -> Any:
    """START -> names[0] -> names[1] -> ... as a compiled graph."""
    builder = StateGraph(Log)
    previous = START
    for name in names:
        builder.add_node(name, note(name))
        builder.add_edge(previous, name)
        previous = name
    return builder.compile(checkpointer=checkpointer or InMemorySaver(), **compile_options)


def test_update_state_is_an_edit_not_a_turn_or_step(reader: str) -> None:
    graph = chain("a", "b", interrupt_before=["b"])
    graph.invoke({"log": ["in"]}, cfg())
    graph.update_state(cfg(), {"log": ["edited"]})
    graph.invoke(None, cfg())
    trajectory = extract_thread(graph, cfg(), reader=reader)
    assert trajectory.to_graph_trajectory().steps == [["__start__", "a", "__interrupt__"], ["b"]]
    assert [len(t.edits) for t in trajectory.turns] == [0, 1]
    assert trajectory.turns[1].edits[0].values == {"log": ["edited"]}
    assert trajectory.turns[1].state == {"log": ["in", "a", "edited", "b"]}


def test_fork_follows_newest_lineage_and_drops_the_abandoned_branch(reader: str) -> None:
    graph = chain("a", "b", "c")
    graph.invoke({"log": ["in"]}, cfg())
    before_b = next(s for s in graph.get_state_history(cfg()) if s.next == ("b",))
    forked = graph.update_state(before_b.config, {"log": ["edited"]})
    graph.invoke(None, forked)
    trajectory = extract_thread(graph, cfg(), reader=reader)
    # The first run's b and c happened on the abandoned branch; the fork re-ran them.
    assert trajectory.to_graph_trajectory().steps == [["__start__", "a"], ["b", "c"]]
    assert [t.kind for t in trajectory.turns] == ["input", "continue"]
    assert trajectory.turns[0].branched is True
    assert trajectory.turns[1].state == {"log": ["in", "a", "edited", "b", "c"]}


def test_checkpoint_id_selects_an_older_lineage(reader: str) -> None:
    graph = chain("a", "b", "c")
    graph.invoke({"log": ["in"]}, cfg())
    original_tip = graph.get_state(cfg()).config["configurable"]["checkpoint_id"]
    before_b = next(s for s in graph.get_state_history(cfg()) if s.next == ("b",))
    graph.invoke(None, graph.update_state(before_b.config, {"log": ["edited"]}))
    assert steps(graph, reader, cfg(checkpoint_id=original_tip)) == [["__start__", "a", "b", "c"]]


def test_replay_from_an_old_checkpoint_continues_the_new_branch(reader: str) -> None:
    graph = chain("a", "b", "c")
    graph.invoke({"log": ["in"]}, cfg())
    before_b = next(s for s in graph.get_state_history(cfg()) if s.next == ("b",))
    graph.invoke(None, before_b.config)
    assert steps(graph, reader) == [["__start__", "a"], ["b", "c"]]


def persistent_subgraph_graph() -> Any:
    """A parent whose subgraph is compiled with checkpointer=True and pauses inside."""
    inner = StateGraph(Log)
    inner.add_node("search", note("search"))
    inner.add_node("confirm", lambda s: {"log": [interrupt("confirm?")]})
    inner.add_edge(START, "search")
    inner.add_edge("search", "confirm")
    parent = StateGraph(Log)
    parent.add_node("plan", note("plan"))
    parent.add_node("research", inner.compile(checkpointer=True))
    parent.add_node("write", note("write"))
    parent.add_edge(START, "plan")
    parent.add_edge("plan", "research")
    parent.add_edge("research", "write")
    return parent.compile(checkpointer=InMemorySaver())


def test_checkpointer_true_subgraph_runs_are_not_duplicated_across_turns(reader: str) -> None:
    graph = persistent_subgraph_graph()
    for text in ("first", "second"):
        graph.invoke({"log": [text]}, cfg())
        graph.invoke(Command(resume=f"ok-{text}"), cfg())
    paused_turn = [
        "__start__",
        "plan",
        "research",
        "research:__start__",
        "research:search",
        "research:confirm",
        "__interrupt__",
    ]
    assert steps(graph, reader) == [paused_turn, ["write"], paused_turn, ["write"]]
    trajectory = extract_thread(graph, cfg(), reader=reader)
    assert [t.resume_by_node for t in trajectory.turns[1::2]] == [
        {"research:confirm": "ok-first"},
        {"research:confirm": "ok-second"},
    ]


def test_interrupt_inside_a_send_task(reader: str) -> None:
    builder = StateGraph(Log)
    builder.add_node("split", note("split"))
    builder.add_node(
        "check",
        lambda s: {
            "log": [f"{s['item']}:{interrupt(s['item'])}" if s["item"] == "b" else s["item"]]
        },
    )
    builder.add_node("merge", note("merge"))
    builder.add_edge(START, "split")
    builder.add_conditional_edges("split", lambda s: [Send("check", {"item": i}) for i in "abc"])
    builder.add_edge("check", "merge")
    graph = builder.compile(checkpointer=InMemorySaver())
    graph.invoke({"log": []}, cfg())
    graph.invoke(Command(resume="fine"), cfg())
    assert steps(graph, reader) == [
        ["__start__", "split", "check", "check", "__interrupt__", "check"],
        ["merge"],
    ]
    assert graph.get_state(cfg()).values["log"] == ["split", "a", "b:fine", "c", "merge"]


def test_one_parallel_sibling_pauses_while_the_other_completes(reader: str) -> None:
    builder = StateGraph(Log)
    builder.add_node("start", note("start"))
    builder.add_node("ask", lambda s: {"log": [interrupt("?")]})
    builder.add_node("work", note("work"))
    builder.add_node("join", note("join"))
    builder.add_edge(START, "start")
    builder.add_edge("start", "ask")
    builder.add_edge("start", "work")
    builder.add_edge(["ask", "work"], "join")
    graph = builder.compile(checkpointer=InMemorySaver())
    graph.invoke({"log": []}, cfg())
    graph.invoke(Command(resume="yes"), cfg())
    assert steps(graph, reader) == [
        ["__start__", "start", "ask", "__interrupt__", "work"],
        ["join"],
    ]
    assert steps(graph, reader, resumed="repeat")[1] == ["ask", "join"]


def test_durability_exit_warns_and_names_the_cause(reader: str) -> None:
    graph = chain("a", "b")
    graph.invoke({"log": ["in"]}, cfg(), durability="exit")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        trajectory = extract_thread(graph, cfg(), reader=reader)
    messages = [str(w.message) for w in caught if issubclass(w.category, ExtractionWarning)]
    assert len(messages) == 1 and "durability='exit'" in messages[0]
    assert trajectory.warnings == messages
    assert trajectory.turns[-1].state == {"log": ["in", "a", "b"]}


def test_graph_invoked_inside_a_node_is_read_as_a_subgraph(reader: str) -> None:
    inner = StateGraph(Log)
    inner.add_node("fetch", note("fetch"))
    inner.add_node("approve", lambda s: {"log": [interrupt("approve?")]})
    inner.add_edge(START, "fetch")
    inner.add_edge("fetch", "approve")
    compiled_inner = inner.compile()

    def delegate(state: Log) -> Log:
        return {"log": compiled_inner.invoke({"log": []})["log"]}

    outer = StateGraph(Log)
    outer.add_node("delegate", delegate)
    outer.add_node("done", note("done"))
    outer.add_edge(START, "delegate")
    outer.add_edge("delegate", "done")
    graph = outer.compile(checkpointer=InMemorySaver())
    graph.invoke({"log": []}, cfg())
    graph.invoke(Command(resume="approved"), cfg())
    assert steps(graph, reader) == [
        [
            "__start__",
            "delegate",
            "delegate:__start__",
            "delegate:fetch",
            "delegate:approve",
            "__interrupt__",
        ],
        ["done"],
    ]


def test_new_input_while_paused_starts_a_new_turn(reader: str) -> None:
    builder = StateGraph(Log)
    builder.add_node("ask", lambda s: {"log": [interrupt("?")]})
    builder.add_edge(START, "ask")
    graph = builder.compile(checkpointer=InMemorySaver())
    graph.invoke({"log": ["one"]}, cfg())
    graph.invoke({"log": ["two"]}, cfg())
    trajectory = extract_thread(graph, cfg(), reader=reader)
    assert trajectory.to_graph_trajectory().steps == [
        ["__start__", "ask", "__interrupt__"],
        ["__start__", "ask", "__interrupt__"],
    ]
    assert [t.input for t in trajectory.turns] == [{"log": ["one"]}, {"log": ["two"]}]
