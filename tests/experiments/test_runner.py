"""The runner end to end: statuses, scores, built-in checks, retries, timeouts, repetitions,
resuming after a kill."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from graphs import approval
from lg_eval.evaluators import _registry as registry
from lg_eval.experiments import (
    CaseResult,
    ResultStore,
    arun_experiment,
    mean_scores,
    open_store,
    pass_at_k,
    pass_hat_k,
    run_experiment,
)
from lg_eval.experiments._database import sqlite_connection
from lg_eval.experiments._run import BatchWriter
from lg_eval.reports import build_report
from tests.experiments import crash_run
from tests.experiments.conftest import USER, ask, dataset
from tests.experiments.graphs import build_agent, build_echo, starts

ROOT = Path(__file__).resolve().parents[2]

PAYMENT = [{"input": {"amount": 120}}, {"resume": "ops-card"}, {"resume": True}]
PAYMENT_STEPS = [
    ["__start__", "confirm_payment", "__interrupt__"],
    ["confirm_payment", "__interrupt__"],
    ["pay"],
]


def scores(result: Any) -> list[tuple[str, str, Any, bool | None]]:
    return [(s.evaluator, s.key, s.score, s.passed) for s in result.scores]


def payment_dataset() -> Any:
    return dataset(
        "payments",
        [
            {
                "id": "approved",
                "turns": PAYMENT,
                "expected": {"trajectory": {"steps": PAYMENT_STEPS}},
            },
            {
                "id": "skipped-pay",
                "turns": PAYMENT,
                "expected": {"trajectory": {"steps": [*PAYMENT_STEPS[:2], []]}, "max_steps": 2},
            },
            {"id": "half-played", "turns": PAYMENT[:2]},
        ],
    )


def test_a_run_stores_each_case_with_its_status_and_scores(where):
    run = run_experiment(approval.build_double_check, payment_dataset(), run_id="r", **where)
    with open_store(where["store"]) as store:
        stored = store.load_run("r")
    assert stored == run
    assert [(r.case_id, r.status) for r in stored.results] == [
        ("approved", "passed"),
        ("skipped-pay", "failed"),
        ("half-played", "error"),
    ]
    approved, skipped, half = stored.results
    assert scores(approved) == [
        ("graph_trajectory_strict_match", "graph_trajectory_strict_match", True, True)
    ]
    assert scores(skipped) == [
        ("graph_trajectory_strict_match", "graph_trajectory_strict_match", False, False),
        ("max_steps", "max_steps", False, False),
    ]
    assert approved.trajectory == PAYMENT_STEPS
    assert [(t.kind, t.sent) for t in approved.turns] == [
        ("input", {"amount": 120}),
        ("resume", "ops-card"),
        ("resume", True),
    ]
    assert half.error.startswith("ScriptMismatchError: after turns[1] the graph asks")
    assert [t.kind for t in half.turns] == ["input", "resume"]
    assert stored.info.status == "finished"
    assert (stored.info.cases, stored.info.target) == (3, "graphs.approval:build_double_check")
    assert stored.info.config["store"] == where["store"]


def test_graph_tool_call_and_text_evaluators_each_find_their_field(where):
    expected = {
        "trajectory": {"steps": [["__start__", "agent", "tools", "answer"]]},
        "tool_calls": [{"name": "lookup", "args": {"query": "answer"}}],
        "output": {"contains": ["42", "ask"]},
    }
    cases = [
        {"id": "builtins", "turns": USER, "expected": expected},
        {
            "id": "listed",
            "turns": USER,
            "expected": {**expected, "output": "the answer is 42; ask bob@example.com."},
            "evaluators": ["graph_trajectory_strict_match", "tool_selection_f1", "exact_match"],
        },
    ]
    run = run_experiment(build_agent, dataset("agent", cases), **where)
    builtins, listed = run.results
    assert scores(builtins) == [
        ("graph_trajectory_strict_match", "graph_trajectory_strict_match", True, True),
        ("tool_sequence", "tool_sequence_in_order_match", True, True),
        ("keywords", "keywords", 1.0, True),
    ]
    assert scores(listed) == [
        ("graph_trajectory_strict_match", "graph_trajectory_strict_match", True, True),
        ("tool_selection_f1", "tool_selection_f1", 1.0, True),
        ("exact_match", "exact_match", True, True),
    ]
    assert (builtins.status, listed.status) == ("passed", "passed")
    assert (builtins.tokens, builtins.model_calls, builtins.cost) == (84, 2, None)


def test_a_graph_error_the_script_does_not_continue_past_is_an_error(where):
    echo = build_echo()
    cases = [{"id": "boom", "turns": ask("x", fail="value"), "expected": {"output": "X"}}]
    (result,) = run_experiment(echo, dataset("e", cases), **where).results
    assert (result.status, result.attempts, result.scores) == ("error", 1, [])
    assert result.error == "turns[0] raised ValueError: bad input; the script did not continue."
    assert echo.calls.counts["x"] == 1


def test_infrastructure_errors_are_retried_on_a_new_thread(where):
    echo = build_echo()
    cases = [
        {"id": "locked", "turns": ask("db", fail="operational-once"), "expected": {"output": "DB"}}
    ]
    (result,) = run_experiment(echo, dataset("e", cases), **where).results
    assert (result.status, result.attempts, result.thread_id) == (
        "passed",
        2,
        f"{result.run_id}:locked:0:2",
    )
    assert echo.calls.counts["db"] == 2


def test_without_retries_an_infrastructure_error_is_an_error(where):
    cases = [{"id": "locked", "turns": ask("db", fail="operational-once")}]
    (result,) = run_experiment(build_echo(), dataset("e", cases), retries=0, **where).results
    assert (result.status, result.attempts) == ("error", 1)
    assert "OperationalError: database is locked" in result.error


def test_a_low_score_is_never_retried(where):
    echo = build_echo()
    cases = [{"id": "wrong", "turns": ask("a"), "expected": {"output": "B"}}]
    (result,) = run_experiment(echo, dataset("e", cases), retries=3, **where).results
    assert (result.status, result.attempts, echo.calls.counts["a"]) == ("failed", 1, 1)


def test_an_evaluator_that_raises_makes_the_case_an_error(where, monkeypatch):
    def explodes(*, outputs, **_):
        raise ValueError("cannot read this thread")

    monkeypatch.setitem(registry._REGISTRY, "explodes", lambda: explodes)
    cases = [{"id": "c", "turns": ask("a"), "evaluators": ["explodes"]}]
    (result,) = run_experiment(build_echo(), dataset("e", cases), **where).results
    assert result.status == "error"
    assert result.scores[0].error == "ValueError: cannot read this thread"


def test_an_evaluator_the_case_cannot_feed_gives_no_verdict_and_is_not_called(where):
    """tool_sequence on a case that states no tool calls (lg_eval.experiments.reference_gap)."""
    cases = [{"id": "c", "turns": ask("a"), "evaluators": ["tool_sequence"]}]
    (result,) = run_experiment(build_echo(), dataset("e", cases), **where).results
    assert result.status == "failed"  # no verdict at all: not passed
    (row,) = result.scores
    assert (row.key, row.score, row.passed, row.error) == (
        "tool_sequence_strict_match",
        None,
        None,
        None,
    )
    assert row.comment == (
        "tool_sequence needs expected.tool_calls (the calls, by name and partial args), "
        "which the case does not state."
    )


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_case_past_the_timeout_is_cancelled_and_nothing_is_written_later(where, mode):
    cases = [
        {"id": "slow", "turns": ask("slow", delay=0.6), "expected": {"output": "SLOW"}},
        {"id": "fast", "turns": ask("fast"), "expected": {"output": "FAST"}},
    ]
    options = dict(run_id="t", timeout=0.2, **where)
    if mode == "sync":
        run = run_experiment(build_echo(), dataset("e", cases), **options)
    else:
        run = asyncio.run(arun_experiment(build_echo(), dataset("e", cases), **options))
    slow, fast = run.results
    assert (slow.status, slow.latency_s, slow.scores) == ("timeout", 0.2, [])
    assert slow.error == "The case ran past the 0.2 s timeout and was cancelled."
    assert fast.status == "passed"
    time.sleep(0.6)  # the abandoned case has finished by now
    with open_store(where["store"]) as store:
        assert store.load_run("t") == run


def test_repetitions_give_pass_at_k_and_pass_hat_k(where):
    cases = [
        {"id": "flaky", "turns": ask("ok?"), "expected": {"output": "yes"}},
        {"id": "steady", "turns": ask("a"), "expected": {"output": "A"}},
    ]
    run = run_experiment(build_echo(), dataset("e", cases), repetitions=2, concurrency=1, **where)
    assert [(r.case_id, r.repetition, r.status) for r in run.results] == [
        ("flaky", 0, "passed"),
        ("flaky", 1, "failed"),
        ("steady", 0, "passed"),
        ("steady", 1, "passed"),
    ]
    assert pass_at_k(run) == {"flaky": True, "steady": True}
    assert pass_hat_k(run) == {"flaky": False, "steady": True}
    summary = build_report(run).summary
    assert (summary.pass_rate, summary.pass_at_k, summary.pass_hat_k) == (0.75, 1.0, 0.5)
    assert mean_scores(run) == {"exact_match": 0.75}


def test_thresholds_decide_numeric_scores_and_the_gate_uses_the_pass_rate(where):
    cases = [
        {
            "id": "half",
            "turns": ask("red fox"),
            "expected": {"output": {"contains": ["RED", "blue"]}},
        },
        {"id": "full", "turns": ask("red"), "expected": {"output": {"contains": ["red"]}}},
    ]
    data = dataset("e", cases)
    strict = run_experiment(build_echo(), data, fail_under=0.9, **where)
    assert [(r.status, r.score_of("keywords")) for r in strict.results] == [
        ("failed", 0.5),
        ("passed", 1.0),
    ]
    assert (strict.pass_rate, strict.gate_failed) == (0.5, True)
    lenient = run_experiment(
        build_echo(), data, thresholds={"keywords": 0.5}, fail_under=0.9, **where
    )
    assert [r.status for r in lenient.results] == ["passed", "passed"]
    assert (lenient.pass_rate, lenient.gate_failed) == (1.0, False)
    assert lenient.info.config["thresholds"] == {"keywords": 0.5}


def test_progress_is_reported_as_each_case_finishes(where):
    seen: list[tuple[int, int, int, int]] = []
    cases = [
        {"id": "a", "turns": ask("a"), "expected": {"output": "A"}},
        {"id": "b", "turns": ask("b"), "expected": {"output": "nope"}},
    ]
    run_experiment(
        build_echo(),
        dataset("e", cases),
        concurrency=1,
        progress=lambda *a: seen.append(a),
        **where,
    )
    assert seen == [(1, 2, 1, 0), (2, 2, 1, 1)]


def test_redaction_removes_a_pattern_from_everything_stored(where, tmp_path):
    turns = [{"input": {"messages": [{"role": "user", "content": "mail bob@example.com"}]}}]
    cases = [
        {"id": "c", "turns": turns, "expected": {"output": "wrong"}},
        {"id": "boom", "turns": ask("mail bob@example.com", fail="value")},
    ]
    data = dataset("agent", cases)

    def stored_text(**options: Any) -> str:
        run = run_experiment(build_agent, data, **options, **where)
        with open_store(where["store"]) as store:
            text = store.load_run(run.info.run_id).model_dump_json()
        raw = b"".join(p.read_bytes() for p in tmp_path.glob("results.sqlite*"))
        return text + raw.decode("utf-8", "replace")

    assert "bob@example.com" in stored_text()
    (tmp_path / "results.sqlite").unlink()
    redacted = stored_text(redact=[r"[\w.]+@example\.com"])
    assert "bob@example.com" not in redacted
    assert "mail [REDACTED]" in redacted


def test_the_target_may_come_from_the_dataset_file(where, tmp_path):
    path = tmp_path / "data.yaml"
    path.write_text(
        "name: from-file\ngraph: graphs.approval:build_double_check\ncases:\n"
        "  - id: approved\n    turns:\n      - input: {amount: 120}\n"
        "      - resume: ops-card\n      - resume: true\n    expected: {max_steps: 3}\n"
    )
    (result,) = run_experiment(None, path, **where).results
    assert (result.status, result.scores[0].key) == ("passed", "max_steps")


@pytest.mark.parametrize("stop", [signal.SIGKILL, signal.SIGINT], ids=["kill-9", "ctrl-c"])
def test_a_stopped_run_resumes_rerunning_at_most_the_cases_in_flight(tmp_path, stop):
    """kill -9 or Ctrl-C mid-run, then the same run id: every case stored once, equal to an
    uninterrupted run, and no more cases started twice than can be in flight: one per
    worker.

    The child is stopped at a known point, not after a while: the cases from
    ``crash_run.HELD_FROM`` on wait for a file, and the test signals once the cases before
    them are stored and the first held ones have started."""
    log, go = tmp_path / "starts.log", tmp_path / "go"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [
        sys.executable, "-m", "tests.experiments.crash_run", str(tmp_path), "r1"
    ]  # fmt: skip
    child = subprocess.Popen(command, cwd=tmp_path, env=env)
    held = {f"word {n}" for n in range(crash_run.HELD_FROM, crash_run.HELD_FROM + 2)}
    wait_until(lambda: held <= set(starts(log)) and stored_count(tmp_path) == crash_run.HELD_FROM,
               child)  # fmt: skip
    child.send_signal(stop)  # SIGKILL: no cleanup of any kind; SIGINT: Ctrl-C
    if stop == signal.SIGINT:  # its held cases are let go once the run is recorded
        wait_until(lambda: stored_run(tmp_path).info.status == "interrupted", child)
        go.touch()
    assert child.wait(timeout=300) != 0
    interrupted = stored_run(tmp_path)
    assert len(interrupted.results) == crash_run.HELD_FROM
    assert interrupted.info.status == ("running" if stop == signal.SIGKILL else "interrupted")

    go.touch()
    crash_run.main(tmp_path, "r1")  # the rerun
    started = starts(log)
    crash_run.main(tmp_path, "clean")  # an uninterrupted run to compare with
    with open_store(tmp_path / "results.sqlite") as store:
        resumed, clean = store.load_run("r1"), store.load_run("clean")
    assert [r.case_id for r in resumed.results] == [f"case-{n:02d}" for n in range(60)]
    assert essentials(resumed) == essentials(clean)
    assert [r.status for r in resumed.results].count("passed") == 40
    assert resumed.info.status == "finished"
    assert set(started) == {f"word {n}" for n in range(crash_run.CASES)}
    restarted = sorted(text for text, count in started.items() if count > 1)
    assert len(restarted) <= crash_run.CONCURRENCY, restarted


def stored_run(folder: Path) -> Any:
    """Run ``r1`` as the crash test's store holds it now (None before it is recorded)."""
    if not (folder / "results.sqlite").exists():
        return None
    with open_store(folder / "results.sqlite") as store:
        return store.load_run("r1") if store.run_info("r1") is not None else None


