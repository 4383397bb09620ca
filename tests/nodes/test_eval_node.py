"""EvalNode inside a real compiled graph: what it records, where, and what it never does."""

from __future__ import annotations

import time
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from langchain_core.tracers.base import BaseTracer
from langchain_core.tracers.schemas import Run
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.types import interrupt
from pydantic import BaseModel

from lg_eval import extract_thread
from lg_eval.errors import InvalidOptionError
from lg_eval.evaluators import create_tool_selection_evaluator
from lg_eval.nodes import EvalMessagesState, EvalNode, EvalSpec, Evaluations, from_config
from lg_eval.nodes import from_state as state_key
from tests.nodes.hosts import (
    EXPECTED_TOOLS,
    QUESTION,
    RESUME,
    aware_host,
    config,
    evaluate_checkpoints,
    run_both_turns,
    weather_host,
)

SELECTION_METADATA = {
    "expected_tools": ["get_weather"],
    "used_tools": ["get_weather"],
    "missing": [],
    "unexpected": [],
    "precision": 1.0,
    "recall": 1.0,
}


def selection_node(**options: Any) -> EvalNode:
    spec = EvalSpec(create_tool_selection_evaluator(), threshold=1.0)
    return EvalNode([spec], reference=from_config("expected_tools"), **options)


def feedback(**fields: Any) -> dict[str, Any]:
    record = {
        "key": "tool_selection_accuracy",
        "score": 1.0,
        "comment": None,
        "metadata": SELECTION_METADATA,
        "weight": 1.0,
        "passed": True,
        "error": None,
        "node": "evaluate",
        "turn": None,
        "checkpoint_id": None,
        "step": None,
    }
    return {**record, **fields}


def boom(*, outputs: Any, **_: Any) -> dict[str, Any]:
    raise RuntimeError("kaput")


# --------------------------------------------------------------------------- results in state


def test_state_holds_exact_feedback_dicts_tagged_with_checkpoint_and_step():
    graph = weather_host(selection_node(), checkpointer=InMemorySaver())
    cfg = config(expected_tools=EXPECTED_TOOLS)
    graph.invoke(QUESTION, cfg)
    [checkpoint] = evaluate_checkpoints(graph, cfg)
    assert graph.get_state(cfg).values["evaluations"] == [
        feedback(checkpoint_id=checkpoint, step=2)
    ]


def test_reducer_appends_one_record_per_turn_tagged_with_the_turn():
    graph = aware_host(lambda app: selection_node(graph=app), checkpointer=InMemorySaver())
    cfg = config(expected_tools=EXPECTED_TOOLS)
    run_both_turns(graph, cfg)
    first, second = evaluate_checkpoints(graph, cfg)
    assert graph.get_state(cfg).values["evaluations"] == [
        feedback(turn=0, checkpoint_id=first, step=2),
        feedback(turn=1, checkpoint_id=second, step=5),
    ]


def test_turn_and_checkpoint_tags_join_with_the_extracted_thread():
    graph = aware_host(lambda app: selection_node(graph=app), checkpointer=InMemorySaver())
    cfg = config(expected_tools=EXPECTED_TOOLS)
    run_both_turns(graph, cfg)
    turns = extract_thread(graph, cfg).turns
    for record in graph.get_state(cfg).values["evaluations"]:
        [superstep] = [
            s
            for s in turns[record["turn"]].supersteps
            if s.checkpoint_id == record["checkpoint_id"]
        ]
        assert [t.name for t in superstep.tasks] == ["evaluate"]
        # `step` is LangGraph's langgraph_step, as the extracted superstep reports it
        assert superstep.step == record["step"]


def test_results_persist_in_checkpoints_and_survive_a_new_process(sqlite_saver):
    graph = weather_host(selection_node(), checkpointer=sqlite_saver)
    cfg = config(expected_tools=EXPECTED_TOOLS)
    run_both_turns(graph, cfg)
    reopened = weather_host(selection_node(), checkpointer=sqlite_saver)
    records = reopened.get_state(cfg).values["evaluations"]
    assert [(r["key"], r["score"], r["step"]) for r in records] == [
        ("tool_selection_accuracy", 1.0, 2),
        ("tool_selection_accuracy", 1.0, 5),
    ]


def test_feedback_is_the_output_of_the_node_run_in_traces():
    class Runs(BaseTracer):
        def __init__(self) -> None:
            super().__init__()
            self.roots: list[Run] = []

        def _persist_run(self, run: Run) -> None:
            self.roots.append(run)

    tracer = Runs()
    graph = weather_host(selection_node(), checkpointer=InMemorySaver())
    cfg = config(expected_tools=EXPECTED_TOOLS)
    graph.invoke(QUESTION, {**cfg, "callbacks": [tracer]})
    [root] = tracer.roots
    [node_run] = [run for run in root.child_runs if run.name == "evaluate"]
    assert node_run.outputs == {"evaluations": graph.get_state(cfg).values["evaluations"]}
    assert [child.name for child in node_run.child_runs] == ["route"]  # no run of its own


