"""Specification of lg_eval.messages: reading messages and tool calls in every shape."""

from __future__ import annotations

import json

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph

from lg_eval._trajectory import GraphTrajectory, ThreadTrajectory, Turn
from lg_eval.errors import (
    CheckpointNotFoundError,
    InvalidConfigError,
    MissingCheckpointerError,
    ThreadNotFoundError,
    TrajectoryFormatError,
)
from lg_eval.messages import (
    atool_calls_from_thread,
    react_steps_from_messages,
    to_openai_messages,
    tool_calls_from_messages,
    tool_calls_from_thread,
)

WEATHER = {"name": "get_weather", "args": {"city": "SF"}, "id": "c1"}


def langchain_history() -> list:
    return [
        SystemMessage("be brief"),
        HumanMessage("weather in SF and NYC?"),
        AIMessage(
            "I will check both.",
            tool_calls=[WEATHER, {"name": "get_weather", "args": {"city": "NYC"}, "id": "c2"}],
        ),
        ToolMessage("sunny", tool_call_id="c1"),
        ToolMessage("rainy", tool_call_id="c2"),
        AIMessage("SF is sunny, NYC is rainy."),
    ]


EXPECTED_CALLS = [WEATHER, {"name": "get_weather", "args": {"city": "NYC"}, "id": "c2"}]


# --------------------------------------------------------------------------- tool calls


def test_tool_calls_from_langchain_messages_are_plain_dicts_in_order():
    assert tool_calls_from_messages(langchain_history()) == EXPECTED_CALLS


def test_tool_calls_from_openai_dicts_decode_json_arguments():
    messages = [
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "SF"}'},
                },
                {
                    "id": "c2",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "NYC"}'},
                },
            ],
        },
    ]
    assert tool_calls_from_messages(messages) == EXPECTED_CALLS


def test_tool_calls_from_langchain_format_dicts_keep_args_dict():
    messages = [{"role": "ai", "content": "", "tool_calls": EXPECTED_CALLS}]
    assert tool_calls_from_messages(messages) == EXPECTED_CALLS


def test_tool_calls_from_state_dict_reads_its_messages():
    assert tool_calls_from_messages({"messages": langchain_history()}) == EXPECTED_CALLS


def test_tool_calls_skip_system_messages_and_empty_tool_call_lists():
    messages = [
        {"role": "system", "content": "rules"},
        {"role": "assistant", "content": "thinking", "tool_calls": []},
        AIMessage("", tool_calls=[]),
        AIMessage("", tool_calls=[WEATHER]),
    ]
    assert tool_calls_from_messages(messages) == [WEATHER]


def test_tool_call_without_id_gets_empty_id():
    messages = [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"function": {"name": "f", "arguments": "{}"}}],
        }
    ]
    assert tool_calls_from_messages(messages) == [{"name": "f", "args": {}, "id": ""}]


def test_unicode_arguments_decode_from_escaped_json():
    arguments = json.dumps({"city": "Zürich"})  # ASCII-escaped by default
    messages = [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"function": {"name": "f", "arguments": arguments}}],
        }
    ]
    assert tool_calls_from_messages(messages)[0]["args"] == {"city": "Zürich"}


def test_malformed_arguments_raise_format_error_naming_the_message_index():
    messages = [
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"function": {"name": "f", "arguments": "{city: SF}"}}],
        },
    ]
    with pytest.raises(
        TrajectoryFormatError, match=r"messages\[1\]\.tool_calls\[0\].*not valid JSON"
    ):
        tool_calls_from_messages(messages)


def test_arguments_that_are_not_an_object_raise_format_error():
    messages = [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"function": {"name": "f", "arguments": "[1, 2]"}}],
        }
    ]
    with pytest.raises(TrajectoryFormatError, match="decode to a list"):
        tool_calls_from_messages(messages)


# --------------------------------------------------------------------------- normalizer


def test_to_openai_messages_gives_the_same_dicts_for_every_input_shape():
    as_openai = to_openai_messages(langchain_history())
    assert to_openai_messages({"messages": langchain_history()}) == as_openai
    assert to_openai_messages({"outputs": {"messages": langchain_history()}}) == as_openai
    assert to_openai_messages(as_openai) == as_openai
    assert [m["role"] for m in as_openai] == [
        "system",
        "user",
        "assistant",
        "tool",
        "tool",
        "assistant",
    ]


