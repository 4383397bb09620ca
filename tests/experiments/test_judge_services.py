"""Judge limits and the judge cache shared by Ray workers, on a local ``ray.init(num_cpus=2)``.

Each test runs two Ray tasks (two worker processes) making judge calls through a
scripted model inside ``services.active()``; the tasks return when each model call
started and ended (``time.monotonic()``, one clock for every process of a machine).
"""

from __future__ import annotations

import asyncio
import itertools
import pickle
import subprocess
import sys
import tempfile
import time
from typing import Any

import pytest

from lg_eval.errors import InvalidOptionError
from lg_eval.experiments import JudgeCache
from lg_eval.judges import RateLimits, create_trajectory_llm_as_judge

ray = pytest.importorskip("ray")

from lg_eval.experiments import JudgeServices  # noqa: E402

JITTER = 0.2
"""Seconds between a grant on the actor and the model call starting in a worker."""


def nap(seconds: float) -> None:
    time.sleep(seconds)


@pytest.fixture(scope="module", autouse=True)
def local_ray():
    # This module is imported as ``experiments.test_judge_services`` (tests/ is not a package),
    # a name workers cannot import: send its functions by value.
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    warm = ray.remote(num_cpus=1)(nap)  # two worker processes up before the tests
    ray.get([warm.remote(0.2), warm.remote(0.2)])
    yield
    if started:
        ray.shutdown()


def wait_at(barrier: str, parties: int) -> None:
    """Wait until ``parties`` tasks have arrived at the ``barrier`` directory (one machine)."""
    import os
    import uuid

    open(os.path.join(barrier, uuid.uuid4().hex), "w").close()
    while len(os.listdir(barrier)) < parties:
        time.sleep(0.005)


def judge_calls(
    services: JudgeServices,
    prompts: list[str],
    barrier: str,
    delay: float = 0.0,
    parties: int = 2,
) -> dict[str, Any]:
    """In a worker: judge each prompt (sync) inside ``services.active()``."""
    import os

    from tests.judges.fake_judge import Script
    from tests.judges.test_rate_limits import TimedJudge, verdict

    reply = verdict(reasoning="Fine.", score=True)
    model = TimedJudge(script=Script([reply], repeat_last=True), delay=delay)
    judge = create_trajectory_llm_as_judge(judge=model)
    wait_at(barrier, parties)
    with services.active():
        for prompt in prompts:
            score = judge(outputs=[{"role": "user", "content": prompt}])["score"]
            assert score is True
    # each model call's span, as the model saw it (a cache hit makes none)
    spans = list(zip(model.starts, model.ends, strict=True))
    return {"pid": os.getpid(), "model_calls": len(model.calls), "spans": spans}


def ajudge_calls(
    services: JudgeServices, prompts: list[str], barrier: str, delay: float
) -> dict[str, Any]:
    """In a worker: judge the prompts concurrently on one event loop."""
    from tests.judges.fake_judge import ScriptedJudge, verdict

    model = ScriptedJudge.of(verdict(reasoning="Fine.", score=True), delay=delay, repeat_last=True)
    judge = create_trajectory_llm_as_judge(judge=model)

    async def main() -> list[Any]:
        wait_at(barrier, 2)
        with services.active():
            calls = [judge.aevaluate(outputs=[{"role": "user", "content": p}]) for p in prompts]
            return [r["score"] for r in await asyncio.gather(*calls)]

    scores = asyncio.run(main())
    return {
        "scores": scores,
        "max_in_flight": model.script.max_in_flight,
        "model_calls": len(model.calls),
    }


def in_two_workers(fn: Any, services: JudgeServices, batches: list[list[str]], *args: Any):
    assert len(batches) == 2
    task = ray.remote(num_cpus=1)(fn)
    barrier = tempfile.mkdtemp(prefix="lg-eval-barrier-")
    return ray.get([task.remote(services, batch, barrier, *args) for batch in batches])


def prompts(prefix: str, n: int) -> list[str]:
    return [f"{prefix}{i}" for i in range(n)]


@pytest.fixture
def start():
    started: list[JudgeServices] = []

    def make(**options: Any) -> JudgeServices:
        started.append(JudgeServices.start(**options))
        return started[-1]

    yield make
    for services in started:
        services.close()


@pytest.fixture(scope="module")
def one_at_a_time(tmp_path_factory):
    """Services whose limiter lets one judge call at a time through, with a cache (shared
    by the tests below with prompts of their own: every actor is a process, slow to start)."""
    cache = tmp_path_factory.mktemp("one_at_a_time") / "cache.sqlite"
    services = JudgeServices.start(limits=RateLimits(max_concurrent=1), cache=cache)
    yield services
    services.close()