def test_pydantic_state_schema_takes_the_annotated_key():
    class State(BaseModel):
        messages: list[Any] = []
        evaluations: Evaluations = []

    def answer(state: State) -> dict[str, Any]:
        return {"messages": [*state.messages, AIMessage("hi", id="ai-1")]}

    def says_hi(*, outputs: Any, **_: Any) -> bool:
        return outputs[-1].content == "hi"

    builder = StateGraph(State)
    builder.add_node("answer", answer)
    builder.add_node("evaluate", EvalNode([says_hi]))
    builder.add_edge(START, "answer")
    builder.add_edge("answer", "evaluate")
    out = builder.compile().invoke({"messages": []})
    assert [(r["key"], r["score"], r["passed"]) for r in out["evaluations"]] == [
        ("says_hi", True, True)
    ]


# --------------------------------------------------------------------------- the thread so far


def spy(seen: list[Any]) -> Any:
    def trajectory_spy(*, outputs: Any, **_: Any) -> bool:
        seen.append(outputs)
        return True

    return trajectory_spy


def test_thread_source_sees_earlier_turns_and_the_current_turn_up_to_this_node():
    seen: list[Any] = []
    graph = aware_host(
        lambda app: EvalNode([spy(seen)], source="thread", graph=app), checkpointer=InMemorySaver()
    )
    cfg = config()
    run_both_turns(graph, cfg)
    first, second = seen
    assert first.to_graph_trajectory().steps == [["__start__", "agent"]]
    assert [(t.kind, t.status, t.breakpoint, t.next_nodes, t.result) for t in first.turns] == [
        ("input", "interrupted", False, ["evaluate"], {})
    ]
    assert len(first.turns[0].state["messages"]) == 2  # the question and the tool call
    assert second.to_graph_trajectory().steps == [
        ["__start__", "agent", "evaluate", "tools", "__interrupt__"],
        ["agent"],
    ]
    assert [(t.kind, t.status, t.next_nodes, len(t.interrupts)) for t in second.turns] == [
        ("input", "interrupted", ["tools"], 1),
        ("resume", "interrupted", ["evaluate"], 0),
    ]
    final = extract_thread(graph, cfg).to_graph_trajectory().steps
    assert final == [
        ["__start__", "agent", "evaluate", "tools", "__interrupt__"],
        ["agent", "evaluate"],
    ]


@pytest.mark.parametrize("durability", ["async", "sync"])
def test_thread_read_is_the_same_whatever_the_durability(durability):
    for _ in range(10):  # async saves race the node; the node waits for them
        seen: list[Any] = []
        graph = aware_host(
            lambda app, seen=seen: EvalNode([spy(seen)], source="thread", graph=app),
            checkpointer=InMemorySaver(),
        )
        run_both_turns(graph, config(), durability=durability)
        assert [s.to_graph_trajectory().steps for s in seen] == [
            [["__start__", "agent"]],
            [["__start__", "agent", "evaluate", "tools", "__interrupt__"], ["agent"]],
        ]


def test_parallel_siblings_partial_writes_are_left_out():
    seen: list[Any] = []
    app: dict[str, Any] = {}

    def late_graph() -> Any:
        time.sleep(0.05)  # let the sibling finish and save its writes first
        return app["graph"]

    builder = StateGraph(EvalMessagesState)
    builder.add_node("draft", lambda s: {"messages": [AIMessage("draft", id="ai-1")]})
    builder.add_node("sibling", lambda s: {"messages": [AIMessage("note", id="ai-2")]})
    builder.add_node("evaluate", EvalNode([spy(seen)], source="thread", graph=late_graph))
    builder.add_edge(START, "draft")
    builder.add_edge("draft", "evaluate")
    builder.add_edge("draft", "sibling")
    graph = app["graph"] = builder.compile(checkpointer=InMemorySaver())
    graph.invoke({"messages": []}, config())
    [current] = seen
    assert current.to_graph_trajectory().steps == [["__start__", "draft"]]
    assert sorted(current.turns[0].next_nodes) == ["evaluate", "sibling"]


