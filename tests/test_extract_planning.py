"""Planning a stored checkpoint as ``get_state`` would (``lg_eval.extract.fast._planning``).

The fast reader plans the checkpoints where a run stopped from their serialized form. These
tests ask it to plan *every* checkpoint of every scenario, on every saver, and compare the
tasks with LangGraph's own snapshot, so the shortcut for checkpoints where nothing can run
(no pending ``Send``, no trigger with a value newer than its node saw) is checked on the
checkpoints where it applies and on those where it must not.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict

import pytest
from langgraph.channels.binop import BinaryOperatorAggregate
from langgraph.channels.last_value import LastValue
from langgraph.graph import START, StateGraph
from langgraph.pregel import NodeBuilder, Pregel

from graphs.scenarios import SCENARIOS
from lg_eval._effects import drive
from lg_eval.extract._records import NULL_TASK_ID, RESUME
from lg_eval.extract.fast import _planning as planning
from lg_eval.extract.fast._reader import storage_for


def planned_and_expected(graph: Any, saver: Any, thread_id: str) -> list[tuple[Any, Any]]:
    """``(planned from storage, get_state's tasks)`` as ``(id, name)`` lists, for every
    top-level checkpoint of the thread that the reader would plan from storage."""
    storage = storage_for(saver)
    history = list(graph.get_state_history({"configurable": {"thread_id": thread_id}}))
    keys = [("", s.config["configurable"]["checkpoint_id"]) for s in history]
    stored = drive(storage.stored(saver, thread_id, keys))
    pairs = []
    for snapshot, key in zip(history, keys, strict=True):
        pending = saver.get_tuple(snapshot.config).pending_writes or []
        if any(tid == NULL_TASK_ID and channel != RESUME for tid, channel, _ in pending):
            continue  # update_state writes pending: the reader asks get_state there
        tasks = planning.planned_tasks(
            graph,
            snapshot.config,
            snapshot.metadata["step"],
            stored[key],
            [(tid, channel, None) for tid, channel, _ in pending],
            saver.serde,
        )
        pairs.append(([(t.id, t.name) for t in tasks], [(t.id, t.name) for t in snapshot.tasks]))
    return pairs


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_every_checkpoint_of_every_scenario_plans_as_get_state(name: str, saver: Any) -> None:
    graph = SCENARIOS[name].played(saver)
    pairs = planned_and_expected(graph, saver, "t")
    assert any(expected for _, expected in pairs)
    for planned, expected in pairs:
        assert planned == expected


def test_a_finished_turn_is_planned_without_building_channels(saver: Any, monkeypatch) -> None:
    """At the end of a ReAct turn the consumed ``branch:to:agent`` has a newer version than
    the agent saw but no value, and the pending-sends list is empty: nothing can run, so no
    channel is built and LangGraph is not asked."""
    graph = SCENARIOS["weather"].played(saver)
    newest = graph.get_state({"configurable": {"thread_id": "t"}})
    assert newest.next == ()
    key = ("", newest.config["configurable"]["checkpoint_id"])
    stored = drive(storage_for(saver).stored(saver, "t", [key]))[key]

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("channels were built for a checkpoint where nothing can run")

    monkeypatch.setattr(planning, "channels_from_checkpoint", refuse)
    step = newest.metadata["step"]
    assert planning.planned_tasks(graph, newest.config, step, stored, [], saver.serde) == []


class Counted(TypedDict):
    log: Annotated[list[str], operator.add]


def test_a_trigger_that_has_a_value_when_empty_still_plans_its_node(saver: Any) -> None:
    """A ``BinaryOperatorAggregate`` trigger counts as having a value with nothing stored,
    so a node it triggers that never ran is planned (the shortcut must not skip it)."""
    listener = NodeBuilder().subscribe_only("log").do(lambda log: None)
    starter = NodeBuilder().subscribe_only("start").write_to("seen")
    graph = Pregel(
        nodes={"starter": starter, "listener": listener},
        channels={
            "start": LastValue(str),
            "seen": LastValue(str),
            "log": BinaryOperatorAggregate(list, operator.add),
        },
        input_channels="start",
        output_channels="seen",
        checkpointer=saver,
        interrupt_after_nodes=["starter"],
    )
    graph.invoke("go", {"configurable": {"thread_id": "t"}})
    pairs = planned_and_expected(graph, saver, "t")
    assert [name for _, name in pairs[0][1]] == ["listener"]
    for planned, expected in pairs:
        assert planned == expected


def test_a_node_triggered_again_after_its_last_run_is_planned(saver: Any) -> None:
    """The stopped checkpoint of a breakpoint before ``b``: ``branch:to:b`` has a value and a
    version newer than ``b`` saw (``b`` never ran), so the full planner runs."""
    builder = StateGraph(Counted)
    builder.add_node("a", lambda s: {"log": ["a"]})
    builder.add_node("b", lambda s: {"log": ["b"]})
    builder.add_edge(START, "a")
    builder.add_edge("a", "b")
    graph = builder.compile(checkpointer=saver, interrupt_before=["b"])
    graph.invoke({"log": []}, {"configurable": {"thread_id": "t"}})
    pairs = planned_and_expected(graph, saver, "t")
    assert [name for _, name in pairs[0][1]] == ["b"]
    for planned, expected in pairs:
        assert planned == expected
