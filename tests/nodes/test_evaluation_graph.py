"""create_evaluation_graph: fan-out, aggregate, review, crash-resume, its own trajectory."""

from __future__ import annotations

import sqlite3
from collections import Counter
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.event_hooks import register_serde_event_listener
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.types import Command

from graphs.scenarios import SCENARIOS
from lg_eval import ThreadTrajectory, aextract_thread, extract_thread
from lg_eval.errors import InvalidOptionError
from lg_eval.evaluators import (
    create_tool_order_evaluator,
    create_tool_selection_evaluator,
    graph_trajectory_strict_match,
)
from lg_eval.nodes import EvalCase, EvalSpec, EvaluationResult, create_evaluation_graph

REFERENCE = {"steps": [["__start__", "agent", "tools", "__interrupt__"], ["agent"]]}
FEEDBACK_FIELDS = {"key", "score", "comment", "metadata"}


def weather_thread(saver: Any, thread_id: str = "weather-1") -> tuple[Any, ThreadTrajectory]:
    graph = SCENARIOS["weather"].played(saver, thread_id)
    return graph, extract_thread(graph, {"configurable": {"thread_id": thread_id}})


def cfg(thread_id: str = "eval-1", **configurable: Any) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id, **configurable}}


def result_of(out: dict[str, Any]) -> EvaluationResult:
    return EvaluationResult.model_validate(out["result"])


async def says_agent_answered(*, outputs: Any, **_: Any) -> dict[str, Any]:
    answered = outputs.turns[-1].status == "completed"
    return {"key": "answered", "score": answered, "comment": None, "metadata": None}


EVALUATORS = [
    graph_trajectory_strict_match,
    create_tool_selection_evaluator(["get_weather"]),
    create_tool_order_evaluator(["get_weather", "get_weather"]),
]


# --------------------------------------------------------------------------- results


@pytest.mark.parametrize("given", ["trajectory", "target"])
def test_results_equal_calling_the_evaluators_directly(given):
    saver = InMemorySaver()
    weather, thread = weather_thread(saver)
    direct = [evaluator(outputs=thread, reference_outputs=REFERENCE) for evaluator in EVALUATORS]
    graph = create_evaluation_graph(EVALUATORS, checkpointer=saver, graphs={"weather": weather})
    case = (
        {"trajectory": thread}
        if given == "trajectory"
        else {"target": {"graph": "weather", "thread_id": "weather-1"}}
    )
    result = result_of(graph.invoke({**case, "reference": REFERENCE}, cfg()))
    assert [r.model_dump(include=FEEDBACK_FIELDS) for r in result.results] == direct


async def test_async_run_on_an_async_checkpointer_equals_direct_calls(async_sqlite_saver):
    scenario = SCENARIOS["weather"]
    weather = scenario.build(checkpointer=async_sqlite_saver)
    await scenario.arun(weather, "weather-1")
    graph = create_evaluation_graph(
        [*EVALUATORS, says_agent_answered], checkpointer=async_sqlite_saver
    )
    case = {"target": {"graph": "weather", "thread_id": "weather-1"}, "reference": REFERENCE}
    out = await graph.ainvoke(case, cfg(lg_eval_graphs={"weather": weather}))
    result = result_of(out)
    thread = await aextract_thread(weather, {"configurable": {"thread_id": "weather-1"}})
    direct = [e(outputs=thread, reference_outputs=REFERENCE) for e in EVALUATORS]
    direct.append(await says_agent_answered(outputs=thread))
    assert [r.model_dump(include=FEEDBACK_FIELDS) for r in result.results] == direct


def test_weighted_score_and_thresholds_decide_pass_or_fail():
    _, thread = weather_thread(InMemorySaver())
    specs = [
        EvalSpec(create_tool_selection_evaluator(["get_weather"]), weight=1.0, threshold=1.0),
        EvalSpec(create_tool_order_evaluator(["get_weather", "get_weather"]), weight=3.0),
    ]
    passing = create_evaluation_graph(specs).invoke({"trajectory": thread})
    assert (result_of(passing).score, result_of(passing).passed) == (0.625, True)
    strict = create_evaluation_graph(specs, threshold=0.7).invoke({"trajectory": thread})
    assert (result_of(strict).score, result_of(strict).passed) == (0.625, False)


def test_agentevals_dict_trajectories_are_evaluated_as_given():
    agentevals = {"inputs": [], "results": [], "steps": REFERENCE["steps"]}
    out = create_evaluation_graph([graph_trajectory_strict_match]).invoke(
        {"trajectory": agentevals, "reference": REFERENCE}
    )
    result = result_of(out)
    assert (result.thread_id, result.score, result.passed) == (None, 1.0, True)