def test_durability_exit_cannot_read_the_running_thread():
    graph = aware_host(
        lambda app: EvalNode([spy([])], source="thread", graph=app), checkpointer=InMemorySaver()
    )
    graph.invoke(QUESTION, config(), durability="exit")
    [record] = graph.get_state(config()).values["evaluations"]
    assert record["score"] is None
    assert record["error"].startswith("CheckpointNotFoundError: This run uses durability='exit'")


def test_retry_after_an_error_in_the_node_is_tagged_with_the_new_turn():
    calls = []

    def flaky(*, outputs: Any, **_: Any) -> bool:
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("judge unavailable")
        return True

    graph = aware_host(
        lambda app: EvalNode([flaky], graph=app, fail_fast=True), checkpointer=InMemorySaver()
    )
    cfg = config()
    with pytest.raises(RuntimeError, match="judge unavailable"):
        graph.invoke(QUESTION, cfg)
    graph.invoke(None, cfg)  # retry the failed superstep
    [record] = graph.get_state(cfg).values["evaluations"]
    turns = extract_thread(graph, cfg).turns
    assert [(t.kind, t.status) for t in turns] == [("input", "error"), ("continue", "interrupted")]
    assert record["turn"] == 1


# --------------------------------------------------------------------------- guarantees


def test_node_adds_only_its_own_name_to_the_host_trajectory():
    graph = weather_host(selection_node(), checkpointer=InMemorySaver())
    cfg = config(expected_tools=EXPECTED_TOOLS)
    run_both_turns(graph, cfg)
    thread = extract_thread(graph, cfg)
    assert thread.to_graph_trajectory().steps == [
        ["__start__", "agent", "evaluate", "tools", "__interrupt__"],
        ["agent", "evaluate"],
    ]
    evaluate_runs = [t for turn in thread.turns for t in turn.iter_tasks() if t.name == "evaluate"]
    assert [(t.subgraph, t.error) for t in evaluate_runs] == [([], None), ([], None)]


def test_host_state_is_unchanged_apart_from_the_evaluations_key():
    plain = weather_host(lambda state: {}, checkpointer=InMemorySaver())
    evaluated = weather_host(selection_node(), checkpointer=InMemorySaver())
    cfg = config(expected_tools=EXPECTED_TOOLS)
    run_both_turns(plain, cfg)
    run_both_turns(evaluated, cfg)
    with_evals = evaluated.get_state(cfg).values
    assert with_evals["messages"] == plain.get_state(cfg).values["messages"]
    assert set(with_evals) == {"messages", "evaluations"}


def test_an_evaluator_mutating_its_inputs_cannot_touch_the_state():
    def vandal(*, outputs: Any, reference_outputs: Any, **_: Any) -> bool:
        outputs.clear()
        reference_outputs.append("vandalised")
        return True

    node = EvalNode([vandal], reference=state_key("notes"))
    builder = StateGraph(_NotesState)
    builder.add_node("evaluate", node)
    builder.add_edge(START, "evaluate")
    out = builder.compile().invoke({"messages": [("user", "hi")], "notes": ["a"]})
    assert len(out["messages"]) == 1
    assert out["notes"] == ["a"]


class _NotesState(EvalMessagesState):
    notes: list[str]


def test_a_raising_evaluator_becomes_an_error_feedback_and_the_graph_runs_on():
    graph = weather_host(
        EvalNode([boom, EvalSpec(create_tool_selection_evaluator(["get_weather"]))]),
        checkpointer=InMemorySaver(),
    )
    cfg = config()
    run_both_turns(graph, cfg)
    state = graph.get_state(cfg)
    assert state.next == ()
    first_boom = state.values["evaluations"][0]
    assert {k: first_boom[k] for k in ("key", "score", "comment", "passed", "error")} == {
        "key": "boom",
        "score": None,
        "comment": "Evaluator 'boom' failed: RuntimeError: kaput",
        "passed": None,
        "error": "RuntimeError: kaput",
    }
    assert [(r["key"], r["score"]) for r in state.values["evaluations"]] == [
        ("boom", None),
        ("tool_selection_accuracy", 1.0),
        ("boom", None),
        ("tool_selection_accuracy", 1.0),
    ]


def test_fail_fast_lets_the_evaluator_error_stop_the_graph():
    graph = weather_host(EvalNode([boom], fail_fast=True), checkpointer=InMemorySaver())
    with pytest.raises(RuntimeError, match="kaput"):
        graph.invoke(QUESTION, config())
    assert graph.get_state(config()).next == ("evaluate",)


def test_a_missing_reference_becomes_an_error_feedback():
    graph = weather_host(selection_node(), checkpointer=InMemorySaver())
    graph.invoke(QUESTION, config())  # no expected_tools in the config
    [record] = graph.get_state(config()).values["evaluations"]
    assert record["error"] == "KeyError: \"config['configurable'] has no 'expected_tools'\""


