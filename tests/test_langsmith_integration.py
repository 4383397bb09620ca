"""lg_eval evaluators inside a real ``langsmith.evaluate`` run (offline: upload_results=False)."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langsmith import Client, aevaluate, evaluate
from langsmith.schemas import Example

from graphs.scenarios import SCENARIOS
from lg_eval import (
    create_graph_trajectory_match_evaluator,
    create_trajectory_match_evaluator,
    extract_langgraph_trajectory_from_thread,
    graph_trajectory_strict_match,
)
from lg_eval.langsmith import offline, offline_client

WEATHER_REFERENCE = {
    "results": [],
    "steps": [["__start__", "agent", "tools", "__interrupt__"], ["agent"]],
}


@pytest.fixture(autouse=True)
def no_langsmith(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("LANGSMITH_TRACING", "false")
    monkeypatch.delenv("LANGSMITH_API_KEY", raising=False)
    with offline():  # nothing inside traces, whatever the environment says
        yield


@pytest.fixture
def client() -> Client:
    """A client that cannot reach the network (lg_eval.langsmith.offline_client)."""
    return offline_client()


def example(inputs: dict[str, Any], outputs: dict[str, Any]) -> Example:
    return Example(id=uuid.uuid4(), dataset_id=uuid.uuid4(), inputs=inputs, outputs=outputs)


def run_weather_thread(inputs: dict[str, Any]) -> dict[str, Any]:
    """The target: play the weather HITL script on a fresh thread, return its trajectory."""
    graph = SCENARIOS["weather"].build(checkpointer=InMemorySaver())
    SCENARIOS["weather"].run(graph, inputs["thread_id"])
    extracted = extract_langgraph_trajectory_from_thread(
        graph, {"configurable": {"thread_id": inputs["thread_id"]}}
    )
    return extracted["outputs"]


def scores(results: Any) -> list[tuple[str, Any]]:
    return [(r.key, r.score) for row in results for r in row["evaluation_results"]["results"]]


def test_graph_evaluators_run_inside_langsmith_evaluate(client: Client) -> None:
    wrong = {"results": [], "steps": [["__start__", "agent"]]}
    results = evaluate(
        run_weather_thread,
        data=[example({"thread_id": "a"}, WEATHER_REFERENCE), example({"thread_id": "b"}, wrong)],
        evaluators=[graph_trajectory_strict_match],
        upload_results=False,
        client=client,
        max_concurrency=0,
    )
    assert scores(results) == [
        ("graph_trajectory_strict_match", True),
        ("graph_trajectory_strict_match", False),
    ]


def test_message_evaluators_run_inside_langsmith_evaluate(client: Client) -> None:
    exact_args = create_trajectory_match_evaluator(trajectory_match_mode="superset")
    superset_args = create_trajectory_match_evaluator(
        trajectory_match_mode="superset", tool_args_match_mode="superset"
    )
    call = {"name": "get_weather", "id": "1"}
    reference = [HumanMessage("sf?"), AIMessage("", tool_calls=[{**call, "args": {}}])]

    def target(inputs: dict[str, Any]) -> dict[str, Any]:
        args = {"city": inputs["city"]}
        return {
            "messages": [HumanMessage("sf?"), AIMessage("", tool_calls=[{**call, "args": args}])]
        }

    results = evaluate(
        target,
        data=[example({"city": "sf"}, {"messages": reference})],
        evaluators=[exact_args, superset_args],
        upload_results=False,
        client=client,
    )
    assert sorted(scores(results), key=str) == [
        ("trajectory_superset_match", False),
        ("trajectory_superset_match", True),
    ]


async def test_async_evaluators_run_inside_langsmith_aevaluate(client: Client) -> None:
    unordered = create_graph_trajectory_match_evaluator(
        trajectory_match_mode="unordered"
    ).as_async()

    async def target(inputs: dict[str, Any]) -> dict[str, Any]:
        return {
            "results": [],
            "steps": [["__start__", "tools", "agent", "__interrupt__"], ["agent"]],
        }

    results = await aevaluate(
        target,
        data=[example({"q": "x"}, WEATHER_REFERENCE)],
        evaluators=[unordered],
        upload_results=False,
        client=client,
    )
    rows = [row async for row in results]
    assert [(r.key, r.score) for row in rows for r in row["evaluation_results"]["results"]] == [
        ("graph_trajectory_unordered_match", True)
    ]
