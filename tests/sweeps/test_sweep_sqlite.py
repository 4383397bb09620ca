from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver

from lg_eval.experiments import open_store
from lg_eval.sweeps import SweepError, checkpoint_bound, checkpoint_time, sweep_json, sweep_threads
from lg_eval.sweeps._listing import in_sample
from tests.sweeps import helpers


@pytest.fixture
def world(tmp_path: Path) -> Any:
    conn = sqlite3.connect(tmp_path / "cp.sqlite", check_same_thread=False)
    saver = SqliteSaver(conn)
    graph = helpers.build(saver)
    boundary = helpers.populate(graph)
    yield graph, saver, boundary, f"sqlite:///{tmp_path / 'results.sqlite'}"
    conn.close()


def test_checkpoint_bounds_order_like_times() -> None:
    t = datetime(2026, 1, 2, 3, 4, 5, 600000, tzinfo=UTC)
    assert checkpoint_bound(t) < checkpoint_bound(t + timedelta(microseconds=1))
    assert abs(checkpoint_time(checkpoint_bound(t)) - t) < timedelta(microseconds=1)


def test_sweep_scores_every_thread_once_then_only_changes(world: Any) -> None:
    graph, saver, _, store = world
    first = sweep_threads(graph, saver, evaluators=helpers.EVALUATORS, store=store, name="w")
    assert first.run.info.status == "finished"
    assert sorted(first.thread_ids) == sorted(
        [f"old-{i:02d}" for i in range(12)] + [f"new-{i:02d}" for i in range(12)]
    )
    newest: dict[str, str] = {}
    for item in list(saver.list(None)):
        conf = item.config["configurable"]
        if conf["checkpoint_ns"] == "":
            newest[conf["thread_id"]] = max(newest.get(conf["thread_id"], ""),
                                            conf["checkpoint_id"])  # fmt: skip
    assert first.checkpoints == newest
    result = first.run.results[0]
    assert {row.evaluator for row in result.scores} == set(helpers.EVALUATORS)
    assert result.thread_id == result.case_id and result.trajectory

    again = sweep_threads(graph, saver, evaluators=helpers.EVALUATORS, store=store, name="w")
    assert again.thread_ids == []
    helpers.resume(graph, "old-03")
    helpers.resume(graph, "new-07")
    third = sweep_threads(graph, saver, evaluators=helpers.EVALUATORS, store=store, name="w")
    assert sorted(third.thread_ids) == ["new-07", "old-03"]
    assert third.checkpoints["old-03"] > first.checkpoints["old-03"]
    turns = {r.case_id: r.score_of("turns") for r in third.run.results}
    assert turns == {"new-07": 0.5, "old-03": 0.5}
    # incremental=False scores everything again; the report lists each thread
    full = sweep_threads(graph, saver, evaluators=helpers.EVALUATORS, store=store, name="w",
                         incremental=False)  # fmt: skip
    assert len(full.thread_ids) == 24
    document = json.loads(sweep_json(full))
    row = next(t for t in document["threads"] if t["thread_id"] == "old-03")
    assert row["checkpoint_id"] == third.checkpoints["old-03"]
    assert set(row["scores"]) == {"redundancy", "turns"}


def test_filters_are_exact(world: Any) -> None:
    graph, saver, boundary, store = world

    def ids(**kw: Any) -> list[str]:
        return sorted(sweep_threads(graph, saver, evaluators=["redundancy"], store=store,
                                    incremental=False, **kw).thread_ids)  # fmt: skip

    assert ids(since=boundary) == [f"new-{i:02d}" for i in range(12)]
    assert ids(until=boundary) == [f"old-{i:02d}" for i in range(12)]
    assert ids(since=timedelta(hours=1)) == ids()
    assert ids(since="1h", until=boundary) == [f"old-{i:02d}" for i in range(12)]
    assert ids(metadata={"team": "escalated"}) == sorted(
        [f"old-{i:02d}" for i in range(0, 12, 3)] + [f"new-{i:02d}" for i in range(0, 12, 3)]
    )
    assert ids(metadata={"team": "escalated"}, since=boundary) == [
        f"new-{i:02d}" for i in range(0, 12, 3)
    ]
    sampled = ids(sample=0.5)
    assert sampled == sorted(t for t in ids() if in_sample(t, 0.5))
    assert 0 < len(sampled) < 24 and ids(sample=0.5) == sampled
    assert ids(limit=5) == ids()[:5]
    assert ids(limit=5, page_size=2, partition_size=3) == ids()[:5]


def test_resume_after_interruption(world: Any) -> None:
    graph, saver, _, store = world
    calls = 0

    def boom(done: int, passed: int, failed: int) -> None:
        nonlocal calls
        calls += 1
        if calls == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        sweep_threads(graph, saver, evaluators=helpers.EVALUATORS, store=store, name="r",
                      run_id="nightly", partition_size=5, executor=None,
                      progress=boom)  # fmt: skip
    with open_store(store) as results:
        stored = results.load_run("nightly")
    assert stored.info.status == "interrupted" and len(stored.results) == 10
    resumed = sweep_threads(graph, saver, evaluators=helpers.EVALUATORS, store=store, name="r",
                            run_id="nightly", partition_size=5)  # fmt: skip
    assert resumed.run.info.status == "finished"
    assert sorted(resumed.thread_ids) == sorted(set(resumed.thread_ids))
    assert len(resumed.thread_ids) == 24 and len(resumed.checkpoints) == 24


def test_savers_that_cannot_list_threads_are_refused(tmp_path: Path) -> None:
    saver = InMemorySaver()
    with pytest.raises(SweepError, match="cannot list its threads"):
        sweep_threads(helpers.build(saver), saver, store=tmp_path / "r.sqlite")


def test_redact_removes_a_pattern_before_anything_is_stored(world: Any, tmp_path: Path) -> None:
    from lg_eval import Feedback, make_evaluator

    graph, saver, _, store = world

    def echo(*, outputs: Any, **_: Any) -> Feedback:  # outputs: the thread's final answer
        return Feedback(score=True, comment=f"answered: {outputs}")

    evaluator = make_evaluator("echo", echo, reads="output", score_range="bool")
    plain = sweep_threads(graph, saver, evaluators=[evaluator], store=store, name="plain")
    assert any("It is" in (r.scores[0].comment or "") for r in plain.run.results)
    redacted_store = f"sqlite:///{tmp_path / 'redacted.sqlite'}"
    swept = sweep_threads(
        graph, saver, evaluators=[evaluator], store=redacted_store, name="r",
        redact=[r"It is \w+"],
    )  # fmt: skip
    comments = {r.scores[0].comment for r in swept.run.results}
    assert comments and all("It is" not in (c or "") for c in comments)
    assert all("[REDACTED]" in (c or "") for c in comments if c and "answered: " in c)
    raw = b"".join(p.read_bytes() for p in tmp_path.glob("redacted.sqlite*"))
    assert b"It is " not in raw