def test_to_openai_messages_keeps_token_usage_of_ai_messages():
    message = AIMessage(
        "hi", usage_metadata={"input_tokens": 3, "output_tokens": 4, "total_tokens": 7}
    )
    openai_usage = {
        "role": "assistant",
        "content": "x",
        "usage": {"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3},
    }
    first, second = to_openai_messages([message, openai_usage])
    assert first["usage_metadata"] == {"input_tokens": 3, "output_tokens": 4, "total_tokens": 7}
    assert second["usage_metadata"] == {"input_tokens": 1, "output_tokens": 2, "total_tokens": 3}


def test_to_openai_messages_reads_the_latest_state_of_a_thread_trajectory():
    thread = ThreadTrajectory(
        thread_id="t",
        turns=[
            Turn(index=0, kind="input", status="completed", state={"messages": langchain_history()})
        ],
    )
    assert to_openai_messages(thread) == to_openai_messages(langchain_history())


def test_the_outputs_lg_eval_hands_over_are_read_through_their_thread():
    def thread(state):
        turn = Turn(index=0, kind="input", status="completed", state=state)
        return ThreadTrajectory(thread_id="t", turns=[turn])

    talking = thread({"messages": langchain_history()})
    read = to_openai_messages({"thread": talking, "trajectory": talking})
    assert read == to_openai_messages(langchain_history())
    silent = thread({"x": 4})  # a graph that keeps no messages: say so, not the dict's shape
    with pytest.raises(TrajectoryFormatError) as raised:
        to_openai_messages({"thread": silent, "trajectory": silent})
    assert str(raised.value) == (
        "outputs['thread'] is a ThreadTrajectory whose turns hold no state with 'messages' "
        "(its graph keeps none, or it was extracted without its state); pass the messages "
        "directly."
    )


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        (42, "outputs is a int"),
        ({"answer": "x"}, "no 'messages' or 'role'"),
        ([{"content": "no role"}], r"outputs\[0\] could not be read"),
        ([3.5], r"outputs\[0\] is a float"),
        (GraphTrajectory(steps=[["a"]]), "records node names but no messages"),
    ],
)
def test_bad_shapes_raise_format_error_naming_the_argument(value, fragment):
    with pytest.raises(TrajectoryFormatError, match=fragment):
        to_openai_messages(value)


def test_format_errors_are_value_errors():
    with pytest.raises(ValueError):
        to_openai_messages(42, argument="reference_outputs")


def test_none_is_an_empty_trajectory():
    assert to_openai_messages(None) == []


# --------------------------------------------------------------------------- ReAct steps


def test_react_steps_pair_parallel_calls_with_observations_by_id():
    trace = react_steps_from_messages(langchain_history())
    assert trace.query == "weather in SF and NYC?"
    assert [(s.index, s.action, s.args, s.observation) for s in trace.steps] == [
        (0, "get_weather", {"city": "SF"}, "sunny"),
        (1, "get_weather", {"city": "NYC"}, "rainy"),
    ]
    assert {s.thought for s in trace.steps} == {"I will check both."}
    assert trace.final_answer == "SF is sunny, NYC is rainy."
    assert trace.tools_used == ["get_weather", "get_weather"]


def test_react_steps_pair_out_of_order_tool_messages_by_id():
    history = langchain_history()
    history[3], history[4] = history[4], history[3]
    trace = react_steps_from_messages(history)
    assert [s.observation for s in trace.steps] == ["sunny", "rainy"]


def test_react_step_without_tool_message_has_no_observation():
    trace = react_steps_from_messages([HumanMessage("q"), AIMessage("", tool_calls=[WEATHER])])
    assert trace.steps[0].observation is None
    assert trace.final_answer is None


def test_react_steps_without_ids_pair_tool_messages_in_order():
    messages = [
        {"role": "user", "content": "q"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"function": {"name": "a", "arguments": "{}"}},
                {"function": {"name": "b", "arguments": "{}"}},
            ],
        },
        {"role": "tool", "content": "A"},
        {"role": "tool", "content": "B"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"function": {"name": "c", "arguments": "{}"}}],
        },
        {"role": "tool", "content": "C"},
    ]
    trace = react_steps_from_messages(messages)
    assert [(s.action, s.observation, s.message_index) for s in trace.steps] == [
        ("a", "A", 1),
        ("b", "B", 1),
        ("c", "C", 4),
    ]


def test_react_steps_ignore_interleaved_system_messages():
    history = langchain_history()
    history.insert(3, SystemMessage("reminder"))
    trace = react_steps_from_messages(history)
    assert [s.observation for s in trace.steps] == ["sunny", "rainy"]


# --------------------------------------------------------------------------- threads