def test_a_raising_evaluator_is_an_error_feedback_and_fails_the_case():
    def broken(*, outputs: Any, **_: Any) -> bool:
        raise ValueError("bad rubric")

    _, thread = weather_thread(InMemorySaver())
    result = result_of(
        create_evaluation_graph([broken, graph_trajectory_strict_match]).invoke(
            {"trajectory": thread, "reference": REFERENCE}
        )
    )
    assert [(r.key, r.score, r.error) for r in result.results] == [
        ("broken", None, "ValueError: bad rubric"),
        ("graph_trajectory_strict_match", True, None),
    ]
    assert (result.score, result.passed, result.needs_review) == (1.0, False, False)


def test_a_case_needs_a_trajectory_or_a_target_and_targets_name_their_graph():
    graph = create_evaluation_graph([graph_trajectory_strict_match])
    with pytest.raises(InvalidOptionError, match="nothing to evaluate"):
        graph.invoke({"reference": REFERENCE})
    with pytest.raises(InvalidOptionError, match="No graph named 'weather'"):
        graph.invoke({"target": {"graph": "weather", "thread_id": "w"}})
    with pytest.raises(ValueError, match="must be the \\*name\\* of a compiled graph"):
        graph.invoke({"target": {"graph": object(), "thread_id": "w"}})


# --------------------------------------------------------------------------- human review


def review_graph(saver: Any, **options: Any) -> Any:
    specs = [
        EvalSpec(create_tool_selection_evaluator(["get_weather"]), threshold=1.0),
        EvalSpec(create_tool_order_evaluator(["get_weather", "get_weather"]), weight=3.0),
    ]
    return create_evaluation_graph(specs, checkpointer=saver, **options)


def test_a_low_score_pauses_for_review_and_the_verdict_is_recorded():
    saver = InMemorySaver()
    _, thread = weather_thread(saver)
    graph = review_graph(saver, review_threshold=0.8)
    out = graph.invoke({"trajectory": thread}, cfg())
    [pending] = out["__interrupt__"]
    assert {k: pending.value[k] for k in ("thread_id", "score", "passed", "reasons")} == {
        "thread_id": "weather-1",
        "score": 0.625,
        "passed": True,
        "reasons": ["Score 0.625 is below the review threshold 0.8."],
    }
    out = graph.invoke(Command(resume={"verdict": "fail", "note": "Asked once only."}), cfg())
    review = result_of(out).review
    assert (result_of(out).passed, review.model_dump()) == (
        False,
        {
            "verdict": "fail",
            "note": "Asked once only.",
            "reviewer": None,
            "reasons": ["Score 0.625 is below the review threshold 0.8."],
        },
    )


def test_an_invalid_review_answer_is_asked_again():
    saver = InMemorySaver()
    _, thread = weather_thread(saver)
    graph = review_graph(saver, review_threshold=0.8)
    graph.invoke({"trajectory": thread}, cfg())
    out = graph.invoke(Command(resume={"verdict": "maybe"}), cfg())
    [again] = out["__interrupt__"]
    assert again.value["error"].startswith("Invalid review answer {'verdict': 'maybe'}")
    out = graph.invoke(Command(resume={"verdict": "pass"}), cfg())
    assert (result_of(out).passed, result_of(out).review.verdict) == (True, "pass")


def test_a_score_above_the_review_threshold_finishes_without_pausing():
    saver = InMemorySaver()
    _, thread = weather_thread(saver)
    out = review_graph(saver, review_threshold=0.5).invoke({"trajectory": thread}, cfg())
    assert "__interrupt__" not in out
    assert (result_of(out).needs_review, result_of(out).review) == (False, None)


def test_disagreeing_judges_are_sent_for_review():
    def judge(*, outputs: Any, **_: Any) -> dict[str, Any]:
        return {"key": "judge", "score": 0.9, "metadata": {"needs_review": True}}

    saver = InMemorySaver()
    _, thread = weather_thread(saver)
    graph = create_evaluation_graph([judge], checkpointer=saver, review_on_disagreement=True)
    out = graph.invoke({"trajectory": thread}, cfg())
    assert out["__interrupt__"][0].value["reasons"] == ["Judges disagree: judge."]


# --------------------------------------------------------------------------- checkpoints


