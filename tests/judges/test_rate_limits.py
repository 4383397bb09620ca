"""The local rate limiter: concurrency, rolling request and token windows, sync and async,
and a judge cache in front of it spending no budget."""

from __future__ import annotations

import asyncio
import math
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from langchain_core.messages import HumanMessage
from pydantic import Field

from lg_eval.errors import InvalidOptionError
from lg_eval.experiments import JudgeCache
from lg_eval.judges import OutputSpec, RateLimiter, RateLimits, create_trajectory_llm_as_judge
from lg_eval.judges._rate_limits import Budget, estimate_tokens
from tests.judges.fake_judge import Script, ScriptedJudge, verdict

MESSAGES = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
JITTER = 0.1
"""Seconds between a grant and the model call starting, allowed for when checking windows."""


class TimedJudge(ScriptedJudge):
    """A scripted judge that records when each call started and when its reply was ready
    (``time.monotonic()``; the end is taken inside the call, while it still holds its slot)."""

    starts: list[float] = Field(default_factory=list)
    ends: list[float] = Field(default_factory=list)

    def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kw: Any):
        self.starts.append(time.monotonic())
        try:
            return super()._generate(messages, stop, run_manager, **kw)
        finally:
            self.ends.append(time.monotonic())

    async def _agenerate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kw):
        self.starts.append(time.monotonic())
        try:
            return await super()._agenerate(messages, stop, run_manager, **kw)
        finally:
            self.ends.append(time.monotonic())


def timed(delay: float = 0.0, tokens: tuple[int, int] = (100, 20)) -> TimedJudge:
    reply = verdict(reasoning="Fine.", score=True, tokens=tokens)
    return TimedJudge(script=Script([reply], repeat_last=True), delay=delay)


def most_within(starts: list[float], width: float, weights: list[int] | None = None) -> int:
    """The largest total weight (default 1 each) of starts inside any interval of ``width``."""
    pairs = sorted(zip(starts, weights or [1] * len(starts), strict=True))
    best, total, first = 0, 0, 0
    for start, weight in pairs:
        total += weight
        while pairs[first][0] <= start - width:
            total -= pairs[first][1]
            first += 1
        best = max(best, total)
    return best


def judge_in_threads(limiter: RateLimiter, model: ScriptedJudge, threads: int, calls: int) -> None:
    judge = create_trajectory_llm_as_judge(judge=model)

    def work(_: int) -> None:
        with limiter.active():
            for _ in range(calls):
                assert judge(outputs=MESSAGES)["score"] is True

    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(work, range(threads)))


def test_max_concurrent_caps_the_calls_in_flight_across_threads():
    model = timed(delay=0.03)
    limiter = RateLimiter(RateLimits(max_concurrent=2))
    judge_in_threads(limiter, model, threads=6, calls=2)
    assert model.script.max_in_flight == 2
    assert limiter.stats().requests == 12
    assert limiter.stats().max_in_flight == 2


def test_requests_per_window_hold_in_every_rolling_window():
    model = timed()
    window = 0.5
    limiter = RateLimiter(RateLimits(requests_per_minute=3, window_seconds=window))
    judge_in_threads(limiter, model, threads=4, calls=2)
    starts = model.starts
    assert len(starts) == 8
    assert most_within(starts, window - JITTER) == 3
    assert sorted(starts)[6] - min(starts) >= 2 * window - JITTER  # the 7th waits 2 windows


def test_tokens_per_window_hold_with_the_reply_usage_correcting_the_estimate():
    model = timed(tokens=(900, 100))  # each reply reports 1000 tokens
    create_trajectory_llm_as_judge(judge=model)(outputs=MESSAGES)  # to read the prompt sent
    estimate = estimate_tokens(model.calls[0].messages, spec_of(model), 0)
    model.starts.clear()
    window = 0.5
    # Two replies (2000) plus one estimate do not fit; three estimates would: only the
    # correction from usage_metadata keeps the third call out of the first window.
    assert 3 * estimate <= 1999 + estimate
    limits = RateLimits(tokens_per_minute=1999 + estimate, reply_tokens=0, window_seconds=window)
    limiter = RateLimiter(limits)
    judge_in_threads(limiter, model, threads=1, calls=5)
    assert most_within(model.starts, window - JITTER, [1000] * 5) == 2000
    assert model.starts[2] - model.starts[0] >= window - JITTER
    assert limiter.stats().tokens == 5000