def tool_graph(checkpointer=True):
    def agent(state):
        return {"messages": [AIMessage("", tool_calls=[WEATHER])]}

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_edge(START, "agent")
    return builder.compile(checkpointer=InMemorySaver() if checkpointer else None)


def test_tool_calls_from_thread_reads_the_current_state():
    graph = tool_graph()
    config = {"configurable": {"thread_id": "t1"}}
    graph.invoke({"messages": [("user", "hi")]}, config)
    graph.invoke({"messages": [("user", "again")]}, config)
    assert tool_calls_from_thread(graph, config) == [WEATHER, WEATHER]


def test_tool_calls_from_thread_respects_checkpoint_id():
    graph = tool_graph()
    config = {"configurable": {"thread_id": "t1"}}
    graph.invoke({"messages": [("user", "hi")]}, config)
    first = graph.get_state(config).config["configurable"]["checkpoint_id"]
    graph.invoke({"messages": [("user", "again")]}, config)
    pinned = {"configurable": {"thread_id": "t1", "checkpoint_id": first}}
    assert tool_calls_from_thread(graph, pinned) == [WEATHER]


async def test_async_twin_reads_the_same_calls():
    graph = tool_graph()
    config = {"configurable": {"thread_id": "t1"}}
    await graph.ainvoke({"messages": [("user", "hi")]}, config)
    assert await atool_calls_from_thread(graph, config) == [WEATHER]


def test_graph_without_checkpointer_raises_missing_checkpointer():
    with pytest.raises(MissingCheckpointerError, match="checkpointer="):
        tool_calls_from_thread(tool_graph(checkpointer=False), {"configurable": {"thread_id": "x"}})


@pytest.mark.parametrize("config", [{}, {"configurable": {}}, {"configurable": {"thread_id": ""}}])
def test_config_without_thread_id_raises_invalid_config(config):
    with pytest.raises(InvalidConfigError, match="thread_id"):
        tool_calls_from_thread(tool_graph(), config)


def test_unknown_thread_raises_thread_not_found():
    with pytest.raises(ThreadNotFoundError, match="'nobody'"):
        tool_calls_from_thread(tool_graph(), {"configurable": {"thread_id": "nobody"}})


async def test_unknown_thread_raises_in_the_async_twin_too():
    with pytest.raises(ThreadNotFoundError):
        await atool_calls_from_thread(tool_graph(), {"configurable": {"thread_id": "nobody"}})


def test_unknown_checkpoint_raises_checkpoint_not_found():
    graph = tool_graph()
    graph.invoke({"messages": [("user", "hi")]}, {"configurable": {"thread_id": "t1"}})
    config = {"configurable": {"thread_id": "t1", "checkpoint_id": "nope"}}
    with pytest.raises(CheckpointNotFoundError, match="'nope'"):
        tool_calls_from_thread(graph, config)


def test_state_without_messages_key_names_the_keys_it_has():
    graph = tool_graph()
    graph.invoke({"messages": [("user", "hi")]}, {"configurable": {"thread_id": "t1"}})
    with pytest.raises(TrajectoryFormatError, match="no 'history' key"):
        tool_calls_from_thread(graph, {"configurable": {"thread_id": "t1"}}, messages_key="history")


def test_inside_shared_conversions_the_same_messages_convert_once_into_independent_copies(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The scoring step's scope: one conversion per list of the same message objects, each
    caller given its own copy (changing one changes no other), equal to what a conversion
    outside the scope gives; other objects, or the same in another order, convert anew."""
    import lg_eval.messages as messages_module
    from lg_eval.messages import _shared_conversions

    history = langchain_history()
    expected = to_openai_messages(history)
    converted: list[int] = []
    convert = messages_module.convert_to_openai_messages

    def counting(items: list) -> list:
        converted.append(len(items))
        return convert(items)

    monkeypatch.setattr(messages_module, "convert_to_openai_messages", counting)
    with _shared_conversions():
        first = to_openai_messages(history)
        first[2]["tool_calls"][0]["function"]["name"] = "changed"
        first.append({"role": "user", "content": "more"})
        again = to_openai_messages({"messages": list(history)})  # a state, the same objects
        reordered = to_openai_messages(history[::-1])
        other = to_openai_messages(langchain_history())
    assert again == expected
    assert reordered == expected[::-1]
    assert other == expected
    assert converted == [len(history)] * 3  # history once, reversed once, the other objects once
    assert to_openai_messages(history) == expected  # outside: converted again
    assert converted == [len(history)] * 4
