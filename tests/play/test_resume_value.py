"""The one resume rule: every answer reaches the interrupt it is meant for, as LangGraph reads
``Command(resume=...)`` (``Pregel``'s loop: a dict whose keys all look like interrupt ids
is a map by id; any other value is one answer, refused when several interrupts wait)."""

from __future__ import annotations

import itertools
from operator import add
from typing import Annotated, Any, TypedDict

from hypothesis import assume, given, settings
from hypothesis import strategies as st
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt

from lg_eval.play import PendingInterrupt, answers_by_id, pending_interrupts, resume_value

HEX_KEY = st.text(alphabet="0123456789abcdef", min_size=32, max_size=32)
INTS = st.integers(-(2**63), 2**63 - 1)
LEAVES = st.none() | st.booleans() | INTS | st.text(max_size=8)
"""Values a checkpointer stores (LangGraph's msgpack serializer takes 64-bit integers)."""
VALUES = st.recursive(
    LEAVES,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.text(max_size=4) | HEX_KEY, inner, max_size=3)
    ),
    max_leaves=6,
)
ANSWERS = VALUES | st.dictionaries(INTS | HEX_KEY | st.text(max_size=4), VALUES, max_size=3)
"""Any answer a human, a ``resume_fn`` or a recording may give: dicts keyed like interrupt
ids, empty dicts, ``None`` and int keys included."""

_threads = itertools.count()


class _Got(TypedDict, total=False):
    got: Annotated[list[Any], add]


def _asking(*nodes: str) -> Any:
    """A graph whose ``nodes`` all run from START in one superstep, each asking once."""

    def node(name: str) -> Any:
        return lambda state: {"got": [[name, interrupt(f"{name}?")]]}

    builder: StateGraph[Any] = StateGraph(_Got)
    for name in nodes:
        builder.add_node(name, node(name))
        builder.add_edge(START, name)
        builder.add_edge(name, END)
    return builder.compile(checkpointer=InMemorySaver())


ONE = _asking("ask")
TWO = _asking("left", "right")


def _asked(graph: Any) -> tuple[RunnableConfig, list[PendingInterrupt]]:
    config: RunnableConfig = {"configurable": {"thread_id": f"t{next(_threads)}"}}
    graph.invoke({"got": []}, config)
    return config, pending_interrupts(graph.get_state(config, subgraphs=True))


@settings(max_examples=60, deadline=None)
@given(answer=ANSWERS)
def test_one_pending_interrupt_receives_exactly_its_answer(answer: Any) -> None:
    config, pending = _asked(ONE)
    ONE.invoke(Command(resume=resume_value({pending[0].id: answer}, pending)), config)
    state = ONE.get_state(config)
    assert (state.values["got"], state.next) == ([["ask", answer]], ())


@settings(max_examples=40, deadline=None)
@given(left=ANSWERS, right=ANSWERS)
def test_parallel_interrupts_each_receive_their_own_answer(left: Any, right: Any) -> None:
    config, pending = _asked(TWO)
    by_path = {"left": left, "right": right}
    value = resume_value({ask.id: by_path[ask.path] for ask in pending}, pending)
    TWO.invoke(Command(resume=value), config)
    state = TWO.get_state(config)
    assert (sorted(state.values["got"], key=repr), state.next) == (
        sorted(([k, v] for k, v in by_path.items()), key=repr),
        (),
    )


@given(answer=LEAVES.filter(lambda v: v is not None) | st.lists(VALUES, max_size=3))
def test_one_pending_interrupt_gets_a_plain_answer_bare(answer: Any) -> None:
    (ask,) = pending = [PendingInterrupt(id="a" * 32, path="ask")]
    assert resume_value({ask.id: answer}, pending) == answer


@given(key=HEX_KEY, answer=VALUES)
def test_an_answer_langgraph_would_read_as_a_map_goes_by_id(key: str, answer: Any) -> None:
    pending = [PendingInterrupt(id="a" * 32, path="ask")]
    for misread in ({}, {key: answer}, None, {1: answer}):
        assert resume_value({"a" * 32: misread}, pending) == {"a" * 32: misread}


@given(answer=ANSWERS)
def test_several_pending_interrupts_always_go_by_id(answer: Any) -> None:
    pending = [PendingInterrupt(id=c * 32, path=c) for c in "abc"]
    assert resume_value({ask.id: answer for ask in pending}, pending) == {
        "a" * 32: answer,
        "b" * 32: answer,
        "c" * 32: answer,
    }


@given(answer=ANSWERS)
def test_an_answer_that_is_not_a_map_of_pending_ids_answers_every_interrupt(answer: Any) -> None:
    pending = [PendingInterrupt(id=c * 32, path=c) for c in "ab"]
    assume(not (isinstance(answer, dict) and answer and set(answer) <= {"a" * 32, "b" * 32}))
    assert answers_by_id(answer, pending) == {"a" * 32: answer, "b" * 32: answer}


@given(subset=st.sets(st.sampled_from(["a" * 32, "b" * 32]), min_size=1), answer=VALUES)
def test_a_map_of_pending_ids_answers_those_only(subset: set[str], answer: Any) -> None:
    pending = [PendingInterrupt(id=c * 32, path=c) for c in "ab"]
    given_map = {key: answer for key in subset}
    assert answers_by_id(given_map, pending) == given_map
