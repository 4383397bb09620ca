"""The contract, processes: lg_eval keeps no process alive, and the judge cap holds process-wide.

* a sync judge whose model never answers returns after its timeout, and the process can
  then exit (no worker thread is left for the interpreter to join);
* the judge concurrency cap holds across event loops and threads: async judges run by
  sync evaluation nodes (each on its own loop) and sync judges called from many threads
  never have more model calls in flight than the cap.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from lg_eval.judges import (
    JudgeConcurrency,
    create_async_graph_trajectory_llm_as_judge,
    create_graph_trajectory_llm_as_judge,
)
from lg_eval.judges._limits import blocking, limited
from lg_eval.nodes import batch_evaluate, create_evaluation_graph
from tests.judges.fake_judge import ScriptedJudge, verdict
from tests.judges.threads import weather_thread

ROOT = Path(__file__).resolve().parents[2]

HANGING_JUDGE = textwrap.dedent(
    """
    import sys, threading, time
    from lg_eval.judges import create_graph_trajectory_llm_as_judge
    from tests.judges.fake_judge import ScriptedJudge
    from tests.judges.threads import weather_thread

    def never(_messages):
        threading.Event().wait()  # the provider never answers

    model = ScriptedJudge.of(never)
    judge = create_graph_trajectory_llm_as_judge(judge=model, timeout=0.5, max_retries=0)
    result = judge(outputs=weather_thread())
    print(result["metadata"]["error"]["type"], flush=True)
    print(time.monotonic(), flush=True)
    """
)


def test_a_process_whose_sync_judge_hung_exits_after_the_call_returns(tmp_path):
    script = tmp_path / "hang.py"
    script.write_text(HANGING_JUDGE)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    try:  # the abandoned judge thread waits for ever: a process it kept alive never exits
        done = subprocess.run(
            [sys.executable, str(script)],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,  # a guard against that hang, not a measure of speed
        )
    except subprocess.TimeoutExpired:
        pytest.fail("the process did not exit: an abandoned judge thread kept it alive")
    assert done.returncode == 0, done.stderr
    kind, _returned = done.stdout.split()
    assert kind == "timeout"


def test_a_timed_out_sync_call_leaves_no_non_daemon_thread():
    release = threading.Event()
    before = {t.ident for t in threading.enumerate()}
    with pytest.raises(TimeoutError, match=r"did not answer within 0\.05 seconds"):
        blocking(JudgeConcurrency(1), release.wait, 0.05)
    left = [t for t in threading.enumerate() if t.ident not in before]
    assert left and all(t.daemon for t in left)
    release.set()


# --- the cap holds across loops and threads ------------------------------------------------


def _slow_model() -> ScriptedJudge:
    return ScriptedJudge.of(verdict(reasoning="Ok.", score=True), delay=0.05, repeat_last=True)


def _cases(count: int) -> list[dict[str, Any]]:
    trajectory = weather_thread().model_dump()
    return [{"trajectory": {**trajectory, "thread_id": f"t{n}"}} for n in range(count)]


def test_async_judges_on_many_loops_share_the_cap_under_batch_evaluate():
    """Each sync evaluation node runs the async judge on a loop of its own."""
    model = _slow_model()
    judge = create_async_graph_trajectory_llm_as_judge(judge=model, concurrency=JudgeConcurrency(8))

    async def judged(**kwargs: Any) -> Any:  # a user's async evaluator: run on a new loop
        return await judge(**kwargs)

    graph = create_evaluation_graph([judged], checkpointer=InMemorySaver())
    items = batch_evaluate(graph, _cases(32), max_concurrency=16)
    assert [i.status for i in items] == ["done"] * 32
    assert len(model.calls) == 32
    # Never above the cap; well above one call at a time (the machine's load decides whether
    # all 8 slots fill at the same instant, so the top is a bound, not an equality).
    assert 2 <= model.script.max_in_flight <= 8


def test_sync_judges_from_many_threads_share_the_cap():
    model = _slow_model()
    judge = create_graph_trajectory_llm_as_judge(judge=model, concurrency=JudgeConcurrency(8))
    with ThreadPoolExecutor(max_workers=16) as pool:
        results = list(pool.map(lambda _: judge(outputs=weather_thread()), range(32)))
    assert [r["score"] for r in results] == [True] * 32
    assert 2 <= model.script.max_in_flight <= 8


def test_sync_and_async_judges_count_against_the_same_cap():
    model = _slow_model()
    cap = JudgeConcurrency(4)
    sync_judge = create_graph_trajectory_llm_as_judge(judge=model, concurrency=cap)
    async_judge = create_async_graph_trajectory_llm_as_judge(judge=model, concurrency=cap)

    async def many() -> list[Any]:
        calls = [async_judge(outputs=weather_thread()) for _ in range(8)]
        return list(await asyncio.gather(*calls))

    with ThreadPoolExecutor(max_workers=8) as pool:
        threads = [pool.submit(sync_judge, outputs=weather_thread()) for _ in range(8)]
        loops = [pool.submit(asyncio.run, many()) for _ in range(2)]
        results = [f.result() for f in threads] + [r for f in loops for r in f.result()]
    assert len(results) == 24
    assert 2 <= model.script.max_in_flight <= 4


async def test_a_cancelled_wait_for_a_slot_leaks_nothing():
    cap = JudgeConcurrency(1)
    hold = asyncio.Event()

    async def holder() -> None:
        await hold.wait()

    first = asyncio.ensure_future(limited(cap, holder, None))
    await asyncio.sleep(0.01)
    waiting = asyncio.ensure_future(limited(cap, holder, None))
    await asyncio.sleep(0.01)
    waiting.cancel()
    hold.set()
    await first
    with pytest.raises(asyncio.CancelledError):
        await waiting
    # both slots are free again: the semaphore can be taken once and only once
    slots = cap.slots()
    assert slots.acquire(blocking=False) and not slots.acquire(blocking=False)
    slots.release()


async def test_the_uncontended_async_path_stays_cheap(monkeypatch):
    """Taking a free slot is one non-blocking acquire: no call waits or polls for it."""
    cap = JudgeConcurrency(8)
    polls: list[float] = []
    sleep = asyncio.sleep

    async def counted(delay: float, *args: Any) -> Any:
        polls.append(delay)
        return await sleep(delay, *args)

    monkeypatch.setattr(asyncio, "sleep", counted)

    async def answer() -> int:
        return 1

    assert [await limited(cap, answer, None) for _ in range(2000)] == [1] * 2000
    assert polls == []
