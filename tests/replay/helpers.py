"""Production threads to replay: a refund agent whose ``review`` node asks a human.

Thread ``t<NNN>`` asks for a refund of NNN; its human answers ``yes`` unless NNN is a
multiple of 4 (``no``); threads whose NNN is a multiple of 7 are still waiting for their
answer. :func:`build_v2` is the new version: refunds over 150 go through a new
``escalate`` node after the review, so exactly the answered threads over 150 change.
:func:`build_v3` asks a second question (``confirm``) the original never asked.
"""

from __future__ import annotations

import os
import time
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.types import Command, interrupt

from lg_eval._evaluator import make_evaluator
from lg_eval._feedback import Feedback
from lg_eval.extract import extract_thread

N_THREADS = 200
DIE_AT = "LG_EVAL_REPLAY_TEST_DIE_AT"
"""When set to a refund amount, the new graph's process exits at once there (no cleanup)."""
HOLD_AT = "LG_EVAL_REPLAY_TEST_HOLD_AT"
"""When set to ``AMOUNT:PATH``, the new graph waits there until PATH exists (an interrupt
test stops the replay at a known thread)."""


def thread_id(n: int) -> str:
    return f"t{n:03d}"


def answer(n: int) -> str:
    return "no" if n % 4 == 0 else "yes"


def waiting(n: int) -> bool:
    return n % 7 == 0


def _amount(state: MessagesState) -> int:
    first = next(m for m in state["messages"] if isinstance(m, HumanMessage))
    return int(str(first.content))


def _agent(state: MessagesState) -> dict[str, Any]:
    last = state["messages"][-1]
    if not isinstance(last, HumanMessage):  # the review's answer or the escalation
        return {"messages": [AIMessage(f"Done: {last.content}")]}
    call = {"name": "refund", "args": {"amount": _amount(state)}, "id": "call-1"}
    return {"messages": [AIMessage("", tool_calls=[call])]}


def _review(state: MessagesState) -> dict[str, Any]:
    ok = interrupt({"question": f"Refund {_amount(state)}?"})
    return {"messages": [ToolMessage(f"approved={ok}", tool_call_id="call-1")]}


def _escalate(state: MessagesState) -> dict[str, Any]:
    if os.environ.get(DIE_AT) == str(_amount(state)):  # the crash test's kill -9
        os._exit(9)
    amount, _, hold = os.environ.get(HOLD_AT, "").partition(":")
    if amount == str(_amount(state)):  # the interrupt test's Ctrl-C lands here
        with open(f"{hold}.waiting", "w"):  # tells the test the replay got here
            pass
        deadline = time.monotonic() + 120
        while not os.path.exists(hold) and time.monotonic() < deadline:
            time.sleep(0.02)
    return {"messages": [AIMessage("Escalated to finance.")]}


def _confirm(state: MessagesState) -> dict[str, Any]:
    sure = interrupt({"question": "Sure?"})
    return {"messages": [ToolMessage(f"sure={sure}", tool_call_id="call-1")]}


def _route(state: MessagesState) -> str:
    last = state["messages"][-1]
    return "review" if isinstance(last, AIMessage) and last.tool_calls else END


def _base() -> StateGraph[Any]:
    """What every version shares: START -> agent, which calls review for a refund."""
    builder: StateGraph[Any] = StateGraph(MessagesState)
    builder.add_node("agent", _agent)
    builder.add_node("review", _review)
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", _route, ["review", END])
    return builder


def build(checkpointer: Any = None) -> Any:
    """v1: agent -> review (asks) -> agent -> END."""
    builder = _base()
    builder.add_edge("review", "agent")
    return builder.compile(checkpointer=checkpointer, name="refunds")


def _after_review(state: MessagesState) -> str:
    return "escalate" if _amount(state) > 150 else "agent"


def build_v2(checkpointer: Any = None) -> Any:
    """v2: refunds over 150 go review -> escalate -> agent."""
    builder = _base()
    builder.add_node("escalate", _escalate)
    builder.add_conditional_edges("review", _after_review, ["escalate", "agent"])
    builder.add_edge("escalate", "agent")
    return builder.compile(checkpointer=checkpointer, name="refunds-v2")


def build_v3(checkpointer: Any = None) -> Any:
    """v3: after the review, a ``confirm`` node asks a second question."""
    builder = _base()
    builder.add_node("confirm", _confirm)
    builder.add_edge("review", "confirm")
    builder.add_edge("confirm", "agent")
    return builder.compile(checkpointer=checkpointer, name="refunds-v3")


def populate(graph: Any, n: int = N_THREADS, start: int = 0) -> None:
    """Play the production threads ``t<start>``..: one refund request each, answered or not."""
    for i in range(start, start + n):
        config: Any = {"configurable": {"thread_id": thread_id(i)}}
        graph.invoke({"messages": [HumanMessage(str(i))]}, config)
        if not waiting(i):
            graph.invoke(Command(resume=answer(i)), config)


def _nodes(*, outputs: Any, **_: Any) -> Feedback:
    """Deterministic and reference-free: 1 / the number of nodes the thread ran."""
    n = sum(len(step) for step in outputs["trajectory"].to_graph_trajectory().steps)
    return Feedback(score=1.0 / n, comment=f"{n} nodes")


nodes = make_evaluator("nodes", _nodes)


def scratch_steps(build: Any, n: int) -> list[list[str]]:
    """The steps ``build``'s graph runs when thread ``n``'s input and answer are played on it
    from scratch (a fresh in-memory thread): what LangGraph itself does for that thread.

    The graphs decide on three facts of ``n`` only (is it waiting, is it over 150, is the
    answer ``yes``), so one live play per combination serves every thread that shares it.
    """
    key = (build, waiting(n), n > 150, answer(n))
    if key not in _SCRATCH:
        graph = build(InMemorySaver())
        config: Any = {"configurable": {"thread_id": "scratch"}}
        graph.invoke({"messages": [HumanMessage(str(n))]}, config)
        if not waiting(n):
            graph.invoke(Command(resume=answer(n)), config)
        _SCRATCH[key] = extract_thread(graph, config).to_graph_trajectory().steps
    return _SCRATCH[key]


_SCRATCH: dict[tuple[Any, ...], list[list[str]]] = {}
