"""Mid-case resume: a run killed inside a case goes on from the case's last finished turn.

The killed run is a real process (forked from this one, so it starts without importing
anything again) that SIGKILLs itself inside a node; the resumed run uses the same run id.
Every model and tool call is counted in a file the killed process cannot lose.
"""

from __future__ import annotations

import multiprocessing
import signal
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from lg_eval.experiments import open_store
from lg_eval.play import open_checkpointer, play_case
from tests.experiments import mid_case_run
from tests.experiments.graphs import starts
from tests.experiments.mid_case_run import CASES, Kill


def sqlite_url(folder: Path) -> str:
    return f"sqlite:///{folder / 'checkpoints.sqlite'}"


def essentials(folder: Path, run_id: str) -> list[tuple[Any, ...]]:
    """What must be equal between a killed-then-resumed run and an undisturbed one (all
    but interrupt ids: LangGraph derives them from checkpoint ids, new in every run)."""
    with open_store(folder / "results.sqlite") as store:
        run = store.load_run(run_id)
    return [
        (
            r.case_id,
            r.repetition,
            r.status,
            r.thread_id.split(":", 1)[1],
            r.trajectory,
            r.error,
            [
                (t.index, t.kind, t.sent, [(a["path"], a["value"]) for a in t.asked], t.error)
                for t in r.turns
            ],
            [(s.evaluator, s.key, s.score, s.passed) for s in r.scores],
        )
        for r in run.results
    ]


def every_call_once() -> Counter[str]:
    """The calls of an undisturbed run, derived from the script: per turn that runs the
    graph, the model; then the tool, unless the turn stops at ``ask`` for a human."""
    calls: Counter[str] = Counter()
    for case, turns in CASES.items():
        text = ""
        for turn in turns:
            if isinstance(turn, str) or "input" in turn:
                text = turn if isinstance(turn, str) else turn["input"]
                calls[f"model:{case}:{text}"] += 1
                if text.startswith("approve"):
                    continue  # waits for the human; the resume turn runs the tool
            calls[f"tool:{case}:{text}"] += 1
    return calls


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[Any, ...]]:
    """An undisturbed run to compare with (each call exactly once)."""
    folder = tmp_path_factory.mktemp("clean")
    mid_case_run.main(folder, "clean", sqlite_url(folder))
    assert starts(folder / "calls.log") == every_call_once()
    return essentials(folder, "clean")


def killed_run(folder: Path, checkpointer: str, kill: Kill) -> None:
    context = multiprocessing.get_context("fork")
    process = context.Process(target=mid_case_run.main, args=(folder, "r1", checkpointer, kill))
    process.start()
    process.join(120)
    assert process.exitcode == -signal.SIGKILL


def resumed(folder: Path, checkpointer: str, kill: Kill) -> Counter[str]:
    """Kill a run at ``kill``, resume it; the calls both made beyond one undisturbed run."""
    killed_run(folder, checkpointer, kill)
    with open_store(folder / "results.sqlite") as store:
        stored = [r.case_id for r in store.load_run("r1").results]
    assert stored == list(CASES)[: list(CASES).index(kill[0])]  # the cases before it
    mid_case_run.main(folder, "r1", checkpointer)
    return starts(folder / "calls.log") - every_call_once()


@pytest.mark.parametrize("where", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_a_run_killed_inside_a_turn_plays_no_finished_turn_again(
    tmp_path: Path, request: pytest.FixtureRequest, clean: list[Any], where: str
) -> None:
    """kill -9 in the tool of turn 2 of 4: turns 0 and 1 are not played again; the cut
    turn is played again from its start (its model call and the killed tool call are the
    only calls made twice); the results equal an undisturbed run's."""
    url = sqlite_url(tmp_path)
    if where == "postgres":
        request.getfixturevalue("postgres_saver")  # empties the shared tables
        url = request.getfixturevalue("pg_dsn")
    extra = resumed(tmp_path, url, ("chat-1", "refund it", "tool"))
    assert extra == Counter({"model:chat-1:refund it": 1, "tool:chat-1:refund it": 1})
    assert essentials(tmp_path, "r1") == clean


def test_a_resume_turn_cut_by_a_kill_is_answered_again_where_it_began(
    tmp_path: Path, clean: list[Any]
) -> None:
    """kill -9 in the tool the human's answer (turn 2) let run: the input turns before it
    are not played again, the answer is sent again to the interrupt it answered, and only
    the killed tool call runs twice."""
    extra = resumed(tmp_path, sqlite_url(tmp_path), ("approval", "approve refund", "tool"))
    assert extra == Counter({"tool:approval:approve refund": 1})
    assert essentials(tmp_path, "r1") == clean
    with open_store(tmp_path / "results.sqlite") as store:
        approval = store.load_run("r1").results[2]
    assert [(t.kind, t.sent) for t in approval.turns[1:3]] == [
        ("input", {"case": "approval", "text": "approve refund"}),
        ("resume", "yes"),
    ]
    assert [a["value"] for a in approval.turns[1].asked] == [{"question": "approve refund"}]


def test_a_finished_case_played_again_with_resume_runs_nothing(tmp_path: Path) -> None:
    """``play_case(..., resume=True)`` on a thread whose turns all finished plays none of
    them and returns the records the first play returned, the human's question included."""
    case = mid_case_run.dataset().cases[2]
    with open_checkpointer(sqlite_url(tmp_path)) as saver:
        graph = mid_case_run.build(tmp_path, None)(saver)
        first = play_case(graph, case, thread_id="t")
        calls = starts(tmp_path / "calls.log")
        again = play_case(graph, case, thread_id="t", resume=True)
    assert starts(tmp_path / "calls.log") == calls
    assert again == first
    assert [ask.value for ask in again.turns[1].asked] == [{"question": "approve refund"}]