def stored_count(folder: Path) -> int:
    run = stored_run(folder)
    return 0 if run is None else len(run.results)


def wait_until(condition: Any, child: subprocess.Popen[Any]) -> None:
    """Return once ``condition()`` holds (a guard against a hang gives up after 300 s)."""
    deadline = time.monotonic() + 300
    while not condition():
        assert child.poll() is None, "the child exited before the test could stop it"
        assert time.monotonic() < deadline, "gave up waiting for the child"
        time.sleep(0.01)


def essentials(run: Any) -> list[tuple[Any, ...]]:
    """What must be equal between an interrupted-then-resumed run and an uninterrupted one."""
    return [
        (r.case_id, r.repetition, r.status, r.trajectory, r.error, r.turns, scores(r))
        for r in run.results
    ]


class _GatedStore(ResultStore):
    """A real SQLite store whose first write waits for ``gate``; records each batch size."""

    def __init__(self, path: Path) -> None:
        super().__init__(sqlite_connection(path), url=str(path))
        self.entered, self.gate = threading.Event(), threading.Event()
        self.batches: list[int] = []

    def write(self, results: Any) -> None:
        self.entered.set()
        if not self.batches:
            self.gate.wait(10)
        self.batches.append(len(results))
        super().write(results)


def _result(case_id: str) -> CaseResult:
    return CaseResult(run_id="w", case_id=case_id, status="passed")


