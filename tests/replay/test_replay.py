"""Counterfactual replay over 200 production threads: ``lg-eval replay`` on SQLite, the
Python API on the in-memory saver.

Expected trajectories come from LangGraph itself: the new graph played from scratch with
the thread's input and answer on a saver of its own (:func:`helpers.scratch_steps`). The
changed threads follow from how the threads were built: v2 adds ``escalate`` after an
answered review of a refund over 150.
"""

from __future__ import annotations

import copy
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from typer.testing import CliRunner

from lg_eval.cli import app
from lg_eval.errors import InvalidOptionError
from lg_eval.play import SimulatedReviewer
from lg_eval.replay import ForkSpec, ReplayResult, replay_threads
from tests.replay import helpers
from tests.replay.helpers import N_THREADS, scratch_steps, thread_id, waiting

EVALUATORS = ["tests.replay.helpers:nodes"]
CHANGED = [thread_id(i) for i in range(151, N_THREADS) if not waiting(i)]
WAITING = [thread_id(i) for i in range(N_THREADS) if waiting(i)]
runner = CliRunner()


def _dump(path: Path) -> list[Any]:
    """Every row of the SQLite checkpointer's tables, in key order."""
    with sqlite3.connect(path) as conn:
        return [
            list(conn.execute(f"SELECT * FROM {table} ORDER BY 1, 2, 3, 4, 5"))
            for table in ("checkpoints", "writes")
        ]