def test_the_limiter_actor_caps_calls_in_flight_across_workers(one_at_a_time):
    services = one_at_a_time
    before = services.stats()["limiter"]["requests"]
    results = in_two_workers(judge_calls, services, [prompts("a", 3), prompts("b", 3)], 0.1)
    assert results[0]["pid"] != results[1]["pid"]
    spans = sorted(span for r in results for span in r["spans"])
    assert all(end <= following for (_, end), (following, _) in itertools.pairwise(spans))
    assert services.stats()["limiter"]["requests"] - before == 6
    assert services.stats()["limiter"]["max_in_flight"] == 1


def test_the_limiter_actor_holds_the_request_window_across_workers(start):
    from tests.judges.test_rate_limits import most_within

    window = 1.0
    services = start(limits=RateLimits(requests_per_minute=3, window_seconds=window))
    results = in_two_workers(judge_calls, services, [prompts("a", 3), prompts("b", 3)])
    starts = sorted(begin for r in results for begin, _ in r["spans"])
    assert most_within(starts, window - JITTER) == 3
    assert starts[3] - starts[0] >= window - JITTER
    assert services.stats()["limiter"]["waits"] >= 2  # the 4th and 5th found the window full


def test_async_judges_in_workers_share_the_limiter_actor(one_at_a_time):
    services = one_at_a_time
    results = in_two_workers(ajudge_calls, services, [prompts("c", 3), prompts("d", 3)], 0.05)
    assert [r["scores"] for r in results] == [[True] * 3] * 2
    assert [r["max_in_flight"] for r in results] == [1, 1]
    assert services.stats()["limiter"]["max_in_flight"] == 1


def test_async_judges_in_workers_are_served_by_the_cache_actor(one_at_a_time):
    batches = [prompts("e", 2), prompts("f", 2)]
    first = in_two_workers(ajudge_calls, one_at_a_time, batches, 0.0)
    second = in_two_workers(ajudge_calls, one_at_a_time, batches[::-1], 0.0)
    assert [r["model_calls"] for r in first] == [2, 2]
    assert [r["model_calls"] for r in second] == [0, 0]
    assert [r["scores"] for r in second] == [[True, True]] * 2


def test_answers_cached_by_one_worker_are_hits_for_the_other(start, tmp_path):
    services = start(limits=RateLimits(max_concurrent=2), cache=tmp_path / "cache.sqlite")
    first = in_two_workers(judge_calls, services, [prompts("a", 3), prompts("b", 3)])
    second = in_two_workers(judge_calls, services, [prompts("b", 3), prompts("a", 3)])
    assert [r["model_calls"] for r in first] == [3, 3]
    assert [r["model_calls"] for r in second] == [0, 0]
    stats = services.stats()
    assert stats["cache"] == {
        "hits": 6,
        "misses": 6,
        "saved_calls": 6,
        "saved_tokens": 720,
        "saved_cost": 0.0,
    }
    assert stats["limiter"]["requests"] == 6  # the hits asked the limiter nothing


def test_the_shared_cache_serves_what_the_drivers_file_holds(start, tmp_path):
    path = tmp_path / "cache.sqlite"
    earlier = JudgeCache(path)  # an earlier run, on the driver: two answers kept
    with earlier.active():
        local = judge_calls(JudgeServices(), prompts("a", 2), tempfile.mkdtemp(), parties=1)
    earlier.close()
    assert local["model_calls"] == 2
    services = start(cache=path)
    rerun = in_two_workers(judge_calls, services, [prompts("a", 2), prompts("a", 2)])
    assert [r["model_calls"] for r in rerun] == [0, 0]
    assert services.stats() == {
        "cache": {"hits": 4, "misses": 0, "saved_calls": 4, "saved_tokens": 480, "saved_cost": 0.0},
        "limiter": None,
    }


def test_services_pickle_as_their_handles(one_at_a_time):
    copy = pickle.loads(pickle.dumps(one_at_a_time))
    assert copy.limits == RateLimits(max_concurrent=1)
    assert ray.get(copy.limiter.stats.remote()) == one_at_a_time.stats()["limiter"]


def test_a_cache_of_another_type_is_refused():
    with pytest.raises(InvalidOptionError, match="cache is a int; pass a JudgeCache"):
        JudgeServices.start(cache=3)  # type: ignore[arg-type]


def test_the_executors_package_imports_without_ray():
    code = (
        "import sys; sys.modules['ray'] = None\n"
        "import lg_eval.executors, lg_eval.experiments\n"
        "print('ok')"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.stdout.strip() == "ok", done.stderr