def test_cases_finishing_during_a_commit_share_the_next_commit(tmp_path):
    store = _GatedStore(tmp_path / "results.sqlite")
    writer = BatchWriter(store)
    first = writer.put(0, _result("a"))
    assert store.entered.wait(10)  # the writer is committing case a alone
    later = [writer.put(n, _result(case_id)) for n, case_id in enumerate("bcd", start=1)]
    assert not first.done()
    store.gate.set()
    for future in (first, *later):
        future.result(timeout=10)
    writer.close()
    assert store.batches == [1, 3]
    store.close()


def test_a_case_future_is_settled_only_once_its_rows_are_committed(tmp_path):
    store = _GatedStore(tmp_path / "results.sqlite")
    writer = BatchWriter(store)
    done = writer.put(0, _result("a"))
    time.sleep(0.05)
    assert not done.done()
    assert store.finished("w") == {}
    store.gate.set()
    done.result(timeout=10)
    with sqlite3.connect(tmp_path / "results.sqlite") as conn:  # another connection sees it
        rows = conn.execute("SELECT case_id, status FROM lg_eval_cases").fetchall()
    assert rows == [("a", "passed")]
    writer.close()
    store.close()


def test_cases_put_together_are_committed_together_under_one_future(tmp_path):
    store = _GatedStore(tmp_path / "results.sqlite")
    writer = BatchWriter(store)
    done = writer.put_many([(n, _result(case_id)) for n, case_id in enumerate("abc")])
    assert store.entered.wait(10)
    assert not done.done()
    store.gate.set()
    done.result(timeout=10)
    writer.close()
    assert (store.batches, sorted(store.finished("w"))) == ([3], [("a", 0), ("b", 0), ("c", 0)])
    store.close()


