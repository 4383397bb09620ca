"""One multi-field reference for every evaluator of the evaluation graph (and batches).

A LangSmith-style reference holds one expectation per evaluator family::

    {"trajectory": <graph trajectory>, "tool_calls": [...], "output": "..."}

lg_eval's evaluators each read their own field of it (graph judge and graph
match: ``trajectory``; tool-call evaluators: ``tool_calls``); a custom
evaluator is handed one part with ``EvalSpec(fn, reference_key=...)``. The
thread evaluated is the real weather HITL thread (the tool interrupts for a
human answer, the resume answers), on a real checkpointer.
"""

from __future__ import annotations

import sqlite3
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver

from graphs import weather
from graphs.scenarios import SCENARIOS
from lg_eval import GraphTrajectory, ThreadTrajectory, aextract_thread, extract_thread
from lg_eval.errors import InvalidOptionError
from lg_eval.evaluators import (
    create_graph_trajectory_match_evaluator,
    create_tool_sequence_evaluator,
)
from lg_eval.nodes import (
    EvalCase,
    EvalSpec,
    EvaluationResult,
    ReferenceKeyError,
    batch_evaluate,
    create_evaluation_graph,
)
from lg_eval.nodes._evaluation_state import from_plain, to_plain
from tests.nodes.references import JUDGE_REASONING, SF_CALL, AnswerCheck, judge

ROUTE = [["__start__", "agent", "tools", "__interrupt__"], ["agent"]]
REFERENCE_TRAJECTORY = GraphTrajectory(
    inputs=[{"messages": [{"role": "user", "content": weather.QUESTION}]}, weather.HUMAN_ANSWER],
    results=[{}, {"messages": [{"role": "assistant", "content": weather.FINAL_ANSWER}]}],
    steps=ROUTE,
)
REFERENCE: dict[str, Any] = {
    "trajectory": REFERENCE_TRAJECTORY,
    "tool_calls": [SF_CALL],
    "output": weather.FINAL_ANSWER,
}
PLAIN_REFERENCE = {
    "trajectory": {
        "inputs": REFERENCE_TRAJECTORY.inputs,
        "results": REFERENCE_TRAJECTORY.results,
        "steps": ROUTE,
    },
    "tool_calls": [SF_CALL],
    "output": weather.FINAL_ANSWER,
}

# What the graph strict match says about a thread whose two turns equal the reference's.
SAME_ROUTE_METADATA = {
    "actual": ROUTE,
    "reference": ROUTE,
    "turns": [
        {"turn": 0, "missing": [], "unexpected": [], "match": True},
        {"turn": 1, "missing": [], "unexpected": [], "match": True},
    ],
    "missing": [],
    "unexpected": [],
}
ONE_PAIRED_CALL = {
    "pairs": [{"actual": 0, "reference": 0}],
    "missing": [],
    "unexpected": [],
    "calls": "executed",
    "not_executed": [],
}


def weather_thread(saver: Any, thread_id: str = "weather-1") -> tuple[Any, ThreadTrajectory]:
    graph = SCENARIOS["weather"].played(saver, thread_id)
    return graph, extract_thread(graph, {"configurable": {"thread_id": thread_id}})


def cfg(thread_id: str = "eval-1") -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id}}


def result_of(out: dict[str, Any]) -> EvaluationResult:
    return EvaluationResult.model_validate(out["result"])


def evaluators(answer: AnswerCheck, graph_judge: Any) -> list[Any]:
    return [
        graph_judge,
        create_graph_trajectory_match_evaluator(),
        create_tool_sequence_evaluator(),
        EvalSpec(answer, reference_key="output"),
    ]


def outcomes(result: EvaluationResult) -> list[tuple[Any, ...]]:
    return [(r.key, r.score, r.comment, r.passed, r.error) for r in result.results]


# --------------------------------------------------------------------------- the graph


