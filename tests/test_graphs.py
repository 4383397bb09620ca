"""Tests for the example graphs in `graphs/` and their scripted scenarios.

Every scenario runs on `InMemorySaver` and a `SqliteSaver` file (sync driver),
and on `InMemorySaver` and `AsyncSqliteSaver` (async driver); the final state is
compared exactly. Step-by-step tests pin the intermediate interrupt payloads.
"""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.types import Command

from graphs import (
    approval,
    command_goto,
    flaky,
    functional,
    hitl_agent,
    map_reduce,
    research,
    weather,
)
from graphs import breakpoint as static_breakpoint
from graphs._scripted import ScriptedChatModel, ScriptExhaustedError, ai, scripted_model, tool_call
from graphs.scenarios import (
    APPROVAL_TURNS,
    BREAKPOINT_TURNS,
    DOUBLE_CHECK_TURNS,
    FLAKY_TURNS,
    FUNCTIONAL_TURNS,
    HITL_AGENT_TURNS,
    RESEARCH_TURNS,
    SCENARIOS,
    WEATHER_TURNS,
    ScenarioError,
    Turn,
    adrive,
    drive,
    thread_config,
)

SOURCES = [f"https://example.org/solid-state-batteries/{n}" for n in (1, 2, 3)]
FINDINGS = [f"Claim checked in {s}" for s in SOURCES[:2]]
PLAN = "1. Find recent surveys. 2. Check the strongest claims."
REPORT = "Solid-state batteries: promising energy density, manufacturing still immature."
DRAFT = "Proposal: buy 3 laptops for the design team, total 4,500 EUR."
EMAIL = "Hi team, the offsite moved to Thursday. See you there!"
ESSAY = "Cats are independent, curious and quietly affectionate."
BOB_ARGS = {"to": "bob@example.com", "subject": "Re: Lunch", "body": "Friday works for me."}
ALL_ARGS = {"to": "all@example.com", "subject": "Lunch", "body": "Lunch with Bob on Friday."}


def hitl_request(args: dict[str, str]) -> dict[str, Any]:
    """The exact `HITLRequest` the middleware raises for one `send_email` call."""
    description = f"Tool execution requires approval\n\nTool: send_email\nArgs: {args}"
    return {
        "action_requests": [
            {
                "name": "send_email",
                "args": args,
                "description": description,
            }
        ],
        "review_configs": [
            {"action_name": "send_email", "allowed_decisions": ["approve", "reject"]}
        ],
    }


EXPECTED: dict[str, dict[str, Any]] = {
    "weather": {
        "messages": [
            ("human", "what's the weather in sf?"),
            ("ai", ""),
            ("tool", "It's sunny and 75 degrees"),
            ("ai", "The weather in sf is sunny and 75 degrees."),
        ]
    },
    "research": {
        "topic": "solid state batteries",
        "deep": True,
        "plan": PLAN,
        "sources": SOURCES,
        "approved_sources": SOURCES[:2],
        "summary": "2 approved sources on solid state batteries.",
        "findings": FINDINGS,
        "verdict": "Confirmed by the domain expert.",
        "report": REPORT,
    },
    "research_shallow": {
        "topic": "solid state batteries",
        "deep": False,
        "plan": PLAN,
        "sources": SOURCES,
        "approved_sources": SOURCES[:2],
        "summary": "2 approved sources on solid state batteries.",
        "report": REPORT,
    },
    "approval": {
        "request": "Buy 3 laptops for the design team.",
        "draft": DRAFT,
        "legal": {"approved": True, "comment": "No legal concerns."},
        "finance": {"approved": True, "comment": "Within the quarterly budget."},
        "decision": "approved",
    },
    "double_check": {
        "amount": 120,
        "account": "ops-credit-card",
        "confirmed": True,
        "status": "charged 120 EUR to ops-credit-card",
    },
    "map_reduce": {
        "document": (
            "LangGraph runs stateful graphs. Checkpointers save every step. "
            "Interrupts pause a thread for a human."
        ),
        "chunks": [
            "LangGraph runs stateful graphs.",
            "Checkpointers save every step.",
            "Interrupts pause a thread for a human.",
        ],
        "notes": [
            {"index": 0, "note": "4 words, starts with 'LangGraph'"},
            {"index": 1, "note": "4 words, starts with 'Checkpointers'"},
            {"index": 2, "note": "7 words, starts with 'Interrupts'"},
        ],
        "summary": "LangGraph runs checkpointed graphs that can pause for humans.",
    },
    "hitl_agent": {
        "messages": [
            ("human", "Check my inbox and answer Bob."),
            ("ai", ""),
            ("tool", "1 unread: from bob@example.com, 'Lunch on Friday?'"),
            ("ai", ""),
            ("tool", "Email sent to bob@example.com."),
            ("ai", "Bob asked about lunch on Friday; I replied that Friday works."),
            ("human", "Also tell the whole company."),
            ("ai", ""),
            (
                "tool",
                "User rejected the tool call for `send_email` with reason: "
                "Do not email the whole company.",
            ),
            ("ai", "Understood, I did not email the whole company."),
        ],
        "hitl_edited_tool_calls": {},
    },
    "breakpoint": {
        "request": "Tell the team the offsite moved to Thursday.",
        "email": EMAIL,
        "status": f"sent: {EMAIL}",
    },
    "functional": {
        "draft": ESSAY,
        "feedback": "Mention their naps.",
        "final": f"{ESSAY} [revised: Mention their naps.]",
    },
    "flaky": {
        "query": "LangGraph  Checkpointers",
        "normalized": "langgraph checkpointers",
        "results": [f"langgraph checkpointers result {n}" for n in (1, 2, 3)],
        "answer": "Three results found for 'langgraph checkpointers'.",
    },
    "command_goto": {
        "request": "The app crashes when I upload a photo.",
        "route": "technical",
        "reply": "Technical: a ticket was opened (The app crashes when I upload a photo.)",
    },
}