def spec_of(model: ScriptedJudge) -> OutputSpec:
    """A spec with the tool the judge sent (its name, description and schema)."""
    function = model.calls[0].tools[0]["function"]  # type: ignore[index]
    return OutputSpec(
        name=function["name"],
        schema=function["parameters"],
        read=lambda args: args,  # type: ignore[arg-type,return-value]
        description=function["description"],
    )


def test_async_callers_wait_without_blocking_their_event_loop():
    model = timed(delay=0.05)
    limiter = RateLimiter(RateLimits(max_concurrent=2))
    judge = create_trajectory_llm_as_judge(judge=model)
    ticks = 0

    async def ticker(stop: asyncio.Event) -> None:
        nonlocal ticks
        while not stop.is_set():
            ticks += 1
            await asyncio.sleep(0.01)

    async def main() -> list[Any]:
        stop = asyncio.Event()
        task = asyncio.create_task(ticker(stop))
        with limiter.active():
            results = await asyncio.gather(*(judge.aevaluate(outputs=MESSAGES) for _ in range(6)))
        stop.set()
        await task
        return [r["score"] for r in results]

    assert asyncio.run(main()) == [True] * 6
    assert model.script.max_in_flight == 2
    assert limiter.stats().waits == 4
    assert ticks >= 10  # three rounds of 0.05 s ticked through, not blocked


def test_cache_hits_spend_no_rate_budget(tmp_path):
    model = timed()
    limiter = RateLimiter(RateLimits(requests_per_minute=100))
    cache = JudgeCache(tmp_path / "cache.sqlite")
    judge = create_trajectory_llm_as_judge(judge=model)
    with limiter.active(), cache.active():
        scores = [judge(outputs=MESSAGES)["score"] for _ in range(5)]
    cache.close()
    assert scores == [True] * 5
    assert len(model.calls) == 1
    assert (cache.stats.hits, cache.stats.misses) == (4, 1)
    assert (limiter.stats().requests, limiter.stats().tokens) == (1, 120)


def test_the_estimate_is_characters_over_four_plus_the_reply_allowance():
    spec = OutputSpec(name="judge", schema={}, read=lambda a: a, description="d")  # type: ignore[arg-type,return-value]
    sent = [HumanMessage("x" * 33)]
    chars = 33 + len("judge") + len("d") + len("{}")  # 41 characters: 11 tokens
    assert estimate_tokens(sent, spec, 512) == math.ceil(chars / 4) + 512 == 523


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_budget_names_the_wait_until_the_oldest_request_leaves_the_window():
    clock = Clock()
    budget = Budget(RateLimits(requests_per_minute=2, window_seconds=10), clock=clock)
    assert budget.try_acquire(1)[0] is not None
    clock.now = 1
    assert budget.try_acquire(1)[0] is not None
    clock.now = 2
    assert budget.try_acquire(1) == (None, 8.0)
    clock.now = 10
    assert budget.try_acquire(1, waited=8)[0] is not None
    assert (budget.stats.requests, budget.stats.waits, budget.stats.waited_seconds) == (3, 1, 8)


def test_budget_corrects_the_estimate_with_the_tokens_used():
    clock = Clock()
    budget = Budget(RateLimits(tokens_per_minute=100, window_seconds=10), clock=clock)
    grant, _ = budget.try_acquire(50)
    assert grant is not None
    budget.settle(grant, 90)
    clock.now = 1
    assert budget.try_acquire(20) == (None, 9.0)
    assert budget.try_acquire(10)[0] is not None


