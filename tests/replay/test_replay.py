"""Counterfactual replay over 200 production threads, on SQLite and the in-memory saver.

Expected trajectories come from LangGraph itself: each thread is played from scratch
on the new graph with the same input and answer, on a saver of its own, and extracted.
"""

from __future__ import annotations

import copy
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.types import Command

from lg_eval.errors import InvalidOptionError
from lg_eval.extract import extract_thread
from lg_eval.replay import ForkSpec, replay_threads
from tests.replay import helpers
from tests.replay.helpers import N_THREADS, answer, thread_id, waiting

EVALUATORS = ["tests.replay.helpers:nodes"]
CHANGED = [thread_id(i) for i in range(151, N_THREADS) if not waiting(i)]


def _dump(conn: sqlite3.Connection) -> list[Any]:
    return [
        list(conn.execute(f"SELECT * FROM {table} ORDER BY 1, 2, 3, 4, 5"))
        for table in ("checkpoints", "writes")
    ]


@pytest.fixture(scope="module")
def sqlite_world(tmp_path_factory: pytest.TempPathFactory) -> Any:
    path = tmp_path_factory.mktemp("prod") / "prod.sqlite"
    conn = sqlite3.connect(path, check_same_thread=False)
    saver = SqliteSaver(conn)
    helpers.populate(helpers.build(saver))
    yield saver, conn, path
    conn.close()


@pytest.fixture(scope="module")
def sqlite_replay(sqlite_world: Any) -> Any:
    saver, conn, _ = sqlite_world
    before = _dump(conn)
    result = replay_threads(helpers.build_v2, saver, evaluators=EVALUATORS, run="r1")
    return result, before, _dump(conn)


def _scratch_steps(build: Any, n: int) -> list[list[str]]:
    """The new graph played from scratch with thread n's input and answer."""
    graph = build(InMemorySaver())
    config: Any = {"configurable": {"thread_id": "x"}}
    graph.invoke({"messages": [HumanMessage(str(n))]}, config)
    if not waiting(n):
        graph.invoke(Command(resume=answer(n)), config)
    steps: list[list[str]] = extract_thread(graph, config).to_graph_trajectory().steps
    return steps


def test_sqlite_replay_reports_exactly_the_threads_the_change_affects(sqlite_replay: Any) -> None:
    result, _, _ = sqlite_replay
    assert len(result.threads) == N_THREADS
    assert result.changed_thread_ids == CHANGED
    assert result.counts() == {
        "replayed": N_THREADS - 29,
        "stopped": 29,  # the threads still waiting: v2 asks again, no recorded answer
        "error": 0,
        "skipped": 0,
        "changed": len(CHANGED),
    }


def test_sqlite_replay_trajectories_equal_the_new_graph_played_from_scratch(
    sqlite_replay: Any,
) -> None:
    result, _, _ = sqlite_replay
    for row in result.threads:
        n = int(row.thread_id[1:])
        assert row.old_steps == _scratch_steps(helpers.build, n), row.thread_id
        assert row.new_steps == _scratch_steps(helpers.build_v2, n), row.thread_id


def test_sqlite_replay_leaves_the_production_checkpoints_byte_identical(
    sqlite_replay: Any,
) -> None:
    _, before, after = sqlite_replay
    assert before == after
    assert len(before[0]) == 5 * N_THREADS - 29 * 2  # 5 root checkpoints, 3 when waiting


def test_replay_row_has_the_diff_and_the_score_deltas(sqlite_replay: Any) -> None:
    result, _, _ = sqlite_replay
    row = next(t for t in result.threads if t.thread_id == "t152")
    assert row.status == "replayed" and row.replay_thread_id == "replay:r1:t152"
    assert row.old_steps == [["__start__", "agent", "review", "__interrupt__"], ["agent"]]
    assert row.new_steps == [["__start__", "agent", "review", "__interrupt__"],
                             ["escalate", "agent"]]  # fmt: skip
    assert row.diff == ["+ escalate"]
    [score] = row.scores
    assert (score.key, score.old, score.new) == ("nodes", 1 / 5, 1 / 6)
    assert score.delta == pytest.approx(1 / 6 - 1 / 5)
    same = next(t for t in result.threads if t.thread_id == "t150")
    assert not same.changed and same.diff == [] and same.scores[0].delta == 0.0


def test_waiting_thread_stops_with_the_question_it_was_never_answered(sqlite_replay: Any) -> None:
    result, _, _ = sqlite_replay
    row = next(t for t in result.threads if t.thread_id == "t007")
    assert row.status == "stopped"
    assert row.reason == (
        "the new graph asks 'Refund 7?' at node 'review', which the original thread's humans "
        "never answered there"
    )


