"""lg_eval.testing: assert_* messages, the lg_eval_play plugin (via pytester), log_feedback."""

from __future__ import annotations

from typing import Any

import pytest

from lg_eval.evaluators import graph_trajectory_strict_match
from lg_eval.testing import Player, assert_hitl, assert_tool_calls, assert_trajectory, log_feedback

pytest_plugins = ["pytester"]

GOOD = [["__start__", "agent", "tools", "__interrupt__"], ["agent"]]
WEATHER_TURNS = [
    {"input": {"messages": [{"role": "user", "content": "what's the weather in sf?"}]}},
    {"resume": "It's sunny and 75 degrees"},
]


@pytest.fixture(scope="module")
def weather() -> Any:
    return Player(target="graphs.weather:build")(WEATHER_TURNS).outputs


def test_assert_trajectory_passes_and_fails_with_a_turn_by_turn_diff(weather: Any) -> None:
    assert_trajectory(weather, [["__start__", "agent", "tools", "__interrupt__"], ["agent"]])
    assert_trajectory(
        weather, [["tools", "agent", "__start__", "__interrupt__"], ["agent"]], mode="unordered"
    )
    with pytest.raises(AssertionError) as failure:
        assert_trajectory(
            weather, [["__start__", "agent", "tools", "__interrupt__"], ["agent", "tools"]]
        )
    assert str(failure.value) == (
        "trajectory does not match (mode=strict); turns differing: 2\n"
        "  turn 1: ok        __start__ -> agent -> tools -> __interrupt__\n"
        "  turn 2: expected  agent -> tools\n"
        "          actual    agent"
    )
    with pytest.raises(AssertionError) as short:
        assert_trajectory(weather, {"steps": [["__start__", "agent"]]}, mode="superset")
    assert str(short.value) == (
        "trajectory does not match (mode=superset) (2 turns, expected 1); turns differing: 2\n"
        "  turn 1: ok        __start__ -> agent -> tools -> __interrupt__\n"
        "  turn 2: expected  (no turn)\n"
        "          actual    agent"
    )


def test_assert_tool_calls_message(weather: Any) -> None:
    assert_tool_calls(weather, ["get_weather"])
    assert_tool_calls(weather, [{"name": "get_weather", "args": {"city": "sf"}}])
    with pytest.raises(AssertionError) as failure:
        assert_tool_calls(weather, [{"name": "get_weather", "args": {"city": "nyc"}}, "get_time"])
    assert str(failure.value) == (
        "tool calls do not match (order=exact, args=subset, calls=executed)\n"
        "  !! call 1: expected get_weather(city='nyc')\n"
        "             actual   get_weather(city='sf')\n"
        "  !! call 2: expected get_time(...)\n"
        "             actual   (none)"
    )


def test_assert_hitl_message(weather: Any) -> None:
    assert_hitl(weather, [["tools"], []])
    assert_hitl(weather, [[{"path": "tools", "value": "Tell me the weather for sf"}], []])
    with pytest.raises(AssertionError) as failure:
        assert_hitl(weather, [[{"path": "tools", "value": "nyc?"}], ["agent"]])
    assert str(failure.value) == (
        "interrupts do not match; turns differing: 1, 2\n"
        "  turn 1: expected  tools asked 'nyc?'\n"
        "          actual    tools asked 'Tell me the weather for sf'\n"
        "  turn 2: expected  agent\n"
        "          actual    (no interrupt)"
    )


def test_log_feedback_hands_lg_eval_feedback_to_langsmith(
    monkeypatch: pytest.MonkeyPatch, weather: Any
) -> None:
    logged: list[dict[str, Any]] = []
    import langsmith.testing

    monkeypatch.setattr(langsmith.testing, "log_feedback", lambda **kw: logged.append(kw))
    wrong = {"steps": [["__start__", "agent"]]}
    log_feedback([graph_trajectory_strict_match(outputs=weather, reference_outputs=wrong)])
    assert logged == [
        {
            "key": "graph_trajectory_strict_match",
            "score": False,
            "comment": "Expected 1 turns, got 2.",
        }
    ]


PLUGIN_TEST = """
import pytest
from langsmith import testing as t
from lg_eval.evaluators import graph_trajectory_strict_match
from lg_eval.testing import assert_trajectory, log_feedback

TURNS = [
    {"input": {"messages": [{"role": "user", "content": "what's the weather in sf?"}]}},
    {"resume": "It's sunny and 75 degrees"},
]
GOOD = [["__start__", "agent", "tools", "__interrupt__"], ["agent"]]


def test_plays_on_a_fresh_thread(lg_eval_play):
    first = lg_eval_play(TURNS)
    second = lg_eval_play(TURNS)
    assert first.thread["thread_id"] != second.thread["thread_id"]
    assert first.output == "The weather in sf is sunny and 75 degrees."
    assert_trajectory(first.outputs, GOOD)


@pytest.mark.langsmith
def test_langsmith_pattern(lg_eval_play):
    played = lg_eval_play(TURNS)
    t.log_inputs({"turns": TURNS})
    t.log_outputs({"output": played.output})
    feedback = graph_trajectory_strict_match(outputs=played.outputs, reference_outputs=GOOD)
    log_feedback(feedback)
    assert_trajectory(played.outputs, GOOD)


def test_fails_readably(lg_eval_play):
    assert_trajectory(lg_eval_play(TURNS).outputs, [GOOD[0], ["agent", "tools"]])
"""


def test_plugin_fixture_and_langsmith_marker_with_tracking_disabled(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os
    from importlib.metadata import entry_points
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")]))
    monkeypatch.setenv("LANGSMITH_TEST_TRACKING", "false")
    pytester.makeini("[pytest]\nlg_eval_target = graphs.weather:build\n")
    pytester.makepyfile(test_user=PLUGIN_TEST)
    # Installed, the plugin loads through its pytest11 entry point; from a bare checkout, by name.
    installed = any(e.name == "lg_eval" for e in entry_points(group="pytest11"))
    result = pytester.runpytest_subprocess(*([] if installed else ["-p", "lg_eval.testing.plugin"]))
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(
        [
            "E *AssertionError: trajectory does not match (mode=strict); turns differing: 2",
            "E *  turn 1: ok        __start__ -> agent -> tools -> __interrupt__",
            "E *  turn 2: expected  agent -> tools",
            "E *          actual    agent",
        ]
    )
