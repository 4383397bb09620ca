"""Mid-case resume: a run killed inside a case goes on from the case's last finished turn.

The killed run is a real process (forked from this one, so it starts without importing
anything again) that SIGKILLs itself inside a node; the resumed run uses the same run id.
Every model and tool call is counted in a file the killed process cannot lose.
"""

from __future__ import annotations

import json
import multiprocessing
import signal
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from lg_eval.datasets import Case
from lg_eval.experiments import open_store
from lg_eval.play import aplay_case, open_checkpointer, play_case
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
    # cases before it, in order; the writer may not have committed the last ones yet (a
    # finished case waits up to 50 ms for others to share its commit): they are in flight
    before = list(CASES)[: list(CASES).index(kill[0])]
    assert stored == before[: len(stored)]
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


def test_a_resume_turn_killed_before_its_first_checkpoint_is_played_from_the_start(
    tmp_path: Path, clean: list[Any]
) -> None:
    """kill -9 in ``ask`` right after it took the answer of turn 2: the thread's latest
    checkpoint is still turn 1's, with the answer on it, which a resume turn whose node asks
    again also leaves. That is the documented worst case: the thread is cleared and the case
    played from its start, so the calls of the turns before the kill run twice."""
    extra = resumed(tmp_path, sqlite_url(tmp_path), ("approval", "approve refund", "ask"))
    assert extra == Counter(
        {"model:approval:hello": 1, "tool:approval:hello": 1, "model:approval:approve refund": 1}
    )
    assert essentials(tmp_path, "r1") == clean


def test_a_finished_case_played_again_with_resume_runs_nothing(tmp_path: Path) -> None:
    """``play_case(..., resume=True)`` on a thread whose turns all finished plays none of
    them and returns the records the first play returned, the human's question included."""
    case = mid_case_run.dataset().cases[2]
    with open_checkpointer(sqlite_url(tmp_path)) as saver:
        graph = mid_case_run.build(tmp_path, None)(saver)
        first = play_case(graph, case, thread_id="t")
        calls = starts(tmp_path / "calls.log")
        again = play_case(graph, case, thread_id="t", resume=True)
        carried = [json.loads(c.metadata["lg_eval_turns"]) for c in saver.list(None)]
    assert starts(tmp_path / "calls.log") == calls
    assert again == first
    assert [ask.value for ask in again.turns[1].asked] == [{"question": "approve refund"}]
    # Each turn's checkpoints carry the records since the last input (linear, not all).
    assert max(len(records) for records in carried) == 2


def test_a_first_turn_cut_by_a_kill_is_played_again_on_a_cleared_thread(
    tmp_path: Path, clean: list[Any]
) -> None:
    """Nothing precedes turn 0 to send it again at: the thread is cleared and the case
    played from its start, which re-executes only the cut turn's calls."""
    extra = resumed(tmp_path, sqlite_url(tmp_path), ("chat-1", "hello", "tool"))
    assert extra == Counter({"model:chat-1:hello": 1, "tool:chat-1:hello": 1})
    assert essentials(tmp_path, "r1") == clean


async def test_the_async_player_resumes_a_finished_thread_alike(
    tmp_path: Path, async_sqlite_saver: Any
) -> None:
    """``aplay_case(..., resume=True)`` reads the thread through the async saver methods."""
    case = mid_case_run.dataset().cases[2]
    graph = mid_case_run.build(tmp_path, None)(async_sqlite_saver)
    first = await aplay_case(graph, case, thread_id="t")
    calls = starts(tmp_path / "calls.log")
    assert await aplay_case(graph, case, thread_id="t", resume=True) == first
    assert starts(tmp_path / "calls.log") == calls


INT64 = st.integers(min_value=-(2**63), max_value=2**63 - 1)
"""Integers a checkpoint can hold (LangGraph's msgpack serializer refuses wider ones)."""
JSON = st.recursive(
    st.none() | st.booleans() | INT64 | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=6,
)
ANSWERS = st.text(max_size=8) | INT64 | st.lists(JSON, min_size=1, max_size=3)
"""What a scripted ``resume:`` may answer (not null: that sends no answer)."""


@pytest.fixture(scope="module")
def memory_graph(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Path]:
    folder = tmp_path_factory.mktemp("memory")
    return mid_case_run.build(folder, None)(InMemorySaver()), folder / "calls.log"


@settings(max_examples=25, deadline=None)
@given(text=st.text(max_size=12), extra=JSON, answer=ANSWERS)
def test_what_finished_turns_sent_survives_the_checkpoint_metadata(
    memory_graph: tuple[Any, Path], text: str, extra: Any, answer: Any
) -> None:
    """For any JSON input and human answer, a finished case played again with
    ``resume=True`` returns exactly the records of its first play, and runs nothing."""
    graph, log = memory_graph
    case = Case.model_validate(
        {
            "id": "any",
            "turns": [
                {"input": {"case": "any", "text": f"approve {text}", "extra": extra}},
                {"resume": answer},
            ],
        }
    )
    thread_id = str(uuid.uuid4())
    first = play_case(graph, case, thread_id=thread_id)
    calls = starts(log)
    assert play_case(graph, case, thread_id=thread_id, resume=True) == first
    assert starts(log) == calls


async def test_the_async_player_sends_a_cut_turn_again_alike(tmp_path: Path) -> None:
    """The cut turn's checkpoint walk and its re-send run through the async saver methods
    (``aget_tuple``, ``ainvoke``): after a kill in turn 2's tool, ``aplay_case`` on an
    ``AsyncSqliteSaver`` re-runs that turn only and ends where an undisturbed play ends."""
    killed_run(tmp_path, sqlite_url(tmp_path), ("chat-1", "refund it", "tool"))
    before = starts(tmp_path / "calls.log")
    case = mid_case_run.dataset().cases[1]
    async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "checkpoints.sqlite")) as saver:
        graph = mid_case_run.build(tmp_path, None)(saver)
        played = await aplay_case(graph, case, thread_id="r1:chat-1:0:1", resume=True)
        state = await graph.aget_state({"configurable": {"thread_id": "r1:chat-1:0:1"}})
    assert starts(tmp_path / "calls.log") - before == Counter(
        f"{node}:chat-1:{text}" for text in ("refund it", "thanks") for node in ("model", "tool")
    )
    assert [(t.index, t.sent["text"]) for t in played.turns] == list(enumerate(mid_case_run.CHAT))
    assert state.values["log"] == [
        line for text in mid_case_run.CHAT for line in (f"model saw {text}", f"tool ran for {text}")
    ]