def test_an_interrupt_raised_by_an_evaluator_pauses_the_graph():
    def ask_human(*, outputs: Any, **_: Any) -> bool:
        return interrupt("Is the tool use right?") == "yes"

    graph = weather_host(EvalNode([ask_human]), checkpointer=InMemorySaver())
    graph.invoke(QUESTION, config())
    state = graph.get_state(config())
    assert [i.value for i in state.interrupts] == ["Is the tool use right?"]
    assert state.values["evaluations"] == []


def test_state_without_the_evaluations_key_is_a_clear_error():
    builder = StateGraph(MessagesState)
    builder.add_node("evaluate", EvalNode([boom]))
    builder.add_edge(START, "evaluate")
    with pytest.raises(InvalidOptionError, match="add `evaluations: Evaluations`"):
        builder.compile().invoke({"messages": []})


def test_thread_source_without_a_graph_fails_at_construction():
    with pytest.raises(InvalidOptionError, match="graph=lambda: app"):
        EvalNode([boom], source="thread")


def test_unknown_registry_name_fails_at_construction():
    with pytest.raises(InvalidOptionError, match="No evaluator is registered as 'nope'"):
        EvalNode(["nope"])


def test_without_a_checkpointer_records_have_no_turn_and_thread_source_reports_why():
    seen: list[Any] = []
    plain = weather_host(EvalNode(["tool_order"], reference=["get_weather"]))
    out = plain.invoke(QUESTION)
    assert [(r["key"], r["score"], r["turn"]) for r in out["evaluations"]] == [
        ("tool_order", 1.0, None)
    ]
    graph = aware_host(lambda app: EvalNode([spy(seen)], source="thread", graph=app))
    builder_out = graph.invoke({"messages": [("user", "hi")]}, config())
    assert builder_out["evaluations"][0]["error"].startswith("MissingCheckpointerError")
    assert seen == []


# --------------------------------------------------------------------------- sources and sync/async


def test_source_by_key_and_by_callable_reference_from_state():
    def same(*, outputs: Any, reference_outputs: Any, **_: Any) -> bool:
        return outputs == reference_outputs

    builder = StateGraph(_AnswerState)
    builder.add_node("by_key", EvalNode([same], source="answer", reference=state_key("gold")))
    builder.add_node(
        "by_callable",
        EvalNode([same], source=lambda s: s["answer"].upper(), reference="SUNNY"),
    )
    builder.add_edge(START, "by_key")
    builder.add_edge("by_key", "by_callable")
    builder.add_edge("by_callable", END)
    out = builder.compile().invoke({"answer": "sunny", "gold": "sunny"})
    assert [(r["node"], r["score"]) for r in out["evaluations"]] == [
        ("by_key", True),
        ("by_callable", True),
    ]


class _AnswerState(EvalMessagesState, total=False):
    answer: str
    gold: str


def test_sync_graph_runs_async_evaluators():
    async def uses_weather(*, outputs: Any, **_: Any) -> dict[str, Any]:
        names = [c["name"] for m in outputs for c in getattr(m, "tool_calls", [])]
        return {"key": "uses_weather", "score": "get_weather" in names}

    graph = weather_host(EvalNode([uses_weather]), checkpointer=InMemorySaver())
    graph.invoke(QUESTION, config())
    [record] = graph.get_state(config()).values["evaluations"]
    assert (record["key"], record["score"]) == ("uses_weather", True)


async def test_async_graph_on_an_async_checkpointer_reads_its_thread(async_sqlite_saver):
    seen: list[Any] = []

    async def async_spy(*, outputs: Any, **_: Any) -> bool:
        seen.append(outputs.to_graph_trajectory().steps)
        return True

    specs = [async_spy, EvalSpec("tool_selection_accuracy", threshold=1.0)]
    graph = aware_host(
        lambda app: EvalNode(specs, source="thread", reference=["get_weather"], graph=app),
        checkpointer=async_sqlite_saver,
    )
    cfg = config()
    await graph.ainvoke(QUESTION, cfg)
    await graph.ainvoke(RESUME, cfg)
    assert seen == [
        [["__start__", "agent"]],
        [["__start__", "agent", "evaluate", "tools", "__interrupt__"], ["agent"]],
    ]
    records = (await graph.aget_state(cfg)).values["evaluations"]
    assert [(r["key"], r["score"], r["passed"], r["turn"]) for r in records] == [
        ("async_spy", True, True, 0),
        ("tool_selection_accuracy", 1.0, True, 0),
        ("async_spy", True, True, 1),
        ("tool_selection_accuracy", 1.0, True, 1),
    ]
