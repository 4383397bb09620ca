"""The turn player on the real example graphs, on SQLite files in tmp_path."""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import START, MessagesState, StateGraph

from graphs import approval, flaky, research, weather
from graphs import breakpoint as static_breakpoint
from lg_eval import extract_thread
from lg_eval.datasets import Case
from lg_eval.errors import InvalidOptionError, ScriptMismatchError
from lg_eval.play import (
    PendingInterrupt,
    PlayedCase,
    aopen_checkpointer,
    aplay_case,
    play_case,
    resolve_target,
)
from lg_eval.play._models import Saver

QUESTION = {"messages": [{"role": "user", "content": "what's the weather in sf?", "id": "h1"}]}
WEATHER_STEPS = [["__start__", "agent", "tools", "__interrupt__"], ["agent"]]
SOURCES = ["https://example.org/x/1"]


@pytest.fixture
def saver(tmp_path: Path) -> Iterator[SqliteSaver]:
    with SqliteSaver.from_conn_string(str(tmp_path / "threads.sqlite")) as s:
        yield s


def case(*turns: dict[str, Any], case_id: str = "c") -> Case:
    return Case.model_validate({"id": case_id, "turns": list(turns)})


def steps(graph: Any, thread_id: str = "t") -> list[list[str]]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        thread = extract_thread(graph, {"configurable": {"thread_id": thread_id}})
    return thread.to_graph_trajectory().steps


def test_input_then_resume_plays_the_weather_hitl_thread(saver: Saver) -> None:
    graph = weather.build(checkpointer=saver)
    played = play_case(
        graph, case({"input": QUESTION}, {"resume": weather.HUMAN_ANSWER}), thread_id="t"
    )
    assert steps(graph) == WEATHER_STEPS
    assert [(t.kind, t.sent) for t in played.turns] == [
        ("input", QUESTION),
        ("resume", weather.HUMAN_ANSWER),
    ]
    (asked,) = played.turns[0].asked
    assert (asked.path, asked.value) == ("tools", "Tell me the weather for sf")
    assert played.turns[1].asked == []
    assert played.config == {"configurable": {"thread_id": "t"}}
    assert played.error is None and played.completed
    values = graph.get_state({"configurable": {"thread_id": "t"}}).values
    assert values["messages"][-1].content == weather.FINAL_ANSWER


async def test_async_player_gives_the_same_thread_as_the_sync_one(tmp_path: Path) -> None:
    script = case({"input": QUESTION}, {"resume": weather.HUMAN_ANSWER})
    with SqliteSaver.from_conn_string(str(tmp_path / "sync.sqlite")) as sync_saver:
        sync_graph = weather.build(checkpointer=sync_saver)
        sync_played = play_case(sync_graph, script, thread_id="t")
        sync_steps = steps(sync_graph)
    async with aopen_checkpointer(f"sqlite:///{tmp_path / 'async.sqlite'}") as async_saver:
        async_graph = weather.build(checkpointer=async_saver)
        async_played = await aplay_case(async_graph, script, thread_id="t")
        state = await async_graph.aget_state({"configurable": {"thread_id": "t"}})
    with SqliteSaver.from_conn_string(str(tmp_path / "async.sqlite")) as reread:
        async_steps = steps(weather.build(checkpointer=reread))
    assert async_steps == sync_steps == WEATHER_STEPS
    assert state.values["messages"][-1].content == weather.FINAL_ANSWER
    assert [(t.kind, t.sent, [a.path for a in t.asked]) for t in async_played.turns] == [
        (t.kind, t.sent, [a.path for a in t.asked]) for t in sync_played.turns
    ]


def test_resume_by_node_answers_parallel_interrupts_by_node(saver: Saver) -> None:
    graph = approval.build(checkpointer=saver)
    played = play_case(
        graph,
        case(
            {"input": {"request": "r"}},
            {
                "resume_by_node": {
                    "legal_review": {"approved": True, "comment": "ok"},
                    "finance_review": {"approved": False, "comment": "too much"},
                }
            },
        ),
        thread_id="t",
    )
    assert sorted(a.path for a in played.turns[0].asked) == ["finance_review", "legal_review"]
    ids = {a.path: a.id for a in played.turns[0].asked}
    assert played.turns[1].sent == {
        ids["legal_review"]: {"approved": True, "comment": "ok"},
        ids["finance_review"]: {"approved": False, "comment": "too much"},
    }
    values = graph.get_state({"configurable": {"thread_id": "t"}}).values
    assert values["decision"] == "rejected"
    assert steps(graph) == [
        ["__start__", "draft", "finance_review", "__interrupt__", "legal_review", "__interrupt__"],
        ["finalize"],
    ]