def test_budget_runs_a_request_bigger_than_the_budget_alone():
    clock = Clock()
    budget = Budget(RateLimits(tokens_per_minute=100, window_seconds=10), clock=clock)
    assert budget.try_acquire(500)[0] is not None
    assert budget.try_acquire(1) == (None, 10.0)


def test_budget_releases_a_grant_never_settled_after_its_lease():
    clock = Clock()
    budget = Budget(RateLimits(max_concurrent=1), clock=clock, lease=30)
    assert budget.try_acquire(1)[0] is not None
    clock.now = 29
    assert budget.try_acquire(1) == (None, None)
    clock.now = 30
    assert budget.try_acquire(1)[0] is not None


def test_a_failed_request_frees_its_slot_and_keeps_its_estimate():
    model = ScriptedJudge.of(ConnectionError("down"), verdict(reasoning="Fine.", score=True))
    limiter = RateLimiter(RateLimits(max_concurrent=1, reply_tokens=7))
    judge = create_trajectory_llm_as_judge(judge=model, max_retries=1, backoff_base=0)
    with limiter.active():
        result = judge(outputs=MESSAGES)
    stats = limiter.stats()
    assert result["score"] is True
    assert stats.requests == 2
    assert stats.tokens == estimate_tokens(model.calls[0].messages, spec_of(model), 7) + 120


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"requests_per_minute": 0}, "requests_per_minute"),
        ({"tokens_per_minute": -5}, "tokens_per_minute"),
        ({"max_concurrent": 2.5}, "max_concurrent"),
        ({"window_seconds": 0}, "window_seconds"),
        ({"reply_tokens": -1}, "reply_tokens"),
        ({"requests_per_second": 3}, "requests_per_second"),
    ],
)
def test_bad_limits_are_refused_naming_the_field(options: dict[str, Any], field: str):
    with pytest.raises(InvalidOptionError, match=f"^RateLimits {field}=.*: "):
        RateLimits(**options)


def test_a_limiter_of_something_else_is_refused():
    with pytest.raises(InvalidOptionError, match="limits is a int"):
        RateLimiter(60)  # type: ignore[arg-type]


LIMIT_FIELDS = ["requests_per_minute", "tokens_per_minute", "max_concurrent"]
anything = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 10**9), st.floats(), st.text(max_size=3)
)


@given(field=st.sampled_from(LIMIT_FIELDS), value=anything)
def test_a_limit_is_accepted_exactly_when_it_is_none_or_a_positive_integer(field, value):
    usable = value is None or (type(value) is int and value >= 1)
    if usable:
        assert getattr(RateLimits(**{field: value}), field) == value
    else:
        expected = "(a valid integer|greater than or equal to 1)"
        with pytest.raises(
            InvalidOptionError, match=f"^RateLimits {field}=.*: input should be {expected}"
        ):
            RateLimits(**{field: value})


@given(value=st.one_of(st.booleans(), st.integers(-3, 100), st.floats(), st.text(max_size=3)))
def test_a_window_is_accepted_exactly_when_it_is_a_finite_positive_number(value):
    usable = type(value) in (int, float) and math.isfinite(value) and value > 0
    if usable:
        assert RateLimits(window_seconds=value).window_seconds == value
    else:
        expected = "(a valid number|a finite number|greater than 0)"
        with pytest.raises(
            InvalidOptionError, match=f"^RateLimits window_seconds=.*: input should be {expected}"
        ):
            RateLimits(window_seconds=value)


def test_one_limiter_is_shared_by_threads_that_enter_it_separately():
    model = timed(delay=0.02)
    limiter = RateLimiter({"max_concurrent": 1})
    barrier = threading.Barrier(3)
    judge = create_trajectory_llm_as_judge(judge=model)

    def work() -> None:
        barrier.wait()
        with limiter.active():
            judge(outputs=MESSAGES)

    threads = [threading.Thread(target=work) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert model.script.max_in_flight == 1
    assert limiter.stats().requests == 3