MODEL_FACTORIES = {
    "weather": weather.default_model,
    "research": research.default_model,
    "research_shallow": research.default_model,
    "approval": approval.default_model,
    "map_reduce": map_reduce.default_model,
    "hitl_agent": hitl_agent.default_model,
    "breakpoint": static_breakpoint.default_model,
    "functional": functional.default_model,
    "flaky": flaky.default_model,
    "command_goto": command_goto.default_model,
}


def normalize(values: dict[str, Any]) -> dict[str, Any]:
    """Messages become ``(type, content)`` pairs; everything else is kept as is."""
    return {
        key: [(m.type, m.content) for m in value] if key == "messages" else value
        for key, value in values.items()
    }


@pytest.fixture(params=["memory", "sqlite"])
def saver(request: pytest.FixtureRequest, tmp_path) -> Iterator[Any]:
    if request.param == "memory":
        yield InMemorySaver()
        return
    conn = sqlite3.connect(tmp_path / "x.sqlite", check_same_thread=False)
    try:
        yield SqliteSaver(conn)
    finally:
        conn.close()


@pytest.fixture(params=["memory", "sqlite"])
async def asaver(request: pytest.FixtureRequest, tmp_path) -> AsyncIterator[Any]:
    if request.param == "memory":
        yield InMemorySaver()
        return
    async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "x.sqlite")) as cp:
        yield cp


def test_registry_covers_every_expectation() -> None:
    assert set(SCENARIOS) == set(EXPECTED)
    for name, scenario in SCENARIOS.items():
        assert scenario.name == name
        assert scenario.description


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_scenario_sync(name: str, saver: Any) -> None:
    scenario = SCENARIOS[name]
    graph = scenario.build(checkpointer=saver)
    scenario.run(graph, "thread-1")
    state = graph.get_state(thread_config("thread-1"))
    assert state.next == ()
    assert state.interrupts == ()
    assert normalize(state.values) == EXPECTED[name]


@pytest.mark.parametrize("name", sorted(EXPECTED))
async def test_scenario_async(name: str, asaver: Any) -> None:
    scenario = SCENARIOS[name]
    graph = scenario.build(checkpointer=asaver)
    await scenario.arun(graph, "thread-1")
    state = await graph.aget_state(thread_config("thread-1"))
    assert state.next == ()
    assert normalize(state.values) == EXPECTED[name]


@pytest.mark.parametrize("name", sorted(MODEL_FACTORIES))
def test_scenario_uses_the_whole_script(name: str) -> None:
    model = MODEL_FACTORIES[name]()
    scenario = SCENARIOS[name]
    graph = scenario.build(checkpointer=InMemorySaver(), model=model)
    scenario.run(graph, "t")
    assert model.remaining == 0
    assert model.calls == len(model.script)


def test_build_twice_gives_independent_scripts() -> None:
    saver = InMemorySaver()
    first, second = weather.build(saver), weather.build(saver)
    SCENARIOS["weather"].run(first, "a")
    SCENARIOS["weather"].run(second, "b")
    with pytest.raises(ScriptExhaustedError, match="'weather-model'"):
        SCENARIOS["weather"].run(first, "c")


# --- step-by-step checks ------------------------------------------------------------