def test_resume_by_node_names_subgraph_nodes_by_their_full_path(saver: Saver) -> None:
    graph = research.build(checkpointer=saver)
    played = play_case(
        graph,
        case(
            {"input": {"topic": "x", "deep": True}},
            {"resume_by_node": {"researcher:approve_sources": SOURCES}},
            {"resume_by_node": {"researcher:deep_dive:verify": "holds"}},
        ),
        thread_id="t",
    )
    assert [[a.path for a in t.asked] for t in played.turns] == [
        ["researcher:approve_sources"],
        ["researcher:deep_dive:verify"],
        [],
    ]
    values = graph.get_state({"configurable": {"thread_id": "t"}}).values
    assert (values["approved_sources"], values["verdict"]) == (SOURCES, "holds")


def test_resume_by_node_with_an_unknown_path_lists_the_pending_paths(saver: Saver) -> None:
    graph = research.build(checkpointer=saver)
    script = case(
        {"input": {"topic": "x", "deep": True}}, {"resume_by_node": {"approve_sources": SOURCES}}
    )
    with pytest.raises(ScriptMismatchError) as info:
        play_case(graph, script, thread_id="t")
    assert str(info.value) == (
        "turns[1] (resume_by_node): no interrupt is pending at 'approve_sources'; the pending ones "
        "are at 'researcher:approve_sources'"
    )
    assert info.value.turn == 1
    assert isinstance(info.value.played, PlayedCase)


def approve_legal_reject_finance(pending: Sequence[PendingInterrupt]) -> dict[str, Any]:
    """A resume_fn for the tests: answers by reviewer, keyed by interrupt id."""
    return {a.id: {"approved": a.value["reviewer"] == "legal", "comment": a.path} for a in pending}


def answer_everything(pending: Sequence[PendingInterrupt]) -> Any:
    return {"approved": True, "comment": f"{len(pending)} pending"}


def test_resume_fn_gets_the_pending_interrupts_and_may_return_an_id_map(saver: Saver) -> None:
    graph = approval.build(checkpointer=saver)
    script = case(
        {"input": {"request": "r"}},
        {"resume_fn": "tests.play.test_player:approve_legal_reject_finance"},
    )
    play_case(graph, script, thread_id="t")
    values = graph.get_state({"configurable": {"thread_id": "t"}}).values
    assert values["legal"] == {"approved": True, "comment": "legal_review"}
    assert values["finance"] == {"approved": False, "comment": "finance_review"}
    assert values["decision"] == "rejected"


def test_resume_fn_returning_one_value_answers_every_pending_interrupt(saver: Saver) -> None:
    graph = approval.build(checkpointer=saver)
    script = case(
        {"input": {"request": "r"}}, {"resume_fn": "tests.play.test_player:answer_everything"}
    )
    play_case(graph, script, thread_id="t")
    values = graph.get_state({"configurable": {"thread_id": "t"}}).values
    assert values["legal"] == values["finance"] == {"approved": True, "comment": "2 pending"}


def test_resume_fn_from_a_dataset_without_code_is_refused(saver: Saver) -> None:
    from lg_eval.datasets import dataset_from_dict

    dataset = dataset_from_dict(
        {
            "name": "remote",
            "cases": [
                {
                    "id": "c",
                    "turns": [
                        {"input": {"request": "r"}},
                        {"resume_fn": "tests.play.test_player:answer_everything"},
                    ],
                }
            ],
        }
    )
    graph = approval.build(checkpointer=saver)
    with pytest.raises(InvalidOptionError, match=r"turns\[1\]\.resume_fn .* does not allow code"):
        play_case(graph, dataset.cases[0], thread_id="t")
    assert graph.get_state({"configurable": {"thread_id": "t"}}).created_at is None
    graph = approval.build(checkpointer=saver)
    play_case(graph, dataset.cases[0], thread_id="t2", allow_code=True)
    values = graph.get_state({"configurable": {"thread_id": "t2"}}).values
    assert values["decision"] == "approved"