class _OrderStore(ResultStore):
    """A real SQLite store that records the cases of each commit as it is made."""

    def __init__(self, path: Path, events: list[str]):
        super().__init__(sqlite_connection(path), url=str(path))
        self.events = events
        self.commits: list[list[str]] = []

    def write(self, results: Any) -> None:
        super().write(results)
        self.commits.append([result.case_id for _, result in results])
        self.events.extend(f"stored {result.case_id}" for _, result in results)


def _playing(events: list[str], wait_for: dict[str, str]) -> Any:
    """A one-node graph whose node logs ``play <text>``; the case ``text`` in ``wait_for``
    then waits (up to a minute) until the event named there is logged, and logs whether it
    came."""
    from langgraph.graph import StateGraph
    from typing_extensions import TypedDict

    class State(TypedDict):
        text: str

    def play(state: State) -> State:
        events.append(f"play {state['text']}")
        awaited = wait_for.get(state["text"])
        if awaited is not None:
            deadline = time.monotonic() + 60
            while awaited not in events and time.monotonic() < deadline:
                time.sleep(0.005)
            events.append(f"{state['text']} saw {awaited}" if awaited in events else "timeout")
        return state

    builder = StateGraph(State)
    builder.add_node("play", play)
    builder.set_entry_point("play")
    return builder.compile()