def test_a_graph_judge_beside_match_and_tool_call_evaluators_reads_one_reference(sqlite_saver):
    _, thread = weather_thread(sqlite_saver)
    model, graph_judge = judge()
    answer = AnswerCheck()
    graph = create_evaluation_graph(evaluators(answer, graph_judge), checkpointer=sqlite_saver)
    out = graph.invoke(EvalCase(trajectory=thread, reference=REFERENCE).as_input(), cfg())
    result = result_of(out)
    assert outcomes(result) == [
        ("graph_trajectory_accuracy", True, JUDGE_REASONING, True, None),
        ("graph_trajectory_strict_match", True, None, True, None),
        ("tool_sequence_strict_match", True, None, True, None),
        ("final_answer", True, None, True, None),
    ]
    assert [r.metadata for r in result.results[1:3]] == [SAME_ROUTE_METADATA, ONE_PAIRED_CALL]
    assert (result.thread_id, result.score, result.passed) == ("weather-1", 1.0, True)
    assert answer.seen == [weather.FINAL_ANSWER]  # only its part of the reference
    assert len(model.calls) == 1


def test_the_judge_is_shown_only_the_reference_trajectory(sqlite_saver):
    _, thread = weather_thread(sqlite_saver)
    model, graph_judge = judge()
    graph = create_evaluation_graph([graph_judge], checkpointer=sqlite_saver)
    graph.invoke(EvalCase(trajectory=thread, reference=REFERENCE).as_input(), cfg())
    direct, alone = judge()
    alone(outputs=thread, reference_outputs=REFERENCE_TRAJECTORY)
    [call] = model.calls
    assert call.prompt == direct.calls[0].prompt
    reference_block = call.prompt.partition("<reference_thread>")[2]
    assert "__start__ -> agent -> tools -> __interrupt__" in reference_block
    assert "get_weather" not in reference_block  # the tool_calls part is not the judge's


def test_each_evaluator_is_judged_on_its_own_part_of_the_reference(sqlite_saver):
    _, thread = weather_thread(sqlite_saver)
    _, graph_judge = judge()
    answer = AnswerCheck()
    reference = {
        **REFERENCE,
        "tool_calls": [{"name": "get_weather", "args": {"city": "nyc"}}],
        "output": "It is raining.",
    }
    graph = create_evaluation_graph(evaluators(answer, graph_judge), checkpointer=sqlite_saver)
    result = result_of(graph.invoke({"trajectory": thread, "reference": reference}, cfg()))
    assert outcomes(result) == [
        ("graph_trajectory_accuracy", True, JUDGE_REASONING, True, None),
        ("graph_trajectory_strict_match", True, None, True, None),
        (
            "tool_sequence_strict_match",
            False,
            'Call 1: expected get_weather(city="nyc"), got get_weather(city="sf"). '
            'Missing 1 expected call: get_weather(city="nyc"). '
            'Unexpected 1 call: get_weather(city="sf").',
            False,
            None,
        ),
        ("final_answer", False, "Differs.", False, None),
    ]
    assert (result.score, result.passed) == (0.5, False)
    assert answer.seen == ["It is raining."]


async def test_awaited_on_an_async_checkpointer_the_scores_are_the_same(async_sqlite_saver):
    scenario = SCENARIOS["weather"]
    source = await scenario.aplayed(async_sqlite_saver, "weather-1")
    thread = await aextract_thread(source, cfg("weather-1"))
    model, graph_judge = judge()
    answer = AnswerCheck()
    graph = create_evaluation_graph(
        evaluators(answer, graph_judge), checkpointer=async_sqlite_saver
    )
    out = await graph.ainvoke(EvalCase(trajectory=thread, reference=REFERENCE).as_input(), cfg())
    assert outcomes(result_of(out)) == [
        ("graph_trajectory_accuracy", True, JUDGE_REASONING, True, None),
        ("graph_trajectory_strict_match", True, None, True, None),
        ("tool_sequence_strict_match", True, None, True, None),
        ("final_answer", True, None, True, None),
    ]
    assert (len(model.calls), answer.seen) == (1, [weather.FINAL_ANSWER])