def test_continue_goes_on_after_a_static_breakpoint(saver: Saver) -> None:
    graph = static_breakpoint.build(checkpointer=saver)
    played = play_case(graph, case({"input": {"request": "r"}}, {"continue": True}), thread_id="t")
    assert played.turns[0].next_nodes == ["send_email"]
    assert played.turns[0].asked == []
    assert (played.turns[1].kind, played.turns[1].sent) == ("continue", None)
    assert steps(graph) == [["__start__", "draft_email", "__interrupt__"], ["send_email"]]


def test_update_edits_the_state_at_a_breakpoint_without_invoking(saver: Saver) -> None:
    graph = static_breakpoint.build(checkpointer=saver)
    played = play_case(
        graph,
        case(
            {"input": {"request": "r"}},
            {"update": {"values": {"email": "Edited."}, "as_node": "draft_email"}},
            {"continue": True},
        ),
        thread_id="t",
    )
    assert played.turns[1].sent == {"values": {"email": "Edited."}, "as_node": "draft_email"}
    assert played.turns[1].next_nodes == ["send_email"]
    values = graph.get_state({"configurable": {"thread_id": "t"}}).values
    assert values["status"] == "sent: Edited."
    assert steps(graph) == [["__start__", "draft_email", "__interrupt__"], ["send_email"]]


def test_an_error_is_recorded_on_its_turn_and_continue_retries(saver: Saver) -> None:
    graph = flaky.build(checkpointer=saver)
    played = play_case(graph, case({"input": {"query": "q"}}, {"continue": True}), thread_id="t")
    assert played.turns[0].error == "FlakyServiceError: search service unavailable (attempt 1)"
    assert played.turns[0].next_nodes == ["fetch"]
    assert played.turns[1].error is None
    assert played.error is None
    assert steps(graph) == [["__start__", "prepare", "fetch"], ["fetch", "answer"]]


def test_an_error_not_followed_by_continue_ends_the_case_with_it(saver: Saver) -> None:
    graph = flaky.build(checkpointer=saver, failures=2)
    played = play_case(
        graph,
        case({"input": {"query": "q"}}, {"continue": True}, {"input": {"query": "never sent"}}),
        thread_id="t",
    )
    assert [t.error for t in played.turns] == [
        "FlakyServiceError: search service unavailable (attempt 1)",
        "FlakyServiceError: search service unavailable (attempt 2)",
    ]
    assert played.error == "FlakyServiceError: search service unavailable (attempt 2)"
    assert not played.completed


def test_an_interrupt_the_script_does_not_answer_is_a_mismatch(saver: Saver) -> None:
    graph = weather.build(checkpointer=saver)
    with pytest.raises(ScriptMismatchError) as info:
        play_case(graph, case({"input": QUESTION}), thread_id="t")
    assert str(info.value) == (
        "after turns[0] the graph asks 'Tell me the weather for sf' at node 'tools' but the "
        "script has no more turns"
    )
    assert info.value.turn == 0


def test_a_new_input_while_the_graph_waits_for_a_human_is_a_mismatch(saver: Saver) -> None:
    graph = approval.build(checkpointer=saver)
    with pytest.raises(ScriptMismatchError) as info:
        play_case(
            graph, case({"input": {"request": "r"}}, {"input": {"request": "again"}}), thread_id="t"
        )
    assert str(info.value) == (
        "turns[1] (input): the graph is waiting for a human (it asks 'Is this draft legally "
        "sound?' at node 'legal_review'; 'Is this draft within budget?' at node "
        "'finance_review') but the script sends a new input"
    )


def test_a_resume_when_the_graph_finished_is_a_mismatch(saver: Saver) -> None:
    graph = weather.build(checkpointer=saver)
    script = case({"input": QUESTION}, {"resume": "sunny"}, {"resume": "again?"})
    with pytest.raises(ScriptMismatchError) as info:
        play_case(graph, script, thread_id="t")
    assert str(info.value) == (
        "turns[2] (resume): the graph is not waiting for a human (it finished)"
    )
    assert [t.kind for t in info.value.played.turns] == ["input", "resume"]


def test_a_resume_at_a_breakpoint_is_a_mismatch(saver: Saver) -> None:
    graph = static_breakpoint.build(checkpointer=saver)
    with pytest.raises(ScriptMismatchError) as info:
        play_case(graph, case({"input": {"request": "r"}}, {"resume": "go"}), thread_id="t")
    assert str(info.value) == (
        "turns[1] (resume): the graph is not waiting for a human (it is paused before 'send_email')"
    )