def test_memory_saver_replay_matches_and_leaves_storage_unchanged() -> None:
    saver = InMemorySaver()
    helpers.populate(helpers.build(saver))
    storage, writes = copy.deepcopy(dict(saver.storage)), copy.deepcopy(dict(saver.writes))
    result = replay_threads(helpers.build_v2, saver, evaluators=EVALUATORS)
    assert result.changed_thread_ids == CHANGED
    assert dict(saver.storage) == storage and dict(saver.writes) == writes


def test_new_question_stops_by_default_and_a_reviewer_answers_it(sqlite_world: Any) -> None:
    saver, _, _ = sqlite_world
    ids = ["t001", "t004"]
    stopped = replay_threads(helpers.build_v3, saver, thread_ids=ids, evaluators=EVALUATORS)
    assert [t.status for t in stopped.threads] == ["stopped", "stopped"]
    assert stopped.threads[0].reason is not None
    assert "'Sure?' at node 'confirm'" in stopped.threads[0].reason

    asked: list[list[str]] = []

    def reviewer(pending: list[Any]) -> str:
        asked.append([p.path for p in pending])
        return "yes"

    answered = replay_threads(
        helpers.build_v3, saver, thread_ids=ids, evaluators=EVALUATORS,
        on_new_question="reviewer", reviewer=reviewer,
    )  # fmt: skip
    assert [t.status for t in answered.threads] == ["replayed", "replayed"]
    assert asked == [["confirm"], ["confirm"]]
    assert [t.reviewer_answers for t in answered.threads] == [1, 1]
    assert answered.threads[0].new_steps == [
        ["__start__", "agent", "review", "__interrupt__"],
        ["confirm", "__interrupt__"],
        ["agent"],
    ]


def test_fork_before_node_and_turn_rerun_from_that_checkpoint(sqlite_world: Any) -> None:
    saver, _, _ = sqlite_world
    after_review = replay_threads(helpers.build_v2, saver, thread_ids=["t160", "t007"],
                                  fork="before:agent", evaluators=EVALUATORS)  # fmt: skip
    # the newest step running agent comes after the review, which v2 routes on: same nodes
    assert [t.changed for t in after_review.threads] == [False, False]
    assert after_review.threads[1].new_steps == [  # t160 (threads come in id order)
        ["__start__", "agent", "review", "__interrupt__"],
        [],
        ["agent"],
    ]  # the fork splits turn 1: the replay's continue is a run of its own
    review = replay_threads(helpers.build_v2, saver, thread_ids=["t160"], fork="before:review",
                            evaluators=EVALUATORS)  # fmt: skip
    assert review.threads[0].diff == ["+ escalate"]
    turn = replay_threads(helpers.build_v2, saver, thread_ids=["t160"], fork="turn:0",
                          evaluators=EVALUATORS)  # fmt: skip
    assert turn.threads[0].changed  # turn 0 is the new graph's from its input on
    assert turn.threads[0].new_steps == _scratch_steps(helpers.build_v2, 160)
    missing = replay_threads(helpers.build_v2, saver, thread_ids=["t001"], fork="turn:3",
                             evaluators=EVALUATORS)  # fmt: skip
    assert missing.threads[0].status == "skipped"
    assert missing.threads[0].reason == "the thread has no input 3 (turn:N counts inputs from 0)"


def test_replay_to_a_sqlite_target_keeps_the_forked_threads(
    sqlite_world: Any, tmp_path: Path
) -> None:
    saver, _, _ = sqlite_world
    target = f"sqlite:///{tmp_path / 'replay.sqlite'}"
    replay_threads(helpers.build_v2, saver, thread_ids=["t152"], target=target, run="k")
    conn = sqlite3.connect(tmp_path / "replay.sqlite")
    threads = {r[0] for r in conn.execute("SELECT DISTINCT thread_id FROM checkpoints")}
    conn.close()
    assert threads == {"replay:k:t152"}
    with pytest.raises(InvalidOptionError, match="exists already"):
        replay_threads(helpers.build_v2, saver, thread_ids=["t152"], target=target, run="k")


def test_bad_options_are_typed_errors(sqlite_world: Any) -> None:
    saver, _, _ = sqlite_world
    with pytest.raises(InvalidOptionError, match="before:NODE"):
        replay_threads(helpers.build_v2, saver, fork="after:agent")
    with pytest.raises(InvalidOptionError, match="another checkpointer"):
        replay_threads(helpers.build_v2, saver, target=saver)
    with pytest.raises(InvalidOptionError, match="needs reviewer="):
        replay_threads(helpers.build_v2, saver, on_new_question="reviewer")
    with pytest.raises(InvalidOptionError, match="reference"):
        replay_threads(helpers.build_v2, saver, evaluators=["trajectory_match"])


def test_fork_spec_parses_the_three_forms() -> None:
    assert ForkSpec.parse("last-interrupt") == ForkSpec("last-interrupt")
    assert ForkSpec.parse("turn:2") == ForkSpec("turn", turn=2)
    assert ForkSpec.parse("before:tools") == ForkSpec("before", node="tools")
    assert str(ForkSpec.parse("before:a:b")) == "before:a:b"
