"""Small graphs, one per human-in-the-loop thread shape that real applications use.

No model calls: each node appends its name to ``log``, so a thread's final state says
what ran. `graphs.scenarios.SHAPES` scripts one thread per graph.

* `handoff` / `deep_handoff` - a tool inside a sub-agent hands off to a sibling agent with
  ``Command(graph=Command.PARENT, goto=...)`` (the langgraph-supervisor / swarm pattern),
  one and two subgraph levels deep.
* `subgraph_breakpoint` - a static ``interrupt_before`` compiled into a subgraph, alone or in
  parallel with a root node.
* `looping` - a node that loops until LangGraph's recursion limit stops the run.
* `resume_goto` - an interrupt answered with ``Command(resume=..., update=..., goto=...)``.
* `two_questions` - two nodes that each ask the human a question, for time travel.
* `subgraph_calls` - one node invoking the same compiled subgraph several times in a loop.
* `nested_subgraph_calls` - the same, one level down, inside a subgraph invoked twice.
* `breakpoint_chain` - ``plan -> review -> execute`` with a breakpoint before ``review``.
* `parallel_reviews` - two parallel nodes that each call ``interrupt()``.
* `send_checks` - a ``Send`` fan-out whose tasks of one node each call ``interrupt()``.
* `ask` - one node that asks, then one that runs after the answer.
* `ask_in_subgraph` / `ask_two_down` - the asking node inside a subgraph, one and two
  levels down (for ``update_state`` on the root while it waits).
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable
from typing import Annotated, Any, Literal, TypedDict

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command, Send, interrupt


class Log(TypedDict, total=False):
    """What ran (node names, answers), in order."""

    log: Annotated[list[Any], operator.add]
    item: str


def note(name: str) -> Any:
    """A node that only logs its own name."""

    def node(state: Log) -> dict[str, Any]:
        return {"log": [name]}

    node.__name__ = name
    return node


# --- handoffs ---------------------------------------------------------------------------


def _agent(name: str, target: str) -> CompiledStateGraph:
    """A sub-agent: ``think``, then a ``transfer`` tool that hands off to ``target``, a
    node of the graph the agent is a node of."""

    def transfer(state: Log) -> Command[Any]:
        return Command(graph=Command.PARENT, goto=target, update={"log": [f"{name}->{target}"]})

    builder = StateGraph(Log)
    builder.add_node("think", note(f"{name}.think"))
    builder.add_node("transfer", transfer)
    builder.add_node("never", note(f"{name}.never"))  # the handoff skips it
    builder.add_edge(START, "think")
    builder.add_edge("think", "transfer")
    builder.add_edge("transfer", "never")
    return builder.compile()


def build_handoff(checkpointer: BaseCheckpointSaver | None = None) -> CompiledStateGraph:
    """``triage`` (a sub-agent) hands off to ``specialist`` from its ``transfer`` tool."""
    builder = StateGraph(Log)
    builder.add_node("triage", _agent("triage", "specialist"), destinations=("specialist",))
    builder.add_node("specialist", note("specialist"))
    builder.add_edge(START, "triage")
    builder.add_edge("specialist", END)
    return builder.compile(checkpointer=checkpointer)


def build_deep_handoff(checkpointer: BaseCheckpointSaver | None = None) -> CompiledStateGraph:
    """Two levels: in the ``desk`` subgraph, the ``agent`` sub-agent hands off to the desk's
    ``specialist``, which runs inside ``desk``; the root then runs ``report``."""
    desk = StateGraph(Log)
    desk.add_node("agent", _agent("agent", "specialist"), destinations=("specialist",))
    desk.add_node("specialist", note("desk.specialist"))
    desk.add_edge(START, "agent")
    desk.add_edge("specialist", END)
    builder = StateGraph(Log)
    builder.add_node("desk", desk.compile())
    builder.add_node("report", note("report"))
    builder.add_edge(START, "desk")
    builder.add_edge("desk", "report")
    return builder.compile(checkpointer=checkpointer)


# --- a static breakpoint inside a subgraph ------------------------------------------------


def _mailer() -> CompiledStateGraph:
    builder = StateGraph(Log)
    builder.add_node("draft", note("draft"))
    builder.add_node("send", note("send"))
    builder.add_edge(START, "draft")
    builder.add_edge("draft", "send")
    return builder.compile(interrupt_before=["send"])


def build_subgraph_breakpoint(
    checkpointer: BaseCheckpointSaver | None = None, parallel: bool = False
) -> CompiledStateGraph:
    """``mailer`` (``draft -> send``, a breakpoint before ``send``) then ``done``; with
    ``parallel``, a root ``audit`` node runs next to ``mailer``."""
    builder = StateGraph(Log)
    builder.add_node("mailer", _mailer())
    builder.add_node("done", note("done"))
    builder.add_edge(START, "mailer")
    if parallel:
        builder.add_node("audit", note("audit"))
        builder.add_edge(START, "audit")
        builder.add_edge(["mailer", "audit"], "done")
    else:
        builder.add_edge("mailer", "done")
    return builder.compile(checkpointer=checkpointer)


def build_parallel_subgraph_breakpoint(
    checkpointer: BaseCheckpointSaver | None = None,
) -> CompiledStateGraph:
    return build_subgraph_breakpoint(checkpointer, parallel=True)


# --- the recursion limit ------------------------------------------------------------------

LIMIT = 12
"""The recursion limit the scenario runs with."""
LOOPS = 20
"""More supersteps than :data:`LIMIT` allows in one run, fewer than two runs allow."""


def build_looping(checkpointer: BaseCheckpointSaver | None = None) -> CompiledStateGraph:
    """``tick`` runs until it has logged :data:`LOOPS` times."""

    def route(state: Log) -> Literal["tick", "__end__"]:
        return "tick" if len(state.get("log", [])) < LOOPS else END

    builder = StateGraph(Log)
    builder.add_node("tick", note("tick"))
    builder.add_edge(START, "tick")
    builder.add_conditional_edges("tick", route)
    return builder.compile(checkpointer=checkpointer)


# --- answers that also route ---------------------------------------------------------------


def ask(state: Log) -> dict[str, Any]:
    """Asks the human; logs the answer."""
    return {"log": [interrupt("Go ahead?")]}


def build_ask(
    checkpointer: BaseCheckpointSaver | None = None, interrupt_before: list[str] | None = None
) -> CompiledStateGraph:
    """``ask -> after``; ``bonus`` runs only when a ``Command(goto="bonus")`` sends it."""
    builder = StateGraph(Log)
    builder.add_node("ask", ask)
    builder.add_node("after", note("after"))
    builder.add_node("bonus", note("bonus"))
    builder.add_edge(START, "ask")
    builder.add_edge("ask", "after")
    return builder.compile(checkpointer=checkpointer, interrupt_before=interrupt_before)


def build_two_questions(checkpointer: BaseCheckpointSaver | None = None) -> CompiledStateGraph:
    """``first -> second -> finish``: ``first`` and ``second`` each ask the human."""

    def first(state: Log) -> dict[str, Any]:
        return {"log": [f"first:{interrupt('First question?')}"]}

    def second(state: Log) -> dict[str, Any]:
        return {"log": [f"second:{interrupt('Second question?')}"]}

    builder = StateGraph(Log)
    builder.add_node("first", first)
    builder.add_node("second", second)
    builder.add_node("finish", note("finish"))
    builder.add_edge(START, "first")
    builder.add_edge("first", "second")
    builder.add_edge("second", "finish")
    return builder.compile(checkpointer=checkpointer)


def _asking_team(depth: int) -> CompiledStateGraph:
    """``prep -> ask -> after``; below depth 1, ``ask`` is itself such a team."""
    builder = StateGraph(Log)
    builder.add_node("prep", note("prep"))
    builder.add_node("ask", ask if depth == 1 else _asking_team(depth - 1))
    builder.add_node("after", note("after"))
    builder.add_edge(START, "prep")
    builder.add_edge("prep", "ask")
    builder.add_edge("ask", "after")
    return builder.compile()


def build_ask_in_subgraph(
    checkpointer: BaseCheckpointSaver | None = None, depth: int = 1
) -> CompiledStateGraph:
    """``team -> fin``, where ``team`` is the subgraph ``prep -> ask -> after`` whose ``ask``
    asks the human (``depth=2``: ``team:ask`` is such a subgraph again)."""
    builder = StateGraph(Log)
    builder.add_node("team", _asking_team(depth))
    builder.add_node("fin", note("fin"))
    builder.add_edge(START, "team")
    builder.add_edge("team", "fin")
    return builder.compile(checkpointer=checkpointer)


def build_ask_two_down(checkpointer: BaseCheckpointSaver | None = None) -> CompiledStateGraph:
    return build_ask_in_subgraph(checkpointer, depth=2)


# --- one node calling a subgraph several times ----------------------------------------------

ITEMS = ("apples", "bread", "cheese")
ASKED = "bread"


def _calling(sub: CompiledStateGraph, items: Callable[[Log], Iterable[str]]) -> Any:
    """A node that invokes ``sub`` once per item, in order, and logs what each call logged."""

    def node(state: Log) -> dict[str, Any]:
        found = [sub.invoke({"item": item, "log": []})["log"] for item in items(state)]
        return {"log": [entry for log in found for entry in log]}

    return node


def _check(asked: str, *then: str) -> CompiledStateGraph:
    """A subgraph whose ``inspect`` asks the human about ``asked`` only, then logging nodes."""

    def inspect(state: Log) -> dict[str, Any]:
        item = state["item"]
        verdict = interrupt(f"Is {item} fine?") if item == asked else "ok"
        return {"log": [f"{item}:{verdict}"]}

    sub = StateGraph(Log)
    sub.add_node("inspect", inspect)
    previous = "inspect"
    sub.add_edge(START, previous)
    for name in then:
        sub.add_node(name, note(name))
        sub.add_edge(previous, name)
        previous = name
    return sub.compile()


def _then_summary(
    name: str, node: Any, checkpointer: BaseCheckpointSaver | None
) -> CompiledStateGraph:
    """``START -> name -> summary``."""
    builder = StateGraph(Log)
    builder.add_node(name, node)
    builder.add_node("summary", note("summary"))
    builder.add_edge(START, name)
    builder.add_edge(name, "summary")
    return builder.compile(checkpointer=checkpointer)


def build_subgraph_calls(checkpointer: BaseCheckpointSaver | None = None) -> CompiledStateGraph:
    """``batch`` invokes the ``check`` subgraph once per item of :data:`ITEMS`; the call
    for :data:`ASKED` asks the human."""
    check = _check(ASKED, "record")
    return _then_summary("batch", _calling(check, lambda state: ITEMS), checkpointer)


ROUNDS = ("morning", "evening")
RECHECKED = "evening/bread"


def build_nested_subgraph_calls(
    checkpointer: BaseCheckpointSaver | None = None,
) -> CompiledStateGraph:
    """``rounds`` invokes the ``stage`` subgraph once per round of :data:`ROUNDS`; the
    ``batch`` node of ``stage`` invokes the ``check`` subgraph for the first two items of
    :data:`ITEMS`: call counters at two levels (``rounds:<id>|1|batch:<id>|1``). The call
    for :data:`RECHECKED` (``round/item``) asks the human."""
    check = _check(RECHECKED)
    middle = StateGraph(Log)
    middle.add_node(
        "batch", _calling(check, lambda state: [f"{state['item']}/{i}" for i in ITEMS[:2]])
    )
    middle.add_edge(START, "batch")
    stage = middle.compile()
    return _then_summary("rounds", _calling(stage, lambda state: ROUNDS), checkpointer)


# --- a breakpoint answered by an update_state(as_node=...) -----------------------------------


def build_breakpoint_chain(checkpointer: BaseCheckpointSaver | None = None) -> CompiledStateGraph:
    """``plan -> review -> execute``, stopping before ``review``."""
    builder = StateGraph(Log)
    for name in ("plan", "review", "execute"):
        builder.add_node(name, note(name))
    builder.add_edge(START, "plan")
    builder.add_edge("plan", "review")
    builder.add_edge("review", "execute")
    return builder.compile(checkpointer=checkpointer, interrupt_before=["review"])


# --- parallel interrupts ----------------------------------------------------------------------


def build_parallel_reviews(checkpointer: BaseCheckpointSaver | None = None) -> CompiledStateGraph:
    """``legal`` and ``finance`` run in parallel and each ask; ``decide`` joins them."""

    def reviewer(name: str) -> Any:
        def review(state: Log) -> dict[str, Any]:
            return {"log": [f"{name}:{interrupt({'reviewer': name})}"]}

        return review

    builder = StateGraph(Log)
    builder.add_node("legal", reviewer("legal"))
    builder.add_node("finance", reviewer("finance"))
    builder.add_node("decide", note("decide"))
    builder.add_edge(START, "legal")
    builder.add_edge(START, "finance")
    builder.add_edge(["legal", "finance"], "decide")
    return builder.compile(checkpointer=checkpointer)


def build_send_checks(checkpointer: BaseCheckpointSaver | None = None) -> CompiledStateGraph:
    """``split`` sends two items to ``check``, whose tasks each ask; then ``merge``."""

    def check(state: Log) -> dict[str, Any]:
        return {"log": [f"{state['item']}:{interrupt(state['item'])}"]}

    def fan_out(state: Log) -> list[Send]:
        return [Send("check", {"item": item}) for item in ("left", "right")]

    builder = StateGraph(Log)
    builder.add_node("split", note("split"))
    builder.add_node("check", check)
    builder.add_node("merge", note("merge"))
    builder.add_edge(START, "split")
    builder.add_conditional_edges("split", fan_out, ["check"])
    builder.add_edge("check", "merge")
    return builder.compile(checkpointer=checkpointer)
