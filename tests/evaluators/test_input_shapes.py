"""What a new user passes by mistake is refused with the shape that was expected (issue 30)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.types import Command, interrupt

import lg_eval
from lg_eval.errors import TrajectoryFormatError


def draft(state: MessagesState):
    return {"messages": [("ai", "Refund $30 for order 42?")]}


def approve(state: MessagesState):
    return {"messages": [("human", interrupt("Approve the refund?"))]}


def send(state: MessagesState):
    return {"messages": [("ai", "Refund sent.")]}


@pytest.fixture(scope="module")
def thread() -> lg_eval.ThreadTrajectory:
    builder = StateGraph(MessagesState).add_sequence([draft, approve, send])
    graph = builder.add_edge(START, "draft").compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "refund-42"}}
    graph.invoke({"messages": [("user", "Please refund order 42")]}, config)
    graph.invoke(Command(resume="approved"), config)
    return lg_eval.extract_thread(graph, config)


def test_a_flat_reference_list_is_a_typed_error_naming_the_per_turn_shape(thread) -> None:
    with pytest.raises(TrajectoryFormatError) as error:
        lg_eval.evaluators.graph_trajectory_strict_match(
            outputs=thread, reference_outputs=["__start__", "agent"]
        )
    message = str(error.value)
    assert message.startswith(
        "reference_outputs is a flat list of node names (['__start__', 'agent']); a graph "
        "trajectory has one list per turn: write [[...]] for a one-turn thread"
    )


def test_the_same_names_as_per_turn_lists_are_scored(thread) -> None:
    reference = [["__start__", "draft", "approve", "__interrupt__"], ["send"]]
    result = lg_eval.evaluators.graph_trajectory_strict_match(
        outputs=thread, reference_outputs=reference
    )
    assert result["score"] is True


names = st.lists(st.text(min_size=1, max_size=8), min_size=1, max_size=6)


@settings(max_examples=60, deadline=None)
@given(names)
def test_any_flat_list_of_names_is_refused_for_either_argument(flat: list[str]) -> None:
    reference = {"steps": [flat]}
    for outputs, reference_outputs, argument in (
        (flat, reference, "outputs"),
        (reference, flat, "reference_outputs"),
    ):
        with pytest.raises(TrajectoryFormatError, match=rf"^{re.escape(argument)} is a flat list"):
            lg_eval.evaluators.graph_trajectory_strict_match(
                outputs=outputs, reference_outputs=reference_outputs
            )