def test_a_missing_reference_key_is_that_evaluators_error_feedback(sqlite_saver):
    _, thread = weather_thread(sqlite_saver)
    answer = AnswerCheck()
    specs = [
        create_graph_trajectory_match_evaluator(),
        EvalSpec(answer, key="rubric_answer", reference_key="expected_answer"),
    ]
    graph = create_evaluation_graph(specs, checkpointer=sqlite_saver)
    result = result_of(graph.invoke({"trajectory": thread, "reference": REFERENCE}, cfg()))
    error = (
        "ReferenceKeyError: EvalSpec(reference_key='expected_answer'): the reference has no "
        "'expected_answer' key (its keys: 'trajectory', 'tool_calls', 'output'). Add "
        "'expected_answer' to the reference, or change reference_key."
    )
    assert outcomes(result) == [
        ("graph_trajectory_strict_match", True, None, True, None),
        ("rubric_answer", None, f"Evaluator 'answer_check' failed: {error}", None, error),
    ]
    assert (result.score, result.passed) == (1.0, False)
    assert answer.seen == []  # never called without its part


def test_no_reference_at_all_is_reported_for_a_reference_key(sqlite_saver):
    _, thread = weather_thread(sqlite_saver)
    graph = create_evaluation_graph([EvalSpec(AnswerCheck(), reference_key="output")])
    [record] = result_of(graph.invoke({"trajectory": thread})).results
    assert record.error == (
        "ReferenceKeyError: EvalSpec(reference_key='output') needs a dict reference holding "
        "'output', but the evaluator was given no reference."
    )


def test_fail_fast_raises_the_missing_key(sqlite_saver):
    _, thread = weather_thread(sqlite_saver)
    spec = EvalSpec(AnswerCheck(), reference_key="answer")
    graph = create_evaluation_graph([spec], fail_fast=True)
    with pytest.raises(ReferenceKeyError, match="the reference has no 'answer' key"):
        graph.invoke({"trajectory": thread, "reference": {"output": "x"}})


def test_reference_key_must_be_a_non_empty_string():
    with pytest.raises(InvalidOptionError, match="reference_key=''"):
        EvalSpec(AnswerCheck(), reference_key="")
    with pytest.raises(InvalidOptionError, match="reference_key=3"):
        EvalSpec(AnswerCheck(), reference_key=3)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- plain data


def test_eval_case_takes_the_multi_field_reference_and_inputs_it_as_plain_data():
    case = EvalCase.model_validate({"trajectory": {"steps": ROUTE}, "reference": REFERENCE})
    assert case.reference == REFERENCE
    assert case.as_input()["reference"] == PLAIN_REFERENCE
    assert type(case.as_input()["reference"]["trajectory"]) is dict


def test_a_thread_inside_a_reference_dict_comes_back_as_a_thread():
    _, thread = weather_thread(InMemorySaver())
    plain = to_plain({"thread": thread, "tool_calls": [SF_CALL]})
    assert type(plain["thread"]) is dict
    assert from_plain(plain) == {"thread": thread, "tool_calls": [SF_CALL]}
    look_alike = {"thread": {"thread_id": "t", "turns": "not turns"}}
    assert from_plain(look_alike) == look_alike  # user data shaped like a thread stays data


