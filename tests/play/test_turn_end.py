"""When the player reads the thread's state after a turn, and that skipping it loses nothing.

A watched turn (LangGraph's own run methods, no hidden root node or run tag) that ends
without the root's ``__interrupt__`` chunk finished with nothing pending, so the player
takes no ``get_state`` snapshot after it. Every stop must still be seen: interrupts and
static breakpoints at the root, in a subgraph node, and in a subgraph invoked from inside
a node function (which ``get_subgraphs`` cannot find and ``invoke``'s output does not
show). Real graphs on real SQLite files; ``get_state`` is counted on the graph instance,
and every skip is checked against LangGraph's own snapshot.
"""

from __future__ import annotations

import operator
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pytest
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.constants import TAG_HIDDEN
from langgraph.func import entrypoint, task
from langgraph.graph import END, START, StateGraph
from langgraph.types import Send, interrupt

from lg_eval.datasets import Case
from lg_eval.errors import ScriptMismatchError
from lg_eval.play import _player, aopen_checkpointer, aplay_case, play_case, resolve_target
from lg_eval.play._player import ENDED, TurnEnd, ends_observably
from tests.play.golden import CASES, IDS


class State(TypedDict, total=False):
    text: str


class Fan(TypedDict, total=False):
    text: str
    items: list[str]
    answers: Annotated[list[str], operator.add]


def _write(state: State) -> State:
    return {"text": state.get("text", "") + "!"}


def _ask(state: State) -> State:
    return {"text": str(interrupt("Approve?"))}


@pytest.fixture
def saver(tmp_path: Path) -> Iterator[SqliteSaver]:
    with SqliteSaver.from_conn_string(str(tmp_path / "threads.sqlite")) as s:
        yield s


@pytest.fixture(autouse=True)
def skips_agree_with_langgraph(monkeypatch: pytest.MonkeyPatch) -> list[TurnEnd]:
    """Wrap every watched turn: when it says ENDED, LangGraph's snapshot must show nothing
    pending (no next node, no interrupt at any depth). Returns the ends seen, in order."""
    seen: list[TurnEnd] = []
    real = _player.watched_turn

    def checked(graph: Any, payload: Any, config: RunnableConfig) -> Any:
        effect = real(graph, payload, config)

        def run() -> TurnEnd:
            end = effect.run()
            seen.append(end)
            if end is ENDED:
                snapshot = type(graph).get_state(graph, config, subgraphs=True)  # uncounted
                assert (snapshot.next, _interrupts(snapshot)) == ((), [])
            return end

        async def arun() -> TurnEnd:
            end = await effect.arun()
            seen.append(end)
            if end is ENDED:
                snapshot = await type(graph).aget_state(graph, config, subgraphs=True)
                assert (snapshot.next, _interrupts(snapshot)) == ((), [])
            return end

        return type(effect)(run, arun)

    monkeypatch.setattr("lg_eval.play._player.watched_turn", checked)
    return seen


def _interrupts(snapshot: Any) -> list[Any]:
    found = [i for t in snapshot.tasks for i in t.interrupts]
    return found + [i for t in snapshot.tasks if t.state for i in _interrupts(t.state)]


def _case(*turns: dict[str, Any]) -> Case:
    return Case.model_validate({"id": "c", "turns": list(turns)})