def test_a_breakpoint_left_at_the_end_of_the_script_is_a_mismatch(saver: Saver) -> None:
    graph = static_breakpoint.build(checkpointer=saver)
    with pytest.raises(ScriptMismatchError) as info:
        play_case(graph, case({"input": {"request": "r"}}), thread_id="t")
    assert str(info.value) == (
        "after turns[0] the graph is paused before 'send_email' but the script has no more turns"
    )


def test_continue_while_the_graph_waits_for_a_human_is_a_mismatch(saver: Saver) -> None:
    graph = weather.build(checkpointer=saver)
    with pytest.raises(ScriptMismatchError) as info:
        play_case(graph, case({"input": QUESTION}, {"continue": True}), thread_id="t")
    assert str(info.value) == (
        "turns[1] (continue): the graph is waiting for a human (it asks 'Tell me the weather for "
        "sf' at node 'tools'); answer it with a resume"
    )


def test_continue_after_a_finished_run_is_a_mismatch(saver: Saver) -> None:
    graph = static_breakpoint.build(checkpointer=saver)
    script = case({"input": {"request": "r"}}, {"continue": True}, {"continue": True})
    with pytest.raises(ScriptMismatchError) as info:
        play_case(graph, script, thread_id="t")
    assert str(info.value) == "turns[2] (continue): there is nothing to continue (it finished)"


def test_a_resume_before_any_input_is_a_mismatch(saver: Saver) -> None:
    graph = weather.build(checkpointer=saver)
    with pytest.raises(ScriptMismatchError) as info:
        play_case(graph, case({"resume": "x"}), thread_id="t")
    assert str(info.value) == (
        "turns[0] (resume): the graph is not waiting for a human (it has not started: no input "
        "was sent yet)"
    )


def test_a_used_thread_is_refused(saver: Saver) -> None:
    graph = static_breakpoint.build(checkpointer=saver)
    script = case({"input": {"request": "r"}}, {"continue": True})
    play_case(graph, script, thread_id="t")
    with pytest.raises(InvalidOptionError, match="thread 't' already has checkpoints"):
        play_case(graph, script, thread_id="t")


def test_the_simulated_reviewer_answers_resume_reviewer_turns(saver: Saver) -> None:
    seen: list[list[str]] = []

    def reviewer(pending: list[PendingInterrupt]) -> Any:
        seen.append([a.path for a in pending])
        return "Foggy, 60 degrees"

    graph = weather.build(checkpointer=saver)
    script = case({"input": QUESTION}, {"resume": {"reviewer": True}})
    played = play_case(graph, script, thread_id="t", reviewer=reviewer)
    assert seen == [["tools"]]
    assert played.turns[1].sent == "Foggy, 60 degrees"
    with pytest.raises(InvalidOptionError, match="no reviewer= was given"):
        play_case(weather.build(checkpointer=saver), script, thread_id="t2")


async def test_an_async_reviewer_is_awaited_by_aplay_case(tmp_path: Path) -> None:
    async def reviewer(pending: list[PendingInterrupt]) -> Any:
        return "Windy"

    script = case({"input": QUESTION}, {"resume": {"reviewer": True}})
    async with aopen_checkpointer("memory://") as memory:
        played = await aplay_case(
            weather.build(checkpointer=memory), script, thread_id="t", reviewer=reviewer
        )
        assert played.turns[1].sent == "Windy"
        with pytest.raises(InvalidOptionError, match="is async; play the case with aplay_case"):
            play_case(weather.build(checkpointer=memory), script, thread_id="u", reviewer=reviewer)


def test_resolved_targets_play_the_same(saver: Saver) -> None:
    graph = resolve_target("graphs.weather:build", saver)
    play_case(graph, case({"input": QUESTION}, {"resume": "sunny"}), thread_id="t")
    assert steps(graph) == WEATHER_STEPS


class Unprintable(RuntimeError):
    def __str__(self) -> str:
        raise ValueError("no text")


def test_an_error_whose_text_cannot_be_shown_is_recorded_by_its_type(saver: Saver) -> None:
    def fails(state: MessagesState) -> dict[str, Any]:
        raise Unprintable

    builder = StateGraph(MessagesState)
    builder.add_node("fails", fails)
    builder.add_edge(START, "fails")
    played = play_case(
        builder.compile(checkpointer=saver), case({"input": QUESTION}), thread_id="t"
    )
    assert played.error == played.turns[0].error
    assert played.error == "Unprintable: Unprintable()"  # its repr, as every error text
