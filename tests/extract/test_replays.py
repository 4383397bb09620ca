"""Edits made while a subgraph node waits, and time travel from a stop, read on every
lineage: expectations come from what LangGraph streamed (:mod:`tests.extract.live`) and
from its own state (``get_state_history``), never from lg_eval's output."""

from __future__ import annotations

import warnings
from typing import Any

import pytest
from langgraph.types import Command

from graphs import shapes
from graphs.scenarios import SHAPES, Turn, drive
from lg_eval import ExtractionWarning, extract_thread
from lg_eval._trajectory import INTERRUPT, ThreadTrajectory
from tests.extract.live import check, record, recorder

CONFIG = {"configurable": {"thread_id": "t"}}
READERS = ["fast", "generic"]


def extracted(graph: Any, config: Any) -> ThreadTrajectory:
    """The trajectory at ``config``, the same through both readers."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ExtractionWarning)
        fast, generic = (extract_thread(graph, config, reader=r) for r in READERS)
    assert fast.model_dump() == generic.model_dump()
    return fast


def abandoned_end(graph: Any) -> Any:
    """The config of the end of the branch time travel abandoned: the oldest checkpoint
    where the thread had nothing left to run (LangGraph's own history)."""
    return [s for s in graph.get_state_history(CONFIG) if not s.next][-1].config


# --- update_state on the root while a node inside a subgraph waits --------------------------


@pytest.mark.parametrize("name", ["edit_while_subgraph_paused", "edit_while_paused_two_down"])
def test_a_root_edit_while_a_subgraph_node_waits_is_one_resume_turn(name: str, saver: Any) -> None:
    graph, live = record(SHAPES[name], saver)
    trajectory = extracted(graph, CONFIG)
    check(trajectory, live)
    paused, resumed = trajectory.turns[:2]
    assert paused.interrupts[0].id == live[0].interrupt_ids[0]
    assert resumed.resume == {live[0].interrupt_ids[0]: "yes"}
    assert resumed.resume_by_node == {paused.interrupts[0].path: "yes"}
    assert [e.values for e in resumed.edits] == [{"log": ["edited"]}]
    assert (resumed.kind, resumed.status) == ("resume", "completed")


def test_turns_after_the_edited_resume_are_not_shifted(saver: Any) -> None:
    graph, live = record(SHAPES["edit_while_subgraph_paused"], saver)
    turns = extracted(graph, CONFIG).turns
    assert (
        [t.kind for t in turns]
        == [t.kind for t in live]
        == [
            "input",
            "resume",
            "input",
            "resume",
        ]
    )
    assert turns[2].input == {"log": ["again"]}
    assert turns[3].resume == {live[2].interrupt_ids[0]: "no"}
    assert turns[3].state["log"] == graph.get_state(CONFIG).values["log"]


def test_the_resumed_subgraph_starts_again_and_omits_only_the_waiting_nodes(saver: Any) -> None:
    graph, live = record(SHAPES["edit_while_subgraph_paused"], saver)
    trajectory = extracted(graph, CONFIG)
    started = [t.path for t in live[1].started]
    assert started == ["team", "team:prep", "team:ask", "team:after", "fin"]
    repeat = trajectory.to_graph_trajectory(resumed="repeat").steps[1]
    assert repeat == ["team", "team:__start__", *started[1:]]
    omit = trajectory.to_graph_trajectory().steps[1]
    assert omit == ["team:__start__", "team:prep", "team:after", "fin"]


# --- time travel from a static breakpoint ---------------------------------------------------


@pytest.mark.parametrize("name", ["breakpoint_time_travel", "subgraph_breakpoint_time_travel"])
def test_a_breakpoint_turn_reads_as_one_on_every_lineage(name: str, saver: Any) -> None:
    scenario = SHAPES[name]
    graph, live = record(scenario, saver)
    newest = extracted(graph, CONFIG)
    check(newest, [t for i, t in enumerate(live) if i not in scenario.abandoned])
    abandoned = extracted(graph, abandoned_end(graph))
    check(abandoned, live[:2])
    for trajectory in (newest, abandoned):
        stopped = trajectory.turns[0]
        assert (stopped.status, stopped.breakpoint, stopped.branched) == (
            "interrupted",
            True,
            False,
        )
        assert stopped.interrupts == []
        assert trajectory.to_graph_trajectory().steps[0][-1] == INTERRUPT


def test_the_replay_from_a_breakpoint_is_a_continue_turn(saver: Any) -> None:
    graph, live = record(SHAPES["breakpoint_time_travel"], saver)
    replay = extracted(graph, CONFIG).turns[1]
    assert (replay.kind, replay.status) == ("continue", "completed")
    assert [t.path for s in replay.supersteps for t in s.tasks] == [t.path for t in live[2].started]


# --- a turn cut short by a mid-turn replay -----------------------------------------------------


def test_a_turn_cut_short_by_a_mid_turn_replay_is_told_apart_from_a_pause(saver: Any) -> None:
    graph = shapes.build_ask(checkpointer=saver)
    live: list[Any] = []
    drive(graph, "t", [Turn({"log": []}), Turn(Command(resume="yes"))], call=recorder(live))
    history = list(graph.get_state_history(CONFIG))
    target = next(s for s in history if s.next == ("after",))  # mid-turn: the run went on
    drive(graph, "t", [Turn(None, at=lambda _: target)], call=recorder(live))
    paused, cut, replay = extracted(graph, CONFIG).turns
    # The human's pause: an interrupt LangGraph reported, marked in the flat form.
    assert [i.id for i in paused.interrupts] == live[0].interrupt_ids
    # The resumed turn, cut where the replay branched off: what ran before the target.
    assert (cut.kind, cut.status, cut.branched, cut.breakpoint) == (
        "resume",
        "interrupted",
        True,
        False,
    )
    assert cut.interrupts == []
    assert cut.next_nodes == list(target.next)
    ran = [t.path for t in live[1].started if t.path not in target.next]
    assert [t.path for s in cut.supersteps for t in s.tasks] == ran
    repeat = extracted(graph, CONFIG).to_graph_trajectory(resumed="repeat").steps
    assert repeat[1] == ran  # no __interrupt__: nobody paused
    assert (replay.kind, replay.status) == ("continue", "completed")
    assert repeat[2] == [t.path for t in live[2].started]


# --- a resume sent at a static breakpoint -------------------------------------------------------


def test_a_resume_sent_at_a_breakpoint_answers_a_question_never_paused_on(saver: Any) -> None:
    """``Command(resume=...)`` instead of ``invoke(None)`` at a breakpoint before a node that
    asks: its ``interrupt()`` takes the answer at once, so nothing paused there and nothing
    was resumed (the node is listed with ``resumed="omit"`` too)."""
    graph = shapes.build_ask(checkpointer=saver, interrupt_before=["ask"])
    live: list[Any] = []
    turns = [Turn({"log": []}), Turn(Command(resume="yes"))]
    drive(graph, "t", turns, call=recorder(live))
    trajectory = extracted(graph, CONFIG)
    check(trajectory, live)
    stopped, answered = trajectory.turns
    assert (stopped.status, stopped.breakpoint) == ("interrupted", True)
    assert (answered.kind, answered.resume_by_node) == ("resume", {"ask": "yes"})
    assert trajectory.to_graph_trajectory().steps[1] == [t.path for t in live[1].started]
