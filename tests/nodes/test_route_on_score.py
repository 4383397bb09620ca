"""route_on_score: conditional edges that act on the graph's latest evaluation."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph

from lg_eval.errors import InvalidOptionError, LgEvalError
from lg_eval.nodes import EvalMessagesState, EvalNode, EvalSpec, latest_evaluation, route_on_score


def record(key: str, score: Any, *, step: int, passed: bool | None = None, **extra: Any) -> dict:
    return {
        "key": key,
        "score": score,
        "passed": passed,
        "node": extra.pop("node", "check"),
        "step": step,
        "checkpoint_id": f"ckpt-{step}",
        **extra,
    }


def state(*records: dict) -> dict[str, Any]:
    return {"evaluations": list(records)}


ROUTE = route_on_score(0.7, passed="respond", failed="revise")


def test_weighted_mean_of_the_latest_evaluation_decides():
    latest = state(
        record("a", 1.0, step=5, weight=3.0),
        record("b", 0.0, step=5, weight=1.0),
    )
    assert ROUTE(latest) == "respond"  # (3 * 1 + 1 * 0) / 4 = 0.75
    lower = state(record("a", 1.0, step=5), record("b", 0.0, step=5))
    assert ROUTE(lower) == "revise"  # 0.5


def test_only_the_latest_evaluation_counts():
    history = state(record("a", 1.0, step=2), record("a", 0.2, step=8))
    assert ROUTE(history) == "revise"
    assert [r.step for r in latest_evaluation(history)] == [8]


def test_booleans_count_as_one_or_zero():
    assert ROUTE(state(record("ok", True, step=1))) == "respond"
    assert ROUTE(state(record("ok", False, step=1))) == "revise"


def test_an_evaluator_error_fails_the_evaluation():
    errored = state(record("a", 1.0, step=1), record("b", None, step=1, error="RuntimeError: x"))
    assert ROUTE(errored) == "revise"


def test_without_threshold_every_record_must_have_passed_its_own():
    route = route_on_score(passed="ok", failed="no")
    assert route(state(record("a", 0.9, step=1, passed=True))) == "ok"
    assert route(state(record("a", 0.9, step=1, passed=True), record("b", 1, step=1))) == "no"


def test_key_and_node_filters_pick_the_records_that_count():
    mixed = state(
        record("tools", 1.0, step=3, node="check"),
        record("style", 0.0, step=4, node="lint"),
    )
    assert route_on_score(0.5, passed="p", failed="f", node="check")(mixed) == "p"
    assert route_on_score(0.5, passed="p", failed="f", key="style")(mixed) == "f"


def test_repeated_failures_are_routed_to_exhausted():
    route = route_on_score(0.5, passed="p", failed="retry", max_failures=1, exhausted="human")
    assert route(state(record("a", 0.0, step=1))) == "retry"
    assert route(state(record("a", 0.0, step=1), record("a", 0.0, step=4))) == "human"
    recovered = state(record("a", 0.0, step=1), record("a", 1.0, step=4), record("a", 0, step=7))
    assert route(recovered) == "retry"


def test_no_evaluation_yet_is_a_clear_error():
    with pytest.raises(LgEvalError, match="right after an EvalNode"):
        ROUTE({"evaluations": []})


def test_max_failures_needs_a_destination():
    with pytest.raises(InvalidOptionError, match="together"):
        route_on_score(passed="p", failed="f", max_failures=2)


def test_a_graph_revises_until_its_self_check_passes():
    """draft -> check -> revise -> draft -> check -> respond, without a path map."""
    drafts = iter(["I guess sunny.", "It is sunny and 75 degrees (checked)."])

    def draft(state: dict[str, Any]) -> dict[str, Any]:
        return {"messages": [AIMessage(next(drafts))]}

    def checked(*, outputs: Any, **_: Any) -> bool:
        return "(checked)" in outputs[-1].content

    builder = StateGraph(EvalMessagesState)
    builder.add_node("draft", draft)
    builder.add_node("check", EvalNode([EvalSpec(checked)]))
    builder.add_node("revise", lambda s: {"messages": [HumanMessage("Check the facts.")]})
    builder.add_node("respond", lambda s: {})
    builder.add_edge(START, "draft")
    builder.add_edge("draft", "check")
    builder.add_conditional_edges("check", route_on_score(passed="respond", failed="revise"))
    builder.add_edge("revise", "draft")
    builder.add_edge("respond", END)
    graph = builder.compile(checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "self-check"}}
    out = graph.invoke({"messages": [HumanMessage("Weather in sf?")]}, cfg)
    assert [(r["key"], r["score"]) for r in out["evaluations"]] == [
        ("checked", False),
        ("checked", True),
    ]
    assert "check -.-> revise" in graph.get_graph().draw_mermaid()
