"""Trajectories rendered as prompt text, and their deterministic summaries."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from lg_eval._inputs import any_trajectory
from lg_eval._trajectory import (
    GraphTrajectory,
    InterruptRecord,
    Superstep,
    TaskRun,
    ThreadTrajectory,
    Turn,
)
from lg_eval.judges._render import render_fitted
from lg_eval.judges._text import collapse_runs
from lg_eval.messages import to_openai_messages
from tests.judges.threads import (
    RESEARCH_THREAD_TEXT,
    WEATHER_THREAD_TEXT,
    looping_thread,
    research_thread,
    weather_thread,
)


def test_thread_shows_resume_values_interrupts_and_results():
    assert render_fitted(weather_thread(), None).text == WEATHER_THREAD_TEXT


def test_thread_shows_subgraph_paths_errors_edits_and_static_breakpoints():
    assert render_fitted(research_thread(), None).text == RESEARCH_THREAD_TEXT


def test_flat_graph_trajectory_renders_agentevals_shape():
    flat = weather_thread().to_graph_trajectory()
    assert render_fitted(flat, None).text == (
        '<turn number="1">\n<input>\n'
        '{"__start__": {"messages": [{"role": "user", "content": "what\'s the weather in sf?"}]}}'
        "\n</input>\n<steps>\n__start__ -> agent -> tools -> __interrupt__\n</steps>\n"
        "<result>\n{}\n</result>\n</turn>\n\n"
        '<turn number="2">\n<input>\n__resuming__\n</input>\n<steps>\nagent\n</steps>\n'
        '<result>\n{"messages": [{"role": "assistant", "content": '
        '"The weather in sf is sunny and 75."}]}\n</result>\n</turn>'
    )


def test_messages_render_tool_calls_and_results_by_name():
    messages = to_openai_messages(
        [
            HumanMessage("weather in sf?"),
            AIMessage("", tool_calls=[{"name": "get_weather", "args": {"city": "sf"}, "id": "c1"}]),
            ToolMessage("sunny", tool_call_id="c1"),
            AIMessage("It is sunny."),
        ]
    )
    assert render_fitted(messages, None).text == (
        "user: weather in sf?\n"
        "assistant:\n"
        '  calls get_weather({"city": "sf"}) [c1]\n'
        "tool get_weather [c1]: sunny\n"
        "assistant: It is sunny."
    )


def test_text_within_budget_is_not_summarized():
    rendered = render_fitted(looping_thread(30), 10_000)
    assert rendered.summary is None
    assert rendered.text.count("step ") == 62


def test_repeated_loops_collapse_with_a_count_when_over_budget():
    rendered = render_fitted(looping_thread(30), 600)
    assert rendered.text.splitlines()[0] == (
        "[Summarized to fit a 600-character budget (1069 characters in full): "
        "1 repeated loop(s) shown once with a repeat count.]"
    )
    assert (
        "step 0: agent\nstep 1: tools\n"
        "[steps 0-59: the 2 step(s) above ran 30 times in a row; the repetitions are not shown]\n"
        "step 60: agent"
    ) in rendered.text
    assert rendered.summary == {
        "budget": 600,
        "original_chars": 1069,
        "rendered_chars": len(rendered.text),
        "actions": ["1 repeated loop(s) shown once with a repeat count"],
    }


def test_long_values_are_cut_with_a_marker():
    rendered = render_fitted(looping_thread(1, "x" * 5000), 1200)
    assert '"answer": "' + "x" * 800 + '…[cut 4200 chars]"' in rendered.text
    assert rendered.summary["actions"] == [
        "1 value(s) longer than 800 characters cut (marked '…[cut N chars]')"
    ]
    assert len(rendered.text) <= 1200


def test_middle_turns_are_omitted_last():
    flat = GraphTrajectory(
        inputs=[f"question {i}" for i in range(40)],
        results=[f"answer {i}" for i in range(40)],
        steps=[["agent"] for _ in range(40)],
    )
    rendered = render_fitted(flat, 2000)
    assert "[... turns 9-32 of 40 omitted ...]" in rendered.text
    assert "question 7" in rendered.text and "question 32" in rendered.text
    assert "question 20" not in rendered.text
    assert "turns 9-32 of 40 omitted" in rendered.summary["actions"]
    assert len(rendered.text) <= 2000


def test_summary_is_deterministic_and_within_budget_even_for_one_huge_value():
    huge = {"blob": ["y" * 50] * 5000}
    first, second = render_fitted(huge, 500), render_fitted(huge, 500)
    assert first == second
    assert len(first.text) <= 500
    assert first.text.startswith("[Summarized to fit a 500-character budget")


def test_tool_loops_in_messages_collapse_but_text_messages_never_do():
    calls = []
    for n in range(6):
        call = {"name": "search", "args": {"q": str(n)}, "id": f"c{n}"}
        calls += [AIMessage("", tool_calls=[call]), ToolMessage(f"r{n}", tool_call_id=f"c{n}")]
    messages = to_openai_messages([HumanMessage("go"), *calls, AIMessage("done")])
    rendered = render_fitted(messages, 350)
    assert rendered.text.splitlines()[1:] == [
        "user: go",
        "assistant:",
        '  calls search({"q": "0"}) [c0]',
        "tool search [c0]: r0",
        "[the 2 message(s) above repeat 5 more time(s) with the same tools; "
        "those repetitions are not shown]",
        "assistant: done",
    ]


def test_collapse_runs_prefers_the_longest_coverage():
    assert list(collapse_runs("xababab", lambda c: c)) == [(0, 1, 1), (1, 2, 3)]
    # greedy from the left: "aa" is taken before the later "abab" could be seen
    assert list(collapse_runs("aabab", lambda c: c)) == [(0, 1, 2), (2, 1, 1), (3, 1, 1), (4, 1, 1)]
    assert list(collapse_runs("ababab", lambda c: c)) == [(0, 2, 3)]
    assert list(collapse_runs("aaa", lambda c: None)) == [(0, 1, 1), (1, 1, 1), (2, 1, 1)]


def test_any_trajectory_accepts_graph_dicts_messages_and_plain_values():
    assert isinstance(
        any_trajectory({"inputs": [1], "results": [2], "steps": [[]]}), GraphTrajectory
    )
    assert any_trajectory({"messages": [{"role": "user", "content": "hi"}]}) == [
        {"role": "user", "content": "hi"}
    ]
    assert any_trajectory("free text") == "free text"
    assert any_trajectory(42) == 42


def test_interrupts_only_the_turn_recorded_and_fork_branches_are_shown():
    turn = Turn(
        index=0,
        kind="input",
        input="go",
        supersteps=[Superstep(step=0, tasks=[TaskRun(name="review", path="review")])],
        status="interrupted",
        interrupts=[InterruptRecord(id="x", value={"q": 1}, path="review")],
        branched=True,
    )
    text = render_fitted(ThreadTrajectory(thread_id="t", turns=[turn]), None).text
    assert text.startswith('<turn number="1" kind="input" status="interrupted" branched="true">')
    assert 'step 0: review\n__interrupt__ at review (id x): {"q": 1}\n</steps>' in text
