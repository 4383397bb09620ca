"""Extraction of the example graphs: exact trajectories, written from what each graph does.

Every test runs through each reader (`generic` and, where available, `fast`) so the
readers cannot silently diverge. Interrupt ids are taken from LangGraph itself (the
pending interrupts after each turn) and compared with what the extractor reports.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from graphs import weather
from graphs.scenarios import APPROVED_SOURCES, SCENARIOS, VERDICT
from lg_eval import aextract_thread, extract_thread
from lg_eval._trajectory import ThreadTrajectory
from lg_eval.extract._thread import READERS
from tests.extract.live import record

READER_NAMES = [r for r in READERS if r != "auto"]
HITL = "HumanInTheLoopMiddleware.after_model"
RESEARCH_SECOND_TURN = [
    # researcher resumes and pauses again (deeper), so it is listed where it pauses
    "researcher",
    "researcher:summarize",
    "researcher:deep_dive",
    "researcher:deep_dive:__start__",
    "researcher:deep_dive:dig",
    "researcher:deep_dive:verify",
    "__interrupt__",
]
RESEARCH_FIRST_TURN = [
    "__start__",
    "plan",
    "researcher",
    "researcher:__start__",
    "researcher:search",
    "researcher:approve_sources",
    "__interrupt__",
]


@pytest.fixture(params=READER_NAMES)
def reader(request: pytest.FixtureRequest) -> str:
    return request.param


def config(thread_id: str = "t") -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id}}


def play(name: str, saver: Any = None, thread_id: str = "t") -> tuple[Any, list[list[str]]]:
    """Run a scenario turn by turn; return the graph and the pending interrupt ids per turn."""
    scenario = SCENARIOS[name]
    graph = scenario.build(checkpointer=saver or InMemorySaver())
    pending: list[list[str]] = []
    for turn in scenario.turns:
        snapshot = graph.get_state(config(thread_id)) if turn.from_state else None
        try:
            graph.invoke(turn.resolve(snapshot), config(thread_id))
        except Exception as exc:
            assert turn.raises is not None and isinstance(exc, turn.raises), exc
        pending.append([i.id for i in graph.get_state(config(thread_id)).interrupts])
    return graph, pending


def extract(name: str, reader: str, saver: Any = None) -> tuple[ThreadTrajectory, list[list[str]]]:
    graph, pending = play(name, saver)
    return extract_thread(graph, config(), reader=reader), pending


def steps(trajectory: ThreadTrajectory, resumed: str = "omit") -> list[list[str]]:
    return trajectory.to_graph_trajectory(resumed=resumed).steps  # type: ignore[arg-type]


# --- weather: the agentevals README scenario ------------------------------------------


def test_weather_tool_interrupt_matches_agentevals_readme_convention(reader: str) -> None:
    trajectory, _ = extract("weather", reader)
    assert steps(trajectory) == [["__start__", "agent", "tools", "__interrupt__"], ["agent"]]


def test_weather_repeat_mode_lists_the_resumed_tool_again(reader: str) -> None:
    trajectory, _ = extract("weather", reader)
    assert steps(trajectory, "repeat") == [
        ["__start__", "agent", "tools", "__interrupt__"],
        ["tools", "agent"],
    ]


def test_weather_inputs_results_and_resume_value(reader: str) -> None:
    trajectory, pending = extract("weather", reader)
    flat = trajectory.to_graph_trajectory()
    assert flat.inputs == [
        {
            "__start__": {
                "messages": [{"role": "user", "content": weather.QUESTION, "id": "weather-human-1"}]
            }
        },
        "__resuming__",
    ]
    assert flat.results[0] == {}
    assert flat.results[1]["messages"][0]["role"] == "assistant"
    assert flat.results[1]["messages"][0]["content"] == weather.FINAL_ANSWER
    first, second = trajectory.turns
    assert (first.kind, first.status, second.kind, second.status) == (
        "input",
        "interrupted",
        "resume",
        "completed",
    )
    assert [(i.id, i.value, i.path) for i in first.interrupts] == [
        (pending[0][0], "Tell me the weather for sf", "tools")
    ]
    assert second.resume == {pending[0][0]: weather.HUMAN_ANSWER}
    assert second.resume_by_node == {"tools": weather.HUMAN_ANSWER}


# --- research: interrupts one and two subgraph levels down ------------------------------


def test_research_subgraph_paths_and_pauses_inside_subgraphs(reader: str) -> None:
    trajectory, _ = extract("research", reader)
    assert steps(trajectory) == [RESEARCH_FIRST_TURN, RESEARCH_SECOND_TURN, ["write"]]


def test_research_repeat_mode_relists_parents_then_resumed_child(reader: str) -> None:
    trajectory, _ = extract("research", reader)
    assert steps(trajectory, "repeat")[1:] == [
        [
            "researcher",
            "researcher:approve_sources",
            "researcher:summarize",
            "researcher:deep_dive",
            "researcher:deep_dive:__start__",
            "researcher:deep_dive:dig",
            "researcher:deep_dive:verify",
            "__interrupt__",
        ],
        ["researcher", "researcher:deep_dive", "researcher:deep_dive:verify", "write"],
    ]


def test_research_resume_values_are_keyed_by_interrupt_id_and_nested_path(reader: str) -> None:
    trajectory, pending = extract("research", reader)
    assert trajectory.turns[1].resume == {pending[0][0]: APPROVED_SOURCES}
    assert trajectory.turns[1].resume_by_node == {"researcher:approve_sources": APPROVED_SOURCES}
    assert trajectory.turns[2].resume_by_node == {"researcher:deep_dive:verify": VERDICT}
    assert [i.path for i in trajectory.turns[1].interrupts] == ["researcher:deep_dive:verify"]


def test_finished_subgraph_never_ends_a_turn(reader: str) -> None:
    trajectory, _ = extract("research_shallow", reader)
    assert steps(trajectory) == [
        RESEARCH_FIRST_TURN,
        ["researcher:summarize", "write"],
    ]
    assert len(trajectory.to_graph_trajectory().inputs) == 2


# --- approval: parallel interrupts in one superstep ---------------------------------------


def test_parallel_interrupts_each_get_a_marker_in_langgraph_task_order(reader: str) -> None:
    graph, live = record(SCENARIOS["approval"], InMemorySaver())
    trajectory = extract_thread(graph, config(), reader=reader)
    first, second = live[0].batches[-1][1]  # the order LangGraph started the reviews in
    assert steps(trajectory) == [
        ["__start__", "draft", first, "__interrupt__", second, "__interrupt__"],
        ["finalize"],
    ]
    assert steps(trajectory, "repeat")[1] == [first, second, "finalize"]
    assert {first, second} == {"legal_review", "finance_review"}
    superstep = trajectory.turns[0].supersteps[-1]
    assert [t.name for t in superstep.tasks] == [first, second]


def test_one_resume_answering_two_interrupts_records_both_answers(reader: str) -> None:
    trajectory, pending = extract("approval", reader)
    assert set(trajectory.turns[1].resume or {}) == set(pending[0])
    assert trajectory.turns[1].resume_by_node == {
        "legal_review": {"approved": True, "comment": "No legal concerns."},
        "finance_review": {"approved": True, "comment": "Within the quarterly budget."},
    }
    assert {i.value["reviewer"] for i in trajectory.turns[0].interrupts} == {"legal", "finance"}
    # no messages in this state: the completed turn's result is the state itself
    assert trajectory.turns[1].result == trajectory.turns[1].state
    assert trajectory.turns[1].result["decision"] == "approved"


def test_two_interrupts_in_one_node_are_two_pauses_and_three_turns(reader: str) -> None:
    trajectory, pending = extract("double_check", reader)
    assert steps(trajectory) == [
        ["__start__", "confirm_payment", "__interrupt__"],
        ["confirm_payment", "__interrupt__"],
        ["pay"],
    ]
    assert steps(trajectory, "repeat")[2] == ["confirm_payment", "pay"]
    assert [t.kind for t in trajectory.turns] == ["input", "resume", "resume"]
    assert trajectory.turns[1].resume == {pending[0][0]: "ops-credit-card"}
    assert trajectory.turns[2].resume == {pending[1][0]: True}
    # LangGraph keeps only the latest question a task asked: the first payload is gone.
    assert [(i.id, i.value) for i in trajectory.turns[0].interrupts] == [(pending[0][0], None)]
    assert [(i.id, i.value) for i in trajectory.turns[1].interrupts] == [
        (pending[1][0], {"question": "Charge 120 EUR to ops-credit-card?"})
    ]


# --- Send, create_agent + HITL middleware, Command goto ------------------------------------


def test_send_fan_out_lists_each_send_task(reader: str) -> None:
    trajectory, _ = extract("map_reduce", reader)
    assert steps(trajectory) == [
        ["__start__", "split", "summarize_chunk", "summarize_chunk", "summarize_chunk", "combine"]
    ]
    assert [len(s.tasks) for s in trajectory.turns[0].supersteps] == [1, 1, 3, 1]


def test_create_agent_with_hitl_middleware_approve_and_reject(reader: str) -> None:
    trajectory, _ = extract("hitl_agent", reader)
    assert steps(trajectory) == [
        ["__start__", "model", HITL, "tools", "model", HITL, "__interrupt__"],
        ["tools", "model", HITL],
        ["__start__", "model", HITL, "__interrupt__"],
        ["model", HITL],
    ]
    assert trajectory.turns[1].resume_by_node == {HITL: {"decisions": [{"type": "approve"}]}}


def test_command_goto_routes_are_steps(reader: str) -> None:
    trajectory, _ = extract("command_goto", reader)
    assert steps(trajectory) == [
        ["__start__", "triage", "billing"],
        ["__start__", "triage", "technical"],
    ]


# --- static breakpoints, errors, functional API ---------------------------------------------


def test_static_breakpoint_ends_turn_with_interrupt_marker(reader: str) -> None:
    trajectory, _ = extract("breakpoint", reader)
    assert steps(trajectory) == [["__start__", "draft_email", "__interrupt__"], ["send_email"]]
    first, second = trajectory.turns
    assert (first.status, first.breakpoint, first.next_nodes) == (
        "interrupted",
        True,
        ["send_email"],
    )
    assert (second.kind, second.status) == ("continue", "completed")
    assert trajectory.to_graph_trajectory().inputs[1] == "__resuming__"


def test_error_is_recorded_in_its_turn_and_retry_is_its_own_turn(reader: str) -> None:
    trajectory, _ = extract("flaky", reader)
    assert steps(trajectory) == [["__start__", "prepare", "fetch"], ["fetch", "answer"]]
    failed, retried = trajectory.turns
    assert failed.status == "error"
    assert "search service unavailable (attempt 1)" in (failed.error or "")
    fetch = failed.supersteps[-1].tasks[0]
    assert (fetch.name, fetch.error is not None) == ("fetch", True)
    assert (retried.kind, retried.status) == ("continue", "completed")


def test_functional_api_lists_entrypoint_then_task_calls(reader: str) -> None:
    trajectory, pending = extract("functional", reader)
    assert steps(trajectory) == [
        ["__start__", "essay_workflow", "write_draft", "__interrupt__"],
        ["revise"],
    ]
    assert steps(trajectory, "repeat")[1] == ["essay_workflow", "revise"]
    assert trajectory.turns[0].input == {"topic": "cats"}
    assert trajectory.turns[1].resume == {pending[0][0]: "Mention their naps."}


# --- every checkpointer, sync and async ------------------------------------------------------

EXPECTED_WEATHER = [["__start__", "agent", "tools", "__interrupt__"], ["agent"]]


def test_weather_on_every_sync_checkpointer(saver: Any, reader: str) -> None:
    graph, _ = play("weather", saver)
    assert steps(extract_thread(graph, config(), reader=reader)) == EXPECTED_WEATHER


async def test_weather_on_every_async_checkpointer(async_saver: Any, reader: str) -> None:
    scenario = SCENARIOS["weather"]
    graph = scenario.build(checkpointer=async_saver)
    await scenario.arun(graph, "t")
    trajectory = await aextract_thread(graph, config(), reader=reader)
    assert steps(trajectory) == EXPECTED_WEATHER


# Expected flat steps (resumed="omit") of every scenario, as reasoned in the tests above.
EXPECTED_STEPS = {
    "weather": EXPECTED_WEATHER,
    "research": [RESEARCH_FIRST_TURN, RESEARCH_SECOND_TURN, ["write"]],
    "research_shallow": [RESEARCH_FIRST_TURN, ["researcher:summarize", "write"]],
    "approval": [
        ["__start__", "draft", "finance_review", "__interrupt__", "legal_review", "__interrupt__"],
        ["finalize"],
    ],
    "double_check": [
        ["__start__", "confirm_payment", "__interrupt__"],
        ["confirm_payment", "__interrupt__"],
        ["pay"],
    ],
    "map_reduce": [
        ["__start__", "split", "summarize_chunk", "summarize_chunk", "summarize_chunk", "combine"]
    ],
    "hitl_agent": [
        ["__start__", "model", HITL, "tools", "model", HITL, "__interrupt__"],
        ["tools", "model", HITL],
        ["__start__", "model", HITL, "__interrupt__"],
        ["model", HITL],
    ],
    "breakpoint": [["__start__", "draft_email", "__interrupt__"], ["send_email"]],
    "functional": [["__start__", "essay_workflow", "write_draft", "__interrupt__"], ["revise"]],
    "flaky": [["__start__", "prepare", "fetch"], ["fetch", "answer"]],
    "command_goto": [["__start__", "triage", "billing"], ["__start__", "triage", "technical"]],
}


def test_expectations_cover_every_scenario() -> None:
    assert set(EXPECTED_STEPS) == set(SCENARIOS)


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_every_scenario_on_every_sync_checkpointer(name: str, saver: Any, reader: str) -> None:
    trajectory, _ = extract(name, reader, saver)
    assert steps(trajectory) == EXPECTED_STEPS[name]


@pytest.mark.parametrize("name", sorted(SCENARIOS))
async def test_every_scenario_on_every_async_checkpointer(
    name: str, async_saver: Any, reader: str
) -> None:
    scenario = SCENARIOS[name]
    graph = scenario.build(checkpointer=async_saver)
    await scenario.arun(graph, "t")
    trajectory = await aextract_thread(graph, config(), reader=reader)
    assert steps(trajectory) == EXPECTED_STEPS[name]


def test_demo_golden_references_are_the_expected_steps() -> None:
    golden = json.loads(
        (Path(__file__).parent.parent / "examples/golden/example_threads.json").read_text()
    )
    assert {name: ref["steps"] for name, ref in golden.items()} == EXPECTED_STEPS
