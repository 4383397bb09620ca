"""batch_evaluate: many threads through the evaluation graph, bounded and resumable."""

from __future__ import annotations

import asyncio
import threading
import time
from collections import Counter
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from graphs.scenarios import SCENARIOS
from lg_eval import extract_thread
from lg_eval.errors import InvalidOptionError, MissingCheckpointerError
from lg_eval.evaluators import graph_trajectory_strict_match
from lg_eval.nodes import (
    EvalCase,
    EvaluationResult,
    abatch_evaluate,
    batch_evaluate,
    create_evaluation_graph,
)

GOOD = {"steps": [["__start__", "agent", "tools", "__interrupt__"], ["agent"]]}
WRONG = {"steps": [["__start__", "agent"]]}


def weather_threads(saver: Any, count: int) -> Any:
    scenario = SCENARIOS["weather"]
    for n in range(count):
        scenario.run(scenario.build(checkpointer=saver), f"w{n}")
    return scenario.build(checkpointer=saver)  # any instance reads every thread


def target(n: int, reference: Any = GOOD) -> dict[str, Any]:
    return {"target": {"graph": "weather", "thread_id": f"w{n}"}, "reference": reference}


class Gauge:
    """Counts evaluations in flight at once."""

    def __init__(self) -> None:
        self.now = self.peak = 0
        self.lock = threading.Lock()

    def enter(self) -> None:
        with self.lock:
            self.now += 1
            self.peak = max(self.peak, self.now)

    def leave(self) -> None:
        with self.lock:
            self.now -= 1


def test_many_threads_run_at_most_max_concurrency_at_once():
    gauge = Gauge()

    def slow(*, outputs: Any, **_: Any) -> bool:
        gauge.enter()
        time.sleep(0.05)
        gauge.leave()
        return True

    saver = InMemorySaver()
    weather = weather_threads(saver, 5)
    graph = create_evaluation_graph([slow], checkpointer=saver, graphs={"weather": weather})
    items = batch_evaluate(graph, [target(n) for n in range(5)], max_concurrency=2)
    assert [(i.thread_id, i.status, i.result.passed) for i in items] == [
        (f"eval:weather:w{n}", "done", True) for n in range(5)
    ]
    assert gauge.peak == 2


async def test_async_batch_is_bounded_too():
    gauge = Gauge()

    async def slow(*, outputs: Any, **_: Any) -> bool:
        gauge.enter()
        await asyncio.sleep(0.05)
        gauge.leave()
        return True

    saver = InMemorySaver()
    weather = weather_threads(saver, 4)
    graph = create_evaluation_graph([slow], checkpointer=saver, graphs={"weather": weather})
    items = await abatch_evaluate(graph, [target(n) for n in range(4)], max_concurrency=3)
    assert [i.status for i in items] == ["done"] * 4
    assert gauge.peak == 3


def test_a_second_call_skips_finished_cases_resumes_crashed_ones_and_keeps_reviews():
    calls: Counter[str] = Counter()

    def crashes_once_on_w1(*, outputs: Any, **_: Any) -> bool:
        calls[outputs.thread_id] += 1
        if outputs.thread_id == "w1" and calls["w1"] == 1:
            raise ConnectionError("worker lost")
        return True

    saver = InMemorySaver()
    weather = weather_threads(saver, 3)
    graph = create_evaluation_graph(
        [crashes_once_on_w1, graph_trajectory_strict_match],
        checkpointer=saver,
        graphs={"weather": weather},
        review_threshold=0.9,
        fail_fast=True,
    )
    cases = [target(0), target(1), target(2, WRONG)]
    first = batch_evaluate(graph, cases, max_concurrency=3)
    assert [(i.status, i.error) for i in first] == [
        ("done", None),
        ("error", "ConnectionError: worker lost"),
        ("review", None),
    ]
    assert first[2].review["reasons"] == ["Score 0.5 is below the review threshold 0.9."]
    second = batch_evaluate(graph, cases, max_concurrency=3)
    assert [i.status for i in second] == ["done", "done", "review"]
    assert calls == {"w0": 1, "w1": 2, "w2": 1}
    out = graph.invoke(
        Command(resume={"verdict": "fail", "note": "wrong route"}), second[2].config()
    )
    assert EvaluationResult.model_validate(out["result"]).review.note == "wrong route"
    third = batch_evaluate(graph, cases, rerun=True)
    assert [i.status for i in third] == ["done", "done", "review"]
    assert calls == {"w0": 2, "w1": 3, "w2": 2}


def test_trajectory_cases_get_thread_ids_from_their_threads():
    saver = InMemorySaver()
    weather = weather_threads(saver, 1)
    thread = extract_thread(weather, {"configurable": {"thread_id": "w0"}})
    graph = create_evaluation_graph([graph_trajectory_strict_match], checkpointer=saver)
    items = batch_evaluate(
        graph,
        [EvalCase(trajectory=thread, reference=GOOD), {"trajectory": GOOD, "reference": GOOD}],
        thread_prefix="nightly",
    )
    assert [(i.thread_id, i.result.score) for i in items] == [
        ("nightly:w0", 1.0),
        ("nightly:1", 1.0),
    ]


def test_duplicate_cases_and_missing_checkpointer_are_refused():
    graph = create_evaluation_graph([graph_trajectory_strict_match], checkpointer=InMemorySaver())
    with pytest.raises(InvalidOptionError, match="same thread"):
        batch_evaluate(graph, [target(0), target(0)])
    with pytest.raises(MissingCheckpointerError, match="checkpointer=InMemorySaver"):
        batch_evaluate(create_evaluation_graph([graph_trajectory_strict_match]), [target(0)])