def test_weather_steps(saver: Any) -> None:
    graph = weather.build(saver)
    config = thread_config("w")
    drive(graph, "w", WEATHER_TURNS[:1], finish=False)
    state = graph.get_state(config)
    assert state.next == ("tools",)
    assert [i.value for i in state.interrupts] == ["Tell me the weather for sf"]
    last = state.values["messages"][-1]
    assert isinstance(last, AIMessage)
    assert last.id == "weather-ai-1"
    assert last.tool_calls == [
        {
            "name": "get_weather",
            "args": {"city": "sf"},
            "id": "call_weather_sf",
            "type": "tool_call",
        }
    ]

    graph.invoke(Command(resume="It's sunny and 75 degrees"), config)
    messages: list[BaseMessage] = graph.get_state(config).values["messages"]
    assert [m.id for m in messages] == [
        "weather-human-1",
        "weather-ai-1",
        "tool-call_weather_sf",
        "weather-ai-2",
    ]
    assert messages[-1].content == "The weather in sf is sunny and 75 degrees."


def test_weather_streams_tool_calls_in_messages_mode() -> None:
    graph = weather.build(InMemorySaver())
    config = thread_config("s")
    chunks = list(graph.stream(WEATHER_TURNS[0].input, config, stream_mode="messages"))
    assert chunks, "the scripted model should stream through LangGraph"
    state = graph.get_state(config)
    assert state.next == ("tools",)
    assert state.values["messages"][-1].tool_calls[0]["args"] == {"city": "sf"}


def test_approval_steps(saver: Any) -> None:
    graph = approval.build(saver)
    config = thread_config("a")
    result = graph.invoke(APPROVAL_TURNS[0].input, config)
    assert sorted(result["__interrupt__"], key=lambda i: i.value["reviewer"]) == sorted(
        graph.get_state(config).interrupts, key=lambda i: i.value["reviewer"]
    )
    state = graph.get_state(config)
    assert sorted(state.next) == ["finance_review", "legal_review"]
    payloads = sorted((i.value for i in state.interrupts), key=lambda v: v["reviewer"])
    assert payloads == [
        {"reviewer": "finance", "question": "Is this draft within budget?", "draft": DRAFT},
        {"reviewer": "legal", "question": "Is this draft legally sound?", "draft": DRAFT},
    ]
    assert len({i.id for i in state.interrupts}) == 2

    command = APPROVAL_TURNS[1].resolve(state)
    assert isinstance(command, Command)
    assert set(command.resume) == {i.id for i in state.interrupts}
    graph.invoke(command, config)
    final = graph.get_state(config)
    assert final.next == ()
    assert final.values["decision"] == "approved"


def test_approval_rejected_by_one_reviewer() -> None:
    graph = approval.build(InMemorySaver())
    config = thread_config("r")
    graph.invoke({"request": "x"}, config)
    answers = {
        i.id: {"approved": i.value["reviewer"] == "legal", "comment": "-"}
        for i in graph.get_state(config).interrupts
    }
    assert graph.invoke(Command(resume=answers), config)["decision"] == "rejected"


def test_double_check_steps(saver: Any) -> None:
    graph = approval.build_double_check(saver)
    config = thread_config("d")
    drive(graph, "d", DOUBLE_CHECK_TURNS[:1], finish=False)
    first = graph.get_state(config)
    assert first.next == ("confirm_payment",)
    assert [i.value for i in first.interrupts] == [
        {"question": "Which account should be charged?", "amount": 120}
    ]
    drive(graph, "d", DOUBLE_CHECK_TURNS[1:2], finish=False)
    second = graph.get_state(config)
    assert second.next == ("confirm_payment",)
    assert [i.value for i in second.interrupts] == [
        {"question": "Charge 120 EUR to ops-credit-card?"}
    ]
    assert second.interrupts[0].id != first.interrupts[0].id
    drive(graph, "d", DOUBLE_CHECK_TURNS[2:])


def test_research_steps(saver: Any) -> None:
    graph = research.build(saver)
    config = thread_config("r")
    drive(graph, "r", RESEARCH_TURNS[:1], finish=False)
    state = graph.get_state(config)
    assert state.next == ("researcher",)
    assert [i.value for i in state.interrupts] == [
        {"question": "Approve these sources?", "sources": SOURCES}
    ]

    drive(graph, "r", RESEARCH_TURNS[1:2], finish=False)
    state = graph.get_state(config, subgraphs=True)
    assert [i.value for i in state.interrupts] == [
        {"question": "Do these findings hold up?", "findings": FINDINGS}
    ]
    researcher = state.tasks[0]
    assert researcher.name == "researcher"
    deep_dive = researcher.state.tasks[0]
    assert deep_dive.name == "deep_dive"
    assert deep_dive.state.next == ("verify",)
    assert deep_dive.state.config["configurable"]["checkpoint_ns"].startswith("researcher:")
    assert "|deep_dive:" in deep_dive.state.config["configurable"]["checkpoint_ns"]
    drive(graph, "r", RESEARCH_TURNS[2:])


