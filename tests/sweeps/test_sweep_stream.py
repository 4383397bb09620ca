"""A sweep's result in bounded memory: aggregates, worst threads and streamed reports equal
what a full load of the run gives, and the heap peak does not grow with the thread count."""

from __future__ import annotations

import gc
import json
import math
import sqlite3
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.sqlite import SqliteSaver

from lg_eval.executors import LocalExecutor
from lg_eval.experiments import CaseResult
from lg_eval.extract import extract_thread
from lg_eval.reports import build_report
from lg_eval.sweeps import sweep_json, sweep_threads, write_sweep_html, write_sweep_json
from tests.sweeps import helpers


@pytest.fixture
def swept(tmp_path: Path) -> Any:
    """24 threads, 4 resumed (2 turns: ``turns`` scores 0.5 and fails its 0.75 threshold)."""
    conn = sqlite3.connect(tmp_path / "cp.sqlite", check_same_thread=False)
    saver = SqliteSaver(conn)
    graph = helpers.build(saver)
    helpers.populate(graph)
    for thread_id in ("old-01", "old-05", "new-02", "new-09"):
        helpers.resume(graph, thread_id)
    result = sweep_threads(graph, saver, evaluators=helpers.EVALUATORS,
                           store=tmp_path / "results.sqlite", thresholds={"turns": 0.75},
                           worst=6, partition_size=5)  # fmt: skip
    yield result
    conn.close()


SEVERITY = {"error": 0, "timeout": 1, "failed": 2, "passed": 3}


def worst_first(index: int, result: CaseResult) -> tuple[int, float, int]:
    """The documented order of the worst threads: errors, timeouts, failures, then passed;
    the lowest mean score first (booleans count 1 and 0; no score: last); run order."""
    values = [float(r.score) for r in result.scores if r.score is not None and r.error is None]
    return SEVERITY[result.status], sum(values) / len(values) if values else math.inf, index


def test_sweep_aggregates_equal_a_report_of_the_fully_loaded_run(swept: Any) -> None:
    full = build_report(swept.run)
    summed = {"latency_mean_s": pytest.approx(full.summary.latency_mean_s, rel=1e-12)}
    assert swept.report.summary.model_dump() == {**full.summary.model_dump(), **summed}
    assert swept.report.evaluators == full.evaluators
    assert swept.report.score_histogram == full.score_histogram
    assert swept.report.latency_histogram == full.latency_histogram
    assert swept.counts.failed == 4 and swept.counts.passed == 20 and swept.scored == 24


def test_worst_threads_are_the_first_of_the_run_sorted_worst_first(swept: Any) -> None:
    ranked = sorted(enumerate(swept.run.results), key=lambda pair: worst_first(*pair))
    expected = [r.case_id for _, r in ranked[:6]]
    assert [w.thread_id for w in swept.worst] == expected
    assert sorted(expected[:4]) == ["new-02", "new-09", "old-01", "old-05"]
    assert all(w.checkpoint_id == swept.checkpoints[w.thread_id] for w in swept.worst)
    assert swept.worst[0].scores == {"redundancy": 1.0, "turns": 0.5}


def test_results_and_threads_stream_what_the_run_holds(swept: Any) -> None:
    assert [r.model_dump() for r in swept.results(batch=5)] == [
        r.model_dump() for r in swept.run.results
    ]
    pairs = [(r.case_id, c) for r, c in swept.threads(batch=7)]
    assert pairs == [(r.case_id, swept.checkpoints[r.case_id]) for r in swept.run.results]
    assert swept.thread_ids == [r.case_id for r in swept.run.results]


def test_streamed_json_lists_every_thread_and_the_run_as_an_experiment(
    swept: Any, tmp_path: Path
) -> None:
    write_sweep_json(swept, tmp_path / "out" / "s.json", batch=4)
    document = json.loads((tmp_path / "out" / "s.json").read_text())
    assert document == json.loads(sweep_json(swept))
    assert json.loads(sweep_json(swept, indent=None)) == document
    assert [t["thread_id"] for t in document["threads"]] == swept.thread_ids
    row = next(t for t in document["threads"] if t["thread_id"] == "old-05")
    assert row == {"thread_id": "old-05", "checkpoint_id": swept.checkpoints["old-05"],
                   "status": "failed", "scores": {"redundancy": 1.0, "turns": 0.5},
                   "error": None}  # fmt: skip
    assert [r["result"]["case_id"] for r in document["cases"]] == swept.thread_ids
    assert [w["thread_id"] for w in document["worst"]] == [w.thread_id for w in swept.worst]
    assert document["summary"]["results"] == 24


def test_html_shows_the_worst_threads_not_every_thread(swept: Any, tmp_path: Path) -> None:
    write_sweep_html(swept, tmp_path / "s.html")
    page = (tmp_path / "s.html").read_text()
    assert "the 6 worst of 24 results" in page
    assert page.count('<tr data-row="') == 6


def _heap_peak_of_sweep(url: str, store: Path, limit: int | None = None) -> float:
    gc.collect()
    tracemalloc.start()
    try:
        result = sweep_threads(helpers.GRAPH, url, evaluators=helpers.EVALUATORS, store=store,
                               executor=LocalExecutor(1), partition_size=50,
                               limit=limit)  # fmt: skip
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert result.counts.passed == result.scored
    return peak / 2**20


def test_heap_peak_of_a_sweep_does_not_grow_with_the_number_of_threads(tmp_path: Path) -> None:
    templates = ["tpl-0", "tpl-1", "tpl-2"]
    urls = {}
    for n in (150, 1500):
        conn = sqlite3.connect(tmp_path / f"cp{n}.sqlite", check_same_thread=False)
        graph = helpers.build(SqliteSaver(conn))
        for thread_id in templates:
            helpers.play(graph, thread_id)
        clones = helpers.clone_sqlite(conn, templates, n // 3 - 1)
        assert extract_thread(graph, {"configurable": {"thread_id": clones[-1]}}).model_dump(
            exclude={"thread_id"}
        ) == extract_thread(graph, {"configurable": {"thread_id": "tpl-2"}}).model_dump(
            exclude={"thread_id"}
        )
        conn.close()
        urls[n] = f"sqlite:///{tmp_path / f'cp{n}.sqlite'}"
    for n, url in urls.items():  # imports, and the graph opened once per checkpointer URL
        _heap_peak_of_sweep(url, tmp_path / f"warm{n}.sqlite", limit=60)
    small = _heap_peak_of_sweep(urls[150], tmp_path / "r150.sqlite")
    big = _heap_peak_of_sweep(urls[1500], tmp_path / "r1500.sqlite")
    assert big < small * 1.2 + 0.5, (small, big)
