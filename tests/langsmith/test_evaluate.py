"""``langsmith.evaluate`` / ``aevaluate`` over golden examples with ``graph_target``, offline."""

from __future__ import annotations

from typing import Any

import pytest
from langsmith import aevaluate, evaluate

from lg_eval.errors import TrajectoryFormatError
from lg_eval.evaluators import (
    create_text_evaluator,
    create_tool_sequence_evaluator,
    graph_trajectory_strict_match,
)
from lg_eval.langsmith import (
    agraph_target,
    graph_target,
    mean_score,
    offline,
    pass_rate,
)
from tests.langsmith.helpers import evaluate_weather, examples_of, golden

EVALUATORS = [
    graph_trajectory_strict_match,
    create_tool_sequence_evaluator(),
    create_text_evaluator("exact_match"),
]
WEATHER_FEEDBACK = {
    "sunny-sf": [
        ("graph_trajectory_strict_match", True, None),
        ("tool_sequence_strict_match", True, None),
        ("exact_match", False, "The answer differs."),
    ],
    "sunny-sf-from-table": [
        ("graph_trajectory_strict_match", True, None),
        ("tool_sequence_strict_match", True, None),
        ("exact_match", True, None),
    ],
    "weather-regression-demo": [
        ("graph_trajectory_strict_match", False, "Expected 1 turns, got 2."),
        (
            "tool_sequence_strict_match",
            False,
            'Call 1: expected get_weather(city="nyc"), got get_weather(city="sf"). Missing 1 '
            'expected call: get_weather(city="nyc"). Unexpected 1 call: get_weather(city="sf").',
        ),
        ("exact_match", False, "The answer differs."),
    ],
}
SUMMARY = [
    ("graph_trajectory_strict_match:pass_rate", 2 / 3, "2 of 3 passed"),
    ("tool_sequence_strict_match:pass_rate", 2 / 3, "2 of 3 passed"),
    ("exact_match:pass_rate", 1 / 3, "1 of 3 passed"),
    ("pass_rate", 1 / 3, "1 of 3 rows passed, 2 failed, 0 no verdict"),
    ("graph_trajectory_strict_match:mean", 2 / 3, "mean of 3 scores"),
    ("tool_sequence_strict_match:mean", 2 / 3, "mean of 3 scores"),
    ("exact_match:mean", 1 / 3, "mean of 3 scores"),
]


def feedback(rows: list[Any]) -> dict[str, list[tuple[str, Any, Any]]]:
    return {
        row["example"].metadata["case_id"]: [
            (r.key, r.score, r.comment) for r in row["evaluation_results"]["results"]
        ]
        for row in rows
    }


def test_evaluate_scores_golden_examples_with_lg_eval_evaluators_unwrapped() -> None:
    results, rows = evaluate_weather(EVALUATORS, [pass_rate(*EVALUATORS), mean_score(*EVALUATORS)])
    assert feedback(rows) == WEATHER_FEEDBACK
    summary = [(r.key, r.score, r.comment) for r in results._summary_results["results"]]
    assert summary == SUMMARY
    outputs = rows[0]["run"].outputs
    assert sorted(outputs) == ["messages", "output", "thread", "trajectory"]
    assert outputs["output"] == "The weather in sf is sunny and 75 degrees."


@pytest.mark.parametrize("name", ["approval", "research", "breakpoint", "workflows"])
def test_every_golden_case_plays_through_evaluate(name: str) -> None:
    dataset = golden(name)
    found: dict[str, Any] = {}
    for target in sorted({str(dataset.target_for(case)) for case in dataset.cases}):
        with offline() as client:
            results = evaluate(
                graph_target(target, checkpointer="memory://", allow_code=True),
                data=examples_of(dataset, target),
                evaluators=[graph_trajectory_strict_match],
                upload_results=False,
                client=client,
                max_concurrency=2,
            )
            found.update(feedback(list(results)))
    expected = {c.id: "regression-demo" not in c.tags for c in dataset.cases}
    assert {k: v[0][1] for k, v in found.items()} == expected


async def test_aevaluate_with_max_concurrency_and_async_evaluators() -> None:
    dataset = golden("weather")
    evaluators = [ev.as_async() for ev in EVALUATORS]
    with offline() as client:
        results = await aevaluate(
            agraph_target(dataset.graph, checkpointer="memory://", allow_code=True),
            data=examples_of(dataset),
            evaluators=evaluators,
            upload_results=False,
            client=client,
            max_concurrency=3,
        )
        rows = [row async for row in results]
    assert feedback(rows) == WEATHER_FEEDBACK


def test_examples_from_remote_data_do_not_import_resume_fn_by_default() -> None:
    dataset = golden("weather")
    table_case = examples_of(dataset)[1]
    target = graph_target(dataset.graph, checkpointer="memory://")
    with pytest.raises(Exception, match="does not allow code"):
        target(table_case.inputs)


def test_inputs_without_turns_get_a_clear_error() -> None:
    target = graph_target("graphs.weather:build", checkpointer="memory://")
    with pytest.raises(TrajectoryFormatError, match=r"under 'turns'.*its keys: 'question'"):
        target({"question": "sf?"})
