"""lg_eval evaluators inside a real ``langsmith.evaluate`` run (offline: upload_results=False)."""

from __future__ import annotations

import socket
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, convert_to_openai_messages
from langgraph.checkpoint.memory import InMemorySaver
from langsmith import Client, aevaluate, evaluate
from langsmith.schemas import Example

from graphs import weather
from graphs.scenarios import SCENARIOS
from lg_eval import extract_thread
from lg_eval.errors import TrajectoryFormatError
from lg_eval.evaluators import (
    create_graph_trajectory_match_evaluator,
    create_trajectory_match_evaluator,
    exact_match,
    graph_trajectory_strict_match,
)
from lg_eval.extract import extract_langgraph_trajectory_from_thread
from lg_eval.judges import create_graph_trajectory_llm_as_judge
from lg_eval.langsmith import offline, offline_client
from tests.judges.fake_judge import ScriptedJudge, verdict

WEATHER_REFERENCE = {
    "results": [],
    "steps": [["__start__", "agent", "tools", "__interrupt__"], ["agent"]],
}


@pytest.fixture(autouse=True)
def no_network(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No tracing, no API key, lg_eval's offline() around the test, and any attempt to open
    a connection fails it."""
    monkeypatch.setenv("LANGSMITH_TRACING", "false")
    monkeypatch.delenv("LANGSMITH_API_KEY", raising=False)
    attempts: list[Any] = []

    def connect(self: socket.socket, address: Any) -> None:
        attempts.append(address)
        raise ConnectionRefusedError(f"the test tried to connect to {address!r}")

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect)
    with offline():  # nothing inside traces, whatever the environment says
        yield
    assert attempts == [], "a test made a network request"


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


# --------------------------------------------------------------------------- multi-field

ROUTE = [["__start__", "agent", "tools", "__interrupt__"], ["agent"]]
QUESTION_INPUT = {"messages": [{"role": "user", "content": weather.QUESTION}]}
RIGHT = {
    "trajectory": {
        "inputs": [QUESTION_INPUT, weather.HUMAN_ANSWER],
        "results": [{}, {"messages": [{"role": "assistant", "content": weather.FINAL_ANSWER}]}],
        "steps": ROUTE,
    },
    "tool_calls": [{"name": "get_weather", "args": {"city": "sf"}}],
    "output": weather.FINAL_ANSWER,
}
WRONG = {
    "trajectory": {"inputs": [QUESTION_INPUT], "results": [{}], "steps": [["__start__", "agent"]]},
    "tool_calls": [{"name": "get_weather", "args": {"city": "nyc"}}],
    "output": "It is raining in sf.",
}
SAME_ROUTE = "The reference takes the same route: ask the human, then answer."
OTHER_ROUTE = "The reference answers without asking anyone."


def weather_target(inputs: dict[str, Any]) -> dict[str, Any]:
    """Play the weather HITL thread; return its trajectory, thread, messages and answer."""
    graph = SCENARIOS["weather"].build(checkpointer=InMemorySaver())
    SCENARIOS["weather"].run(graph, inputs["thread_id"])
    thread = extract_thread(graph, {"configurable": {"thread_id": inputs["thread_id"]}})
    messages = convert_to_openai_messages(thread.turns[-1].state["messages"])
    return {
        "trajectory": thread.to_graph_trajectory().model_dump(),
        "thread": thread.model_dump(mode="json"),
        "messages": messages,
        "output": messages[-1]["content"],
    }


def route_judge(messages: list[BaseMessage]) -> AIMessage:
    """A scripted judge: the route is right when the reference it is shown asks the human."""
    shown = str(messages[-1].content).partition("<reference_thread>")[2]
    same = "__start__ -> agent -> tools -> __interrupt__" in shown
    return verdict(reasoning=SAME_ROUTE if same else OTHER_ROUTE, score=same)


def multi_field_evaluators() -> list[Any]:
    """Graph, tool-call and text evaluators and a graph judge, none of them wrapped."""
    return [
        graph_trajectory_strict_match,
        create_trajectory_match_evaluator(trajectory_match_mode="superset"),
        exact_match,
        create_graph_trajectory_llm_as_judge(judge=ScriptedJudge.of(route_judge, repeat_last=True)),
    ]


EXPECTED = {
    "right": [
        ("exact_match", True, None),
        ("graph_trajectory_accuracy", True, SAME_ROUTE),
        ("graph_trajectory_strict_match", True, None),
        ("trajectory_superset_match", True, None),
    ],
    "wrong": [
        ("exact_match", False, "The answer differs."),
        ("graph_trajectory_accuracy", False, OTHER_ROUTE),
        ("graph_trajectory_strict_match", False, "Expected 1 turns, got 2."),
        ("trajectory_superset_match", False, 'Missing 1 expected call: get_weather(city="nyc").'),
    ],
}
MULTI_FIELD_DATA = [
    ({"thread_id": "right"}, RIGHT),
    ({"thread_id": "wrong"}, WRONG),
]


def feedback_by_example(rows: list[Any]) -> dict[str, list[tuple[str, Any, Any]]]:
    """Each example's feedback (key, score, comment), read back from the experiment rows."""
    return {
        row["example"].inputs["thread_id"]: sorted(
            (r.key, r.score, r.comment) for r in row["evaluation_results"]["results"]
        )
        for row in rows
    }


def test_multi_field_outputs_and_references_serve_every_evaluator_unwrapped(
    client: Client,
) -> None:
    results = evaluate(
        weather_target,
        data=[example(inputs, outputs) for inputs, outputs in MULTI_FIELD_DATA],
        evaluators=multi_field_evaluators(),
        upload_results=False,
        disable_evaluator_tracing=True,  # the judge's model calls would be traced and sent
        client=client,
        max_concurrency=0,
    )
    rows = list(results)
    assert feedback_by_example(rows) == EXPECTED
    assert set(rows[0]["run"].outputs) == {"trajectory", "thread", "messages", "output"}


async def test_multi_field_outputs_and_references_serve_awaited_evaluators(
    client: Client,
) -> None:
    async def target(inputs: dict[str, Any]) -> dict[str, Any]:
        return weather_target(inputs)

    results = await aevaluate(
        target,
        data=[example(inputs, outputs) for inputs, outputs in MULTI_FIELD_DATA],
        evaluators=[evaluator.as_async() for evaluator in multi_field_evaluators()],
        upload_results=False,
        disable_evaluator_tracing=True,
        client=client,
    )
    rows = [row async for row in results]
    assert feedback_by_example(rows) == EXPECTED


def test_the_example_inputs_langsmith_passes_do_not_replace_the_turn_inputs() -> None:
    model = ScriptedJudge.of(verdict(reasoning="Fine.", score=True))
    judge = create_graph_trajectory_llm_as_judge(judge=model)
    result = judge(inputs={"thread_id": "right"}, outputs=RIGHT)
    assert (result["score"], result["comment"]) == (True, "Fine.")
    assert f"<input>\n{weather.HUMAN_ANSWER}\n</input>" in model.calls[0].prompt
    with pytest.raises(TrajectoryFormatError, match="inputs is a dict with keys \\['thread_id'\\]"):
        judge(inputs={"thread_id": "x"}, outputs={"results": [{}], "steps": [["agent"]]})