def test_hitl_agent_steps(saver: Any) -> None:
    graph = hitl_agent.build(saver)
    config = thread_config("h")
    drive(graph, "h", HITL_AGENT_TURNS[:1], finish=False)
    state = graph.get_state(config)
    assert state.next == ("HumanInTheLoopMiddleware.after_model",)
    assert [i.value for i in state.interrupts] == [hitl_request(BOB_ARGS)]
    drive(graph, "h", HITL_AGENT_TURNS[1:3], finish=False)
    state = graph.get_state(config)
    assert [i.value for i in state.interrupts] == [hitl_request(ALL_ARGS)]
    drive(graph, "h", HITL_AGENT_TURNS[3:])
    rejected = graph.get_state(config).values["messages"][-2]
    assert (rejected.type, rejected.status) == ("tool", "error")


def test_breakpoint_steps(saver: Any) -> None:
    graph = static_breakpoint.build(saver)
    config = thread_config("b")
    drive(graph, "b", BREAKPOINT_TURNS[:1], finish=False)
    state = graph.get_state(config)
    assert state.next == ("send_email",)
    assert state.interrupts == ()
    assert state.values == {
        "request": "Tell the team the offsite moved to Thursday.",
        "email": EMAIL,
    }


def test_functional_steps(saver: Any) -> None:
    graph = functional.build(saver)
    config = thread_config("f")
    drive(graph, "f", FUNCTIONAL_TURNS[:1], finish=False)
    state = graph.get_state(config)
    assert state.next == ("essay_workflow",)
    assert [i.value for i in state.interrupts] == [
        {"question": "Please review the draft", "draft": ESSAY}
    ]


def test_flaky_steps(saver: Any) -> None:
    graph = flaky.build(saver)
    config = thread_config("x")
    with pytest.raises(flaky.FlakyServiceError, match=r"unavailable \(attempt 1\)"):
        graph.invoke(FLAKY_TURNS[0].input, config)
    state = graph.get_state(config)
    assert state.next == ("fetch",)
    assert state.values == {
        "query": "LangGraph  Checkpointers",
        "normalized": "langgraph checkpointers",
    }
    assert state.tasks[0].error is not None
    assert "FlakyServiceError" in str(state.tasks[0].error)
    drive(graph, "x", FLAKY_TURNS[1:])


def test_flaky_failures_option() -> None:
    graph = flaky.build(InMemorySaver(), failures=2)
    config = thread_config("x")
    for attempt in (1, 2):
        with pytest.raises(flaky.FlakyServiceError, match=f"attempt {attempt}"):
            graph.invoke(None if attempt > 1 else {"query": "q"}, config)
    assert graph.invoke(None, config)["results"] == ["q result 1", "q result 2", "q result 3"]


def test_command_goto_first_turn_routes_to_billing() -> None:
    graph = command_goto.build(InMemorySaver())
    result = graph.invoke({"request": "I was charged twice."}, thread_config("g"))
    assert result == {
        "request": "I was charged twice.",
        "route": "billing",
        "reply": "Billing: we will refund the duplicate charge (I was charged twice.)",
    }


# --- scripted model and drivers -----------------------------------------------------


def test_scripted_model_basics() -> None:
    model = scripted_model(
        "unit", ai("u1", "", tool_call("t", {"a": 1}, "c1")), ai("u2", "hello world")
    )
    assert isinstance(model, ScriptedChatModel)
    assert model.bind_tools([]) is model
    first = model.invoke("hi")
    assert (first.id, first.tool_calls[0]["args"]) == ("u1", {"a": 1})
    streamed = list(model.stream("hi"))
    assert "".join(str(c.content) for c in streamed) == "hello world"
    assert {c.id for c in streamed} == {"u2"}
    with pytest.raises(ScriptExhaustedError, match="'unit' ran out of script"):
        model.invoke("again")


def test_scripted_model_returns_copies() -> None:
    model = scripted_model("copy", ai("c1", "x"))
    reply = model.invoke("hi")
    reply.content = "mutated"
    assert model.script[0].content == "x"


def test_drive_reports_unfinished_thread() -> None:
    graph = weather.build(InMemorySaver())
    with pytest.raises(ScenarioError, match="did not finish"):
        drive(graph, "t", WEATHER_TURNS[:1])


def test_drive_requires_expected_error() -> None:
    graph = weather.build(InMemorySaver())
    turns = [Turn(WEATHER_TURNS[0].input, raises=ValueError)]
    with pytest.raises(ScenarioError, match="should have raised ValueError"):
        drive(graph, "t", turns, finish=False)


async def test_adrive_propagates_unexpected_errors() -> None:
    graph = flaky.build(InMemorySaver())
    with pytest.raises(flaky.FlakyServiceError):
        await adrive(graph, "t", [Turn({"query": "q"})])