def test_a_crash_in_the_fan_out_resumes_without_rerunning_finished_evaluators(tmp_path):
    calls: Counter[str] = Counter()

    def steady(*, outputs: Any, **_: Any) -> bool:
        calls["steady"] += 1
        return True

    def flaky(*, outputs: Any, **_: Any) -> float:
        calls["flaky"] += 1
        if calls["flaky"] == 1:
            raise ConnectionError("judge API down")
        return 0.5

    path = tmp_path / "eval.sqlite"
    with sqlite3.connect(path, check_same_thread=False) as conn:
        _, thread = weather_thread(SqliteSaver(conn))
        graph = create_evaluation_graph(
            [steady, flaky], checkpointer=SqliteSaver(conn), fail_fast=True
        )
        with pytest.raises(ConnectionError):
            graph.invoke({"trajectory": thread}, cfg())
        assert graph.get_state(cfg()).next == ("evaluate",)
    with sqlite3.connect(path, check_same_thread=False) as conn:  # a new process
        restarted = create_evaluation_graph([steady, flaky], checkpointer=SqliteSaver(conn))
        result = result_of(restarted.invoke(None, cfg()))
    assert calls == {"steady": 1, "flaky": 2}
    assert [(r.key, r.score) for r in result.results] == [("steady", True), ("flaky", 0.5)]


def test_a_crash_in_extract_resumes_from_extract():
    saver = InMemorySaver()
    weather, _ = weather_thread(saver)
    graph = create_evaluation_graph([graph_trajectory_strict_match], checkpointer=saver)
    case = {"target": {"graph": "weather", "thread_id": "weather-1"}, "reference": REFERENCE}
    with pytest.raises(InvalidOptionError):
        graph.invoke(case, cfg())
    assert graph.get_state(cfg()).next == ("extract",)
    out = graph.invoke(None, cfg(lg_eval_graphs={"weather": weather}))
    assert (result_of(out).thread_id, result_of(out).passed) == ("weather-1", True)


def test_the_evaluation_thread_extracts_to_a_sensible_trajectory():
    saver = InMemorySaver()
    _, thread = weather_thread(saver)
    graph = review_graph(saver, review_threshold=0.8)
    graph.invoke({"trajectory": thread}, cfg())
    graph.invoke(Command(resume={"verdict": "pass"}), cfg())
    evaluation = extract_thread(graph, cfg())
    assert evaluation.to_graph_trajectory().steps == [
        ["__start__", "extract", "evaluate", "evaluate", "aggregate", "review", "__interrupt__"],
        [],
    ]
    assert [(t.kind, t.status) for t in evaluation.turns] == [
        ("input", "interrupted"),
        ("resume", "completed"),
    ]
    assert evaluation.turns[1].resume_by_node == {"review": {"verdict": "pass"}}
    assert evaluation.turns[1].result["result"]["review"]["verdict"] == "pass"


def test_evaluating_again_on_the_same_thread_starts_from_fresh_results():
    saver = InMemorySaver()
    _, thread = weather_thread(saver)
    graph = create_evaluation_graph([graph_trajectory_strict_match], checkpointer=saver)
    graph.invoke({"trajectory": thread, "reference": REFERENCE}, cfg())
    out = graph.invoke({"trajectory": thread, "reference": {"steps": [["agent"]]}}, cfg())
    assert [(r.key, r.score) for r in result_of(out).results] == [
        ("graph_trajectory_strict_match", False)
    ]


def test_a_new_case_on_the_same_thread_sees_only_its_own_input():
    saver = InMemorySaver()
    weather, thread = weather_thread(saver)
    graph = create_evaluation_graph(
        [graph_trajectory_strict_match], checkpointer=saver, graphs={"weather": weather}
    )
    graph.invoke({"trajectory": thread, "reference": REFERENCE}, cfg())
    target = {"graph": "weather", "thread_id": "weather-1"}
    out = graph.invoke({"target": target}, cfg())  # no reference this time
    [record] = result_of(out).results
    assert record.error.startswith("TrajectoryFormatError: graph_trajectory_strict_match needs")
    assert graph.get_state(cfg()).values["case"]["reference"] is None


def test_checkpoints_hold_plain_data_that_reloads_without_serializer_warnings(tmp_path):
    path = tmp_path / "eval.sqlite"
    with sqlite3.connect(path, check_same_thread=False) as conn:
        _, thread = weather_thread(SqliteSaver(conn))
        graph = review_graph(SqliteSaver(conn), review_threshold=0.8)
        graph.invoke(EvalCase(trajectory=thread).as_input(), cfg())
        graph.invoke(Command(resume={"verdict": "pass"}), cfg())
    # LangGraph reports an unregistered type it deserializes as a serde event, every time
    # (its log line comes once per process, so listening to the events is what can fail).
    events: list[Any] = []
    unregister = register_serde_event_listener(events.append)
    try:
        with sqlite3.connect(path, check_same_thread=False) as conn:
            reopened = review_graph(SqliteSaver(conn), review_threshold=0.8)
            history = list(reopened.get_state_history(cfg()))
    finally:
        unregister()
    assert [e for e in events if "unregistered" in str(e.get("kind", ""))] == []
    assert result_of(history[0].values).review.verdict == "pass"
    assert ThreadTrajectory.model_validate(history[0].values["case"]["trajectory"]) == thread