def _counted(graph: Any) -> list[int]:
    """Count the graph's ``get_state`` calls (an instance attribute: the class is intact)."""
    calls = [0]
    real = graph.get_state

    def get_state(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        return real(*args, **kwargs)

    graph.get_state = get_state
    return calls


def _linear(saver: Any, **compile_kw: Any) -> Any:
    builder = StateGraph(State)
    builder.add_node("a", _write)
    builder.add_node("b", _write)
    builder.add_edge(START, "a")
    builder.add_edge("a", "b")
    builder.add_edge("b", END)
    return builder.compile(checkpointer=saver, **compile_kw)


def _asking(saver: Any) -> Any:
    builder = StateGraph(State)
    builder.add_node("ask", _ask)
    builder.add_edge(START, "ask")
    builder.add_edge("ask", END)
    return builder.compile(checkpointer=saver)


def _calling(inner: Any, saver: SqliteSaver) -> Any:
    """A graph whose node function invokes ``inner`` looked up in a mapping, so LangGraph's
    ``get_subgraphs`` cannot find it (it looks at a function's closure and globals)."""
    registry = {"inner": inner}

    def outer(state: State) -> State:
        return registry["inner"].invoke(state)

    builder = StateGraph(State)
    builder.add_node("outer", outer)
    builder.add_edge(START, "outer")
    return builder.compile(checkpointer=saver)


def test_a_finished_turn_takes_no_snapshot(saver: SqliteSaver) -> None:
    graph = _linear(saver)
    calls = _counted(graph)
    played = play_case(graph, _case({"input": {"text": "hi"}}), thread_id="t")
    assert (calls[0], played.turns[0].asked, played.turns[0].next_nodes) == (1, [], [])


def test_an_interrupted_turn_is_read_with_a_snapshot(saver: SqliteSaver) -> None:
    graph = _asking(saver)
    calls = _counted(graph)
    played = play_case(graph, _case({"input": {"text": "hi"}}, {"resume": "yes"}), thread_id="t")
    assert [a.path for a in played.turns[0].asked] == ["ask"]
    assert calls[0] == 2  # the fresh-thread check and after the interrupted turn


def test_a_static_breakpoint_is_reported(saver: SqliteSaver) -> None:
    graph = _linear(saver, interrupt_before=["b"])
    with pytest.raises(ScriptMismatchError, match="is paused before 'b'"):
        play_case(graph, _case({"input": {"text": "hi"}}), thread_id="t")


def test_an_interrupt_after_breakpoint_is_reported(saver: SqliteSaver) -> None:
    graph = _linear(saver, interrupt_after=["a"])
    with pytest.raises(ScriptMismatchError, match="is paused before 'b'"):
        play_case(graph, _case({"input": {"text": "hi"}}), thread_id="t")


def test_a_breakpoint_then_continue_plays_to_the_end(saver: SqliteSaver) -> None:
    graph = _linear(saver, interrupt_before=["b"])
    played = play_case(graph, _case({"input": {"text": "hi"}}, {"continue": True}), thread_id="t")
    assert [t.next_nodes for t in played.turns] == [["b"], []]
    assert graph.get_state({"configurable": {"thread_id": "t"}}).values == {"text": "hi!!"}


def test_a_subgraph_node_breakpoint_is_reported(saver: SqliteSaver) -> None:
    builder = StateGraph(State)
    builder.add_node("outer", _linear(None, interrupt_before=["b"]))
    builder.add_edge(START, "outer")
    graph = builder.compile(checkpointer=saver)
    with pytest.raises(ScriptMismatchError, match="is paused before 'outer'"):
        play_case(graph, _case({"input": {"text": "hi"}}), thread_id="t")


def test_a_breakpoint_of_a_subgraph_called_from_a_node_function_is_reported(
    saver: SqliteSaver,
) -> None:
    graph = _calling(_linear(None, interrupt_before=["b"]), saver)
    assert list(graph.get_subgraphs()) == []
    output = graph.invoke({"text": "x"}, {"configurable": {"thread_id": "probe"}})
    assert output == {"text": "x"}  # invoke's output does not show the stop
    with pytest.raises(ScriptMismatchError, match="is paused before 'outer'"):
        play_case(graph, _case({"input": {"text": "hi"}}), thread_id="t")


def test_an_interrupt_of_a_subgraph_called_from_a_node_function_is_answered(
    saver: SqliteSaver,
) -> None:
    graph = _calling(_asking(None), saver)
    played = play_case(graph, _case({"input": {"text": "hi"}}, {"resume": "ok"}), thread_id="t")
    assert [[a.value for a in t.asked] for t in played.turns] == [["Approve?"], []]
    assert graph.get_state({"configurable": {"thread_id": "t"}}).values == {"text": "ok"}


def test_a_subgraph_interrupt_keeps_its_node_path(saver: SqliteSaver) -> None:
    builder = StateGraph(State)
    builder.add_node("outer", _asking(None))
    builder.add_edge(START, "outer")
    graph = builder.compile(checkpointer=saver)
    played = play_case(graph, _case({"input": {"text": "hi"}}, {"resume": "ok"}), thread_id="t")
    assert [a.path for a in played.turns[0].asked] == ["outer:ask"]


def test_interrupts_in_send_branches_are_all_reported(saver: SqliteSaver) -> None:
    def fan_out(state: Fan) -> list[Send]:
        return [Send("review", {"text": item}) for item in state.get("items", [])]

    def review(state: Fan) -> Fan:
        return {"answers": [str(interrupt(f"ok {state['text']}?"))]}

    builder = StateGraph(Fan)
    builder.add_node("review", review)
    builder.add_conditional_edges(START, fan_out, ["review"])
    graph = builder.compile(checkpointer=saver)
    played = play_case(
        graph,
        _case({"input": {"items": ["x", "y"]}}, {"resume": "fine"}),
        thread_id="t",
    )
    assert sorted(a.value for a in played.turns[0].asked) == ["ok x?", "ok y?"]
    assert played.turns[1].asked == []
    assert graph.get_state({"configurable": {"thread_id": "t"}}).values["answers"] == ["fine"] * 2


def test_a_functional_task_interrupt_is_reported(saver: SqliteSaver) -> None:
    @task
    def confirm(text: str) -> str:
        return str(interrupt(f"send {text}?"))

    @entrypoint(checkpointer=saver)
    def flow(text: str) -> str:
        return confirm(text).result() + "!"

    calls = _counted(flow)
    played = play_case(flow, _case({"input": "hi"}, {"resume": "sent"}), thread_id="t")
    assert [[a.value for a in t.asked] for t in played.turns] == [["send hi?"], []]
    assert calls[0] == 2  # fresh check, after the interrupt; the non-dict end is watched


def test_an_interrupt_in_a_hidden_node_is_reported(saver: SqliteSaver) -> None:
    graph = _asking(saver)
    graph.nodes["ask"].tags = [TAG_HIDDEN]
    assert ends_observably(graph, {}) is False
    output = graph.invoke({"text": "x"}, {"configurable": {"thread_id": "probe"}})
    assert "__interrupt__" not in output  # LangGraph emits nothing for a hidden task
    played = play_case(graph, _case({"input": {"text": "hi"}}, {"resume": "ok"}), thread_id="t")
    assert [a.path for a in played.turns[0].asked] == ["ask"]


def test_a_hidden_run_tag_is_not_watched(saver: SqliteSaver) -> None:
    assert ends_observably(_linear(saver), {"tags": [TAG_HIDDEN]}) is False
    assert ends_observably(_linear(saver).with_config(tags=[TAG_HIDDEN]), {}) is False


def test_a_graph_with_its_own_invoke_is_not_watched(saver: SqliteSaver) -> None:
    kind = type(_linear(saver))
    custom = type("Custom", (kind,), {"invoke": lambda self, *a, **k: kind.invoke(self, *a, **k)})
    graph = _linear(saver)
    graph.__class__ = custom
    assert ends_observably(graph, {}) is False
    calls = _counted(graph)
    play_case(graph, _case({"input": {"text": "hi"}}), thread_id="t")
    assert calls[0] == 2  # fresh check and after the (unwatched) turn


def test_a_plain_graph_is_watched(saver: SqliteSaver) -> None:
    assert ends_observably(_linear(saver), {}) is True


def test_a_failing_turn_is_read_with_a_snapshot(saver: SqliteSaver) -> None:
    def boom(state: State) -> State:
        raise ValueError("no")

    builder = StateGraph(State)
    builder.add_node("boom", boom)
    builder.add_edge(START, "boom")
    graph = builder.compile(checkpointer=saver)
    calls = _counted(graph)
    played = play_case(graph, _case({"input": {"text": "hi"}}), thread_id="t")
    assert (played.error, played.turns[0].next_nodes, calls[0]) == (
        "ValueError: no",
        ["boom"],
        2,
    )


@pytest.mark.parametrize(("dataset", "case"), CASES, ids=IDS)
def test_every_golden_case_plays_the_same_watched_or_not(
    dataset: Any, case: Case, monkeypatch: pytest.MonkeyPatch, skips_agree_with_langgraph: list[Any]
) -> None:
    def fresh() -> Any:  # each play gets its own graph: scripted models keep their place
        return resolve_target(dataset.target_for(case), InMemorySaver(), allow_code=True)

    watched = play_case(fresh(), case, thread_id="t")
    assert ENDED in skips_agree_with_langgraph  # at least one snapshot was skipped
    monkeypatch.setattr("lg_eval.play._player.ends_observably", lambda graph, config: False)
    read = play_case(fresh(), case, thread_id="t")

    def shape(played: Any) -> list[Any]:
        return [
            (t.kind, [(a.path, a.value) for a in t.asked], t.next_nodes, t.error)
            for t in played.turns
        ]

    assert (shape(watched), watched.error) == (shape(read), read.error)


async def test_the_async_player_skips_the_same_snapshots(tmp_path: Path) -> None:
    async with aopen_checkpointer(f"sqlite:///{tmp_path / 'async.sqlite'}") as async_saver:
        graph = _asking(async_saver)
        calls = [0]
        real = graph.aget_state

        async def aget_state(*args: Any, **kwargs: Any) -> Any:
            calls[0] += 1
            return await real(*args, **kwargs)

        graph.aget_state = aget_state
        turns = ({"input": {"text": "hi"}}, {"resume": "yes"})
        played = await aplay_case(graph, _case(*turns), thread_id="t")
    assert ([a.path for a in played.turns[0].asked], calls[0]) == (["ask"], 2)


async def test_the_async_player_reports_a_nested_breakpoint(tmp_path: Path) -> None:
    async with aopen_checkpointer(f"sqlite:///{tmp_path / 'async.sqlite'}") as async_saver:
        inner = _linear(None, interrupt_before=["b"])

        async def outer(state: State) -> State:
            return await inner.ainvoke(state)

        builder = StateGraph(State)
        builder.add_node("outer", outer)
        builder.add_edge(START, "outer")
        graph = builder.compile(checkpointer=async_saver)
        with pytest.raises(ScriptMismatchError, match="is paused before 'outer'"):
            await aplay_case(graph, _case({"input": {"text": "hi"}}), thread_id="t")