@pytest.fixture(scope="module")
def prod(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A SQLite file of 200 production threads written by v1, and its saver."""
    path = tmp_path_factory.mktemp("prod") / "prod.sqlite"
    conn = sqlite3.connect(path, check_same_thread=False)
    conn.execute("PRAGMA synchronous=OFF")  # a test file: no fsync per checkpoint
    saver = SqliteSaver(conn)
    helpers.populate(helpers.build(saver))
    yield path, saver
    conn.close()


@pytest.fixture(scope="module")
def cli_replay(prod: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """``lg-eval replay`` of every production thread with v2: (exit, output, JSON, dumps)."""
    path, _ = prod
    out = tmp_path_factory.mktemp("out") / "replay.json"
    before = _dump(path)
    result = runner.invoke(app, [
        "replay", "--graph", "tests.replay.helpers:build_v2",
        "--checkpointer", f"sqlite:///{path}", "--evaluator", EVALUATORS[0],
        "--run-id", "r1", "--json", str(out), "--only-changed",
    ])  # fmt: skip
    return result, json.loads(out.read_text()), before, _dump(path)


@pytest.fixture(scope="module")
def memory_replay() -> tuple[ReplayResult, bool]:
    """``replay_threads`` over 200 production threads of an InMemorySaver, four at a time;
    whether its storage was equal before and after."""
    saver = InMemorySaver()
    helpers.populate(helpers.build(saver))
    storage, writes = copy.deepcopy(dict(saver.storage)), copy.deepcopy(dict(saver.writes))
    result = replay_threads(helpers.build_v2, saver, evaluators=EVALUATORS, run="m",
                            concurrency=4)  # fmt: skip
    return result, dict(saver.storage) == storage and dict(saver.writes) == writes


def test_cli_replay_reports_exactly_the_threads_the_change_affects(cli_replay: Any) -> None:
    result, document, _, _ = cli_replay
    assert result.exit_code == 0, result.output
    changed = [t["thread_id"] for t in document["threads"] if t["changed"]]
    assert changed == CHANGED
    assert len(document["threads"]) == N_THREADS
    stopped = [t["thread_id"] for t in document["threads"] if t["status"] == "stopped"]
    assert stopped == WAITING  # v2 asks them again; nobody ever answered
    assert f"replayed 200 threads: {len(CHANGED)} changed, 29 stopped, 0 errored, 0 skipped" in (
        result.output
    )
    assert "t152" in result.output and "t150" not in result.output  # --only-changed


def test_cli_replay_leaves_the_production_checkpoints_byte_identical(cli_replay: Any) -> None:
    _, _, before, after = cli_replay
    assert before == after
    assert len(before[0]) == 5 * N_THREADS - 2 * len(WAITING)  # 5 root checkpoints, 3 waiting


def test_cli_json_row_has_the_diff_and_the_score_delta(cli_replay: Any) -> None:
    _, document, _, _ = cli_replay
    row = next(t for t in document["threads"] if t["thread_id"] == "t152")
    assert row["replay_thread_id"] == "replay:r1:t152" and row["status"] == "replayed"
    assert row["diff"] == ["+ escalate"]
    assert row["old_steps"] == [["__start__", "agent", "review", "__interrupt__"], ["agent"]]
    assert row["new_steps"] == [["__start__", "agent", "review", "__interrupt__"],
                                ["escalate", "agent"]]  # fmt: skip
    assert row["scores"] == [
        {"evaluator": EVALUATORS[0], "key": "nodes", "old": 1 / 5, "new": 1 / 6, "reason": None,
         "delta": pytest.approx(1 / 6 - 1 / 5)}
    ]  # fmt: skip


def test_memory_replay_changes_the_same_threads_and_leaves_storage_unchanged(
    memory_replay: tuple[ReplayResult, bool],
) -> None:
    result, unchanged = memory_replay
    assert unchanged
    assert result.changed_thread_ids == CHANGED
    assert result.counts() == {"replayed": N_THREADS - len(WAITING), "stopped": len(WAITING),
                               "error": 0, "skipped": 0, "changed": len(CHANGED),
                               "question_changed": 0}  # fmt: skip


def test_old_and_new_trajectories_equal_each_graph_played_from_scratch(
    memory_replay: tuple[ReplayResult, bool],
) -> None:
    result, _ = memory_replay
    for row in result.threads:
        n = int(row.thread_id[1:])
        assert row.old_steps == scratch_steps(helpers.build, n), row.thread_id
        assert row.new_steps == scratch_steps(helpers.build_v2, n), row.thread_id


def test_unchanged_thread_has_no_diff_and_a_zero_delta(
    memory_replay: tuple[ReplayResult, bool],
) -> None:
    result, _ = memory_replay
    same = next(t for t in result.threads if t.thread_id == "t150")
    assert (same.changed, same.diff, same.unused_answers) == (False, [], 0)
    assert [(s.old, s.new, s.delta) for s in same.scores] == [(1 / 5, 1 / 5, 0.0)]


def test_waiting_thread_stops_with_the_question_it_was_never_answered(
    memory_replay: tuple[ReplayResult, bool],
) -> None:
    result, _ = memory_replay
    row = next(t for t in result.threads if t.thread_id == "t007")
    assert row.status == "stopped"
    assert row.reason == (
        "the new graph asks 'Refund 7?' at node 'review', which the original thread's humans "
        "never answered there"
    )


def test_new_question_stops_by_default_and_a_simulated_reviewer_answers_it(prod: Any) -> None:
    _, saver = prod
    ids = ["t001", "t004"]
    stopped = replay_threads(helpers.build_v3, saver, thread_ids=ids, evaluators=EVALUATORS)
    assert [t.status for t in stopped.threads] == ["stopped", "stopped"]
    assert stopped.threads[0].reason == (
        "the new graph asks 'Sure?' at node 'confirm', which the original thread's humans "
        "never answered there"
    )
    model = GenericFakeChatModel(messages=iter([AIMessage("sure"), AIMessage("not sure")]))
    reviewer = SimulatedReviewer(model, persona="a refunds clerk")
    answered = replay_threads(helpers.build_v3, saver, thread_ids=ids, evaluators=EVALUATORS,
                              on_new_question="reviewer", reviewer=reviewer)  # fmt: skip
    assert [t.status for t in answered.threads] == ["replayed", "replayed"]
    assert [t.reviewer_answers for t in answered.threads] == [1, 1]
    assert answered.threads[0].new_steps == [
        ["__start__", "agent", "review", "__interrupt__"],
        ["confirm", "__interrupt__"],
        ["agent"],
    ]
    assert answered.threads[0].diff == ["+ confirm", "+ __interrupt__"]


def test_fork_before_a_node_reruns_from_its_newest_step(prod: Any) -> None:
    _, saver = prod
    before_agent = replay_threads(helpers.build_v2, saver, thread_ids=["t160", "t007"],
                                  fork="before:agent", evaluators=EVALUATORS)  # fmt: skip
    # the newest step running agent comes after the review, which v2 routes on: same nodes
    assert [t.changed for t in before_agent.threads] == [False, False]
    assert before_agent.threads[1].new_steps == [  # t160 (threads come in id order)
        ["__start__", "agent", "review", "__interrupt__"],
        [],
        ["agent"],
    ]  # the fork point ends the resumed turn; the replay's continue is a run of its own
    before_review = replay_threads(helpers.build_v2, saver, thread_ids=["t160"],
                                   fork="before:review", evaluators=EVALUATORS)  # fmt: skip
    assert before_review.threads[0].diff == ["+ escalate"]


def test_fork_at_a_turn_plays_that_turn_from_its_input_on_the_new_graph(prod: Any) -> None:
    _, saver = prod
    turn = replay_threads(helpers.build_v2, saver, thread_ids=["t160"], fork="turn:1",
                          evaluators=EVALUATORS)  # fmt: skip
    assert turn.threads[0].new_steps == scratch_steps(helpers.build_v2, 160)
    assert turn.threads[0].changed
    missing = replay_threads(helpers.build_v2, saver, thread_ids=["t001"], fork="turn:4",
                             evaluators=EVALUATORS)  # fmt: skip
    assert missing.threads[0].status == "skipped"
    assert missing.threads[0].reason == "the thread has no input 4 (turn:N counts inputs from 1)"


def test_bad_options_are_typed_errors(prod: Any) -> None:
    _, saver = prod  # each refused before any thread is read
    with pytest.raises(InvalidOptionError, match="before:NODE"):
        replay_threads(helpers.build_v2, saver, fork="after:agent")
    with pytest.raises(InvalidOptionError, match="another checkpointer"):
        replay_threads(helpers.build_v2, saver, target=saver)
    path, _ = prod
    with pytest.raises(InvalidOptionError, match="another checkpointer"):  # the same file
        replay_threads(helpers.build_v2, saver, target=f"sqlite:///{path.parent}/./{path.name}")
    with pytest.raises(InvalidOptionError, match="needs reviewer="):
        replay_threads(helpers.build_v2, saver, on_new_question="reviewer")
    with pytest.raises(InvalidOptionError, match="reference"):
        replay_threads(helpers.build_v2, saver, evaluators=["trajectory_match"])
    with pytest.raises(
        InvalidOptionError, match="concurrency=0: input should be greater than or equal to 1"
    ):
        replay_threads(helpers.build_v2, saver, concurrency=0)


def test_cli_bad_fork_exits_2_naming_the_forms(prod: Any) -> None:
    path, _ = prod
    out = runner.invoke(app, [
        "replay", "--graph", "tests.replay.helpers:build_v2",
        "--checkpointer", f"sqlite:///{path}", "--fork", "after:x",
    ])  # fmt: skip
    assert out.exit_code == 2
    assert "fork 'after:x': use last-interrupt, turn:N" in out.output


def test_fork_spec_parses_the_three_forms() -> None:
    assert ForkSpec.parse("last-interrupt") == ForkSpec("last-interrupt")
    assert ForkSpec.parse("turn:2") == ForkSpec("turn", turn=2)
    assert ForkSpec.parse("before:tools") == ForkSpec("before", node="tools")
    assert str(ForkSpec.parse("before:a:b")) == "before:a:b"