def test_a_finished_case_is_committed_while_its_worker_plays_the_next(tmp_path):
    # b plays until a is stored: a case that comes alone is committed at once, while its
    # worker is busy with the next (it does not wait for b to share a commit)
    events: list[str] = []
    graph = _playing(events, {"b": "stored a"})
    data = dataset("order", [{"id": text, "turns": ask(text)} for text in "ab"])
    store = _OrderStore(tmp_path / "results.sqlite", events)
    run = run_experiment(graph, data, store=store, checkpointer="memory://", concurrency=1)
    store.close()
    assert [r.case_id for r in run.results] == ["a", "b"]
    assert sorted(events) == ["b saw stored a", "play a", "play b", "stored a", "stored b"]
    assert events[0] == "play a" and events[-2:] == ["b saw stored a", "stored b"]
    assert store.commits == [["a"], ["b"]]


def test_quick_cases_share_commits_of_up_to_sixteen(tmp_path, monkeypatch):
    # the first case is committed at once; after it, with a linger no case outlasts, only the
    # group size and the run's end cut the commits: 40 quick cases at concurrency 1 are
    # stored in four transactions, not forty
    from lg_eval.experiments import _run

    original = _run.BatchWriter.__init__

    def patient(self: Any, store: Any, **options: Any) -> None:
        original(self, store, **{**options, "linger": 120.0})

    monkeypatch.setattr(_run.BatchWriter, "__init__", patient)
    events: list[str] = []
    ids = [f"c{n:02d}" for n in range(40)]
    data = dataset("quick", [{"id": text, "turns": ask(text)} for text in ids])
    store = _OrderStore(tmp_path / "results.sqlite", events)
    run = run_experiment(
        _playing(events, {}), data, store=store, checkpointer="memory://", concurrency=1
    )
    store.close()
    assert [r.case_id for r in run.results] == ids
    assert [case for commit in store.commits for case in commit] == ids
    assert [len(commit) for commit in store.commits[1:3]] == [16, 16]
    assert len(store.commits) == 4  # the first (whatever was queued then), 16, 16, the rest


def test_a_stopped_run_neither_waits_for_nor_schedules_a_hand_over():
    from concurrent.futures import Future

    from lg_eval.experiments._case import _Plans

    source = _Plans([], None)
    never: Future[None] = Future()  # a hand-over that would never finish
    waited: list[bool] = []
    waiter = threading.Thread(target=lambda: waited.append(source.wait(never)))
    waiter.start()
    source.stop()
    waiter.join(60)
    assert waited == [False]

    def finished(plan: Any, result: Any) -> Any:
        raise AssertionError("a stopped run hands nothing over")

    assert source.hand_over(finished, None, _result("late")) is None
    done: Future[None] = Future()
    done.set_result(None)
    assert source.wait(done) is True  # done before the stop was seen: it counts
