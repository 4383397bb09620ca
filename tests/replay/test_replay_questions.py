"""A recorded answer is reused only for the question it answered.

The production human approved ``book_flight(AF123)``; the new graph's model proposes
``book_flight(BA456)``. The recorded approval must not book BA456: the thread stops there
(or the reviewer answers), the result says which questions changed, and the booking tool
of the new graph never runs. The tool writes each booking to a ledger file, so "never
runs" is read from the file, not from lg_eval. When the new graph asks the same thing
(the same call, a different description), the approval is reused and the tool runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.types import Command
from typer.testing import CliRunner

from lg_eval.cli import app
from lg_eval.errors import InvalidOptionError
from lg_eval.play import PendingInterrupt, QuestionChange
from lg_eval.replay import ReplayResult, replay_threads
from tests.replay.flights import (
    APPROVE,
    BATCHED_NODE,
    PER_CALL_NODE,
    REQUEST,
    booked,
    build,
)

DESCRIPTION = "Tool execution requires approval\n\nTool: book_flight\nArgs: {'flight': '%s'}"
REVIEW = [{"action_name": "book_flight", "allowed_decisions": ["approve", "reject"]}]


def batched_question(flight: str) -> dict[str, Any]:
    """The HITLRequest the middleware raises for ``book_flight(flight)`` (its source)."""
    request = {
        "name": "book_flight",
        "args": {"flight": flight},
        "description": DESCRIPTION % flight,
    }
    return {"action_requests": [request], "review_configs": REVIEW}


def per_call_question(flight: str) -> dict[str, Any]:
    """The ToolApprovalRequest the middleware raises per gated call in per_call mode."""
    return {"type": "tool_approval", "tool_call_id": "call_book", "name": "book_flight",
            "args": {"flight": flight}, "description": DESCRIPTION % flight}  # fmt: skip


MODES = {
    "batched": (BATCHED_NODE, APPROVE, batched_question),
    "per_call": (PER_CALL_NODE, {"type": "approve"}, per_call_question),
}


def production(saver: Any, ledger: Path, mode: str) -> None:
    """Thread ``trip``: the human asks for a flight, approves AF123, and it is booked."""
    graph = build(saver, flight="AF123", ledger=ledger, mode=mode)
    config: Any = {"configurable": {"thread_id": "trip"}}
    graph.invoke({"messages": [("human", REQUEST)]}, config)
    graph.invoke(Command(resume=MODES[mode][1]), config)
    assert booked(ledger) == ["AF123"]


def replay(saver: Any, ledger: Path, mode: str, flight: str, **options: Any) -> ReplayResult:
    """Replay ``trip`` from its first input with a graph whose model proposes ``flight``."""
    return replay_threads(
        lambda checkpointer: build(checkpointer, flight=flight, ledger=ledger, mode=mode),
        saver,
        baseline=lambda checkpointer: build(checkpointer, flight="AF123", ledger=ledger, mode=mode),
        fork="turn:1",
        evaluators=["redundancy"],
        run="r",
        **options,
    )


@pytest.mark.parametrize("mode", ["batched", "per_call"])
def test_an_approval_of_another_flight_is_not_sent_and_the_tool_never_runs(
    tmp_path: Path, mode: str
) -> None:
    node, answer, question = MODES[mode]
    saver, old, new = InMemorySaver(), tmp_path / "old", tmp_path / "new"
    production(saver, old, mode)
    result = replay(saver, new, mode, "BA456")
    [row] = result.threads
    assert booked(new) == [] and booked(old) == ["AF123"]
    assert row.status == "stopped"
    assert row.questions_changed == [
        QuestionChange(
            node=node, answered=question("AF123"), asked=question("BA456"), answer=answer
        )
    ]
    assert row.reason == (
        f"question changed at node {node!r}: the recorded answer was given to "
        'book_flight({"flight": "AF123"}); the graph now asks book_flight({"flight": "BA456"})'
    )
    assert (row.unused_answers, row.reviewer_answers) == (0, 0)
    assert result.counts()["question_changed"] == 1
    assert result.counts()["stopped"] == 1


def test_the_reviewer_answers_a_changed_question_when_asked_to(tmp_path: Path) -> None:
    saver, old, new = InMemorySaver(), tmp_path / "old", tmp_path / "new"
    production(saver, old, "batched")
    seen: list[list[PendingInterrupt]] = []

    def reviewer(pending: list[PendingInterrupt]) -> Any:
        seen.append(pending)
        return {"decisions": [{"type": "reject", "message": "Not that one."}]}

    result = replay(saver, new, "batched", "BA456", on_new_question="reviewer", reviewer=reviewer)
    [row] = result.threads
    assert booked(new) == []
    assert [[(a.path, a.value) for a in pending] for pending in seen] == [
        [(BATCHED_NODE, batched_question("BA456"))]
    ]
    assert (row.status, row.reviewer_answers) == ("replayed", 1)
    assert [(c.answered, c.asked) for c in row.questions_changed] == [
        (batched_question("AF123"), batched_question("BA456"))
    ]
    assert row.reason is not None and row.reason.endswith(
        'the graph now asks book_flight({"flight": "BA456"}) (the reviewer answered it)'
    )
    assert result.counts()["question_changed"] == 1


@pytest.mark.parametrize("mode", ["batched", "per_call"])
def test_the_same_question_gets_the_recorded_answer_and_the_tool_runs(
    tmp_path: Path, mode: str
) -> None:
    saver, old, new = InMemorySaver(), tmp_path / "old", tmp_path / "new"
    production(saver, old, mode)
    result = replay(saver, new, mode, "AF123")
    [row] = result.threads
    assert (row.status, row.reason, row.questions_changed) == ("replayed", None, [])
    assert booked(new) == ["AF123"]
    assert result.counts()["question_changed"] == 0


def test_a_new_description_of_the_same_call_is_the_same_question(tmp_path: Path) -> None:
    saver, old, new = InMemorySaver(), tmp_path / "old", tmp_path / "new"
    production(saver, old, "batched")
    result = replay_threads(
        lambda checkpointer: build(checkpointer, flight="AF123", ledger=new, prefix="Approve?"),
        saver,
        fork="turn:1",
        evaluators=["redundancy"],
    )
    assert [(t.status, t.questions_changed) for t in result.threads] == [("replayed", [])]
    assert booked(new) == ["AF123"]


def test_a_named_thread_that_does_not_exist_is_refused(tmp_path: Path) -> None:
    saver = InMemorySaver()
    production(saver, tmp_path / "old", "batched")
    with pytest.raises(InvalidOptionError) as info:
        replay_threads(
            lambda checkpointer: build(checkpointer, flight="AF123", ledger=tmp_path / "new"),
            saver,
            thread_ids=["trip", "nope"],
        )
    assert str(info.value) == (
        "thread_ids (--thread): no thread 'nope' in the checkpointer InMemorySaver; name "
        "threads it holds."
    )


def test_cli_replay_of_a_thread_that_does_not_exist_exits_2_with_one_line(tmp_path: Path) -> None:
    path = tmp_path / "prod.sqlite"
    with SqliteSaver.from_conn_string(str(path)) as saver:
        production(saver, tmp_path / "old", "batched")
    out = CliRunner().invoke(app, [
        "replay", "--graph", "tests.replay.helpers:build_v2", "--checkpointer",
        f"sqlite:///{path}", "--thread", "nope",
    ])  # fmt: skip
    assert out.exit_code == 2
    [line] = out.output.splitlines()
    assert line.endswith(
        f"thread_ids (--thread): no thread 'nope' in the checkpointer sqlite:///{path}; "
        "name threads it holds."
    )


def test_a_reused_fork_still_says_which_question_changed(tmp_path: Path) -> None:
    saver, old, new = InMemorySaver(), tmp_path / "old", tmp_path / "new"
    production(saver, old, "batched")
    target = f"sqlite:///{tmp_path / 'replay.sqlite'}"
    first = replay(saver, new, "batched", "BA456", target=target)
    again = replay(saver, new, "batched", "BA456", target=target)
    assert [t.reused for t in (*first.threads, *again.threads)] == [False, True]
    assert again.threads[0].questions_changed == first.threads[0].questions_changed
    assert again.threads[0].questions_changed[0].asked == batched_question("BA456")
    assert (again.threads[0].status, again.threads[0].reason) == (
        first.threads[0].status,
        first.threads[0].reason,
    )
    assert booked(new) == []