def test_the_reference_round_trips_through_sqlite_as_plain_data(tmp_path):
    path = tmp_path / "eval.sqlite"
    answer = AnswerCheck()
    with sqlite3.connect(path, check_same_thread=False) as conn:
        _, thread = weather_thread(SqliteSaver(conn))
        _, graph_judge = judge()
        graph = create_evaluation_graph(
            evaluators(answer, graph_judge), checkpointer=SqliteSaver(conn)
        )
        graph.invoke(EvalCase(trajectory=thread, reference=REFERENCE).as_input(), cfg())
    with sqlite3.connect(path, check_same_thread=False) as conn:  # a new process
        _, graph_judge = judge()
        reopened = create_evaluation_graph(
            evaluators(answer, graph_judge), checkpointer=SqliteSaver(conn)
        )
        values = reopened.get_state(cfg()).values
    # dicts, not models: a stored GraphTrajectory would reload as one (with a serializer
    # warning), and not at all where lg_eval's classes are not allowed to deserialize
    assert values["case"]["reference"] == PLAIN_REFERENCE
    assert type(values["case"]["reference"]["trajectory"]) is dict
    assert GraphTrajectory.model_validate(values["case"]["reference"]["trajectory"]) == (
        REFERENCE_TRAJECTORY
    )
    assert [(r.key, r.score) for r in result_of(values).results] == [
        ("graph_trajectory_accuracy", True),
        ("graph_trajectory_strict_match", True),
        ("tool_sequence_strict_match", True),
        ("final_answer", True),
    ]


def test_a_thread_reference_is_handed_over_as_a_thread(sqlite_saver):
    _, thread = weather_thread(sqlite_saver)
    answer = AnswerCheck()
    specs = [
        create_graph_trajectory_match_evaluator(),
        EvalSpec(answer, reference_key="thread"),
    ]
    graph = create_evaluation_graph(specs, checkpointer=sqlite_saver)
    case = EvalCase(trajectory=thread, reference={"thread": thread, "output": "unused"})
    result = result_of(graph.invoke(case.as_input(), cfg()))
    assert [(r.key, r.score) for r in result.results] == [
        ("graph_trajectory_strict_match", True),  # read the reference's "thread"
        ("final_answer", False),  # a thread is not the answer text
    ]
    assert answer.seen == [thread]


# --------------------------------------------------------------------------- batches


def test_batch_items_carry_per_evaluator_references(tmp_path):
    with sqlite3.connect(tmp_path / "batch.sqlite", check_same_thread=False) as conn:
        saver = SqliteSaver(conn)
        scenario = SCENARIOS["weather"]
        for thread_id in ("w0", "w1"):
            scenario.played(saver, thread_id)
        answer = AnswerCheck()
        _, graph_judge = judge(repeat=True)
        graph = create_evaluation_graph(
            evaluators(answer, graph_judge),
            checkpointer=saver,
            graphs={"weather": scenario.build(checkpointer=saver)},
        )
        wrong_calls = {**REFERENCE, "tool_calls": ["get_time"]}
        cases = [
            EvalCase(target={"graph": "weather", "thread_id": "w0"}, reference=REFERENCE),
            EvalCase(target={"graph": "weather", "thread_id": "w1"}, reference=wrong_calls),
        ]
        items = batch_evaluate(graph, cases, max_concurrency=2)
    assert [(i.thread_id, i.status) for i in items] == [
        ("eval:weather:w0", "done"),
        ("eval:weather:w1", "done"),
    ]
    assert [[(r.key, r.score) for r in i.result.results] for i in items] == [
        [
            ("graph_trajectory_accuracy", True),
            ("graph_trajectory_strict_match", True),
            ("tool_sequence_strict_match", True),
            ("final_answer", True),
        ],
        [
            ("graph_trajectory_accuracy", True),
            ("graph_trajectory_strict_match", True),
            ("tool_sequence_strict_match", False),
            ("final_answer", True),
        ],
    ]
    assert items[1].result.results[2].comment == (
        'Call 1: expected get_time(...), got get_weather(city="sf"). '
        "Missing 1 expected call: get_time(...). "
        'Unexpected 1 call: get_weather(city="sf").'
    )
    assert answer.seen == [weather.FINAL_ANSWER, weather.FINAL_ANSWER]
