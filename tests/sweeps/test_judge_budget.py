"""``judge_budget``: at most N judge requests in any rolling hour, one budget for every pass
of a watch (a scripted judge, :mod:`tests.experiments.judged`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from lg_eval.errors import InvalidOptionError
from lg_eval.judges import RateLimiter, RateLimits
from lg_eval.play import open_checkpointer
from lg_eval.sweeps import Watch, sweep_threads
from tests.experiments.judged import JUDGE, MODEL
from tests.sweeps import helpers


@pytest.fixture
def threads(tmp_path: Path) -> str:
    """Two played threads of the weather agent, and more to come (``helpers.play``)."""
    url = f"sqlite:///{tmp_path / 'threads.sqlite'}"
    with open_checkpointer(url) as saver:
        graph = helpers.build(saver)
        for name in ("t0", "t1"):
            helpers.play(graph, name)
    MODEL.script.calls.clear()
    return url


def test_a_watch_spends_one_budget_over_all_its_passes(threads: str, tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'results.sqlite'}"
    with Watch(
        helpers.GRAPH, threads, store=store, evaluators=[JUDGE], judge_budget=100,
        judge_cache=False,
    ) as watch:  # fmt: skip
        first = watch.poll()
        with open_checkpointer(threads) as saver:
            helpers.play(helpers.build(saver), "t2")
        second = watch.poll()
    records = [p.result.info.config for p in (first, second) if p.result is not None]
    assert [c["judge_budget"] for c in records] == [100, 100]
    assert [c["judge_budget_used"]["requests"] for c in records] == [2, 3]


def test_a_request_over_the_budget_waits_for_the_window(threads: str, tmp_path: Path) -> None:
    budget = RateLimiter(RateLimits(requests_per_minute=1, window_seconds=0.2))
    result = sweep_threads(
        helpers.GRAPH, threads, store=tmp_path / "results.sqlite", evaluators=[JUDGE],
        judge_budget=budget, judge_cache=False,
    )  # fmt: skip
    assert result.scored == 2
    used = result.info.config["judge_budget_used"]
    assert (used["requests"], used["waits"]) == (2, 1)


def test_a_bad_budget_is_refused_before_anything_runs(threads: str, tmp_path: Path) -> None:
    store = tmp_path / "results.sqlite"
    expected = r"^judge_budget=0: use an integer >= 1 \(judge requests an hour\) or a RateLimiter\."
    with pytest.raises(InvalidOptionError, match=expected):
        sweep_threads(helpers.GRAPH, threads, store=store, judge_budget=0)
    with pytest.raises(InvalidOptionError, match="judge_budget= holds the judge requests"):
        sweep_threads(helpers.GRAPH, threads, store=store, judge_budget=5, executor="ray")
    assert not store.exists()  # refused before the store was opened
