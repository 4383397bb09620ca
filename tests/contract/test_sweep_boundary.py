"""A sweep's boundary: :class:`~lg_eval.sweeps.Watch` takes the sweep's options
(:class:`~lg_eval.sweeps.SweepOptions`) and its own (``idle``, ``reconcile``, ``margin``),
``run`` its pace, and the sweep's writers their result and report; each is checked when it
is given, and a value outside its contract is an :class:`InvalidOptionError` that names it.
The predicates are the documented contracts, written apart from the checks they test."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lg_eval.errors import InvalidOptionError
from lg_eval.judges import RateLimiter, RateLimits
from lg_eval.sweeps import Watch, checkpoint_bound, sweep_json, write_sweep_json
from tests.contract.contract import fuzz
from tests.contract.strategies import garbage as any_value

garbage = st.one_of(any_value, st.sampled_from(["idle", "busy", "interrupted", "error"]))


def _seconds(at_least: float) -> Callable[[Any], bool]:
    return lambda v: type(v) in (int, float) and math.isfinite(v) and v >= at_least


WATCH_OPTIONS: list[tuple[str, Callable[[Any], bool]]] = [
    ("idle", _seconds(0)),
    ("margin", _seconds(0)),
    ("reconcile", _seconds(1)),
    ("status", lambda v: v is None or v in ("idle", "busy", "interrupted", "error")),
    ("sample", lambda v: v is None or (type(v) in (int, float) and 0 < v <= 1)),
    ("page_size", lambda v: type(v) is int and v >= 1),
    ("judge_budget", lambda v: v is None or (type(v) is int and v >= 1)),
    ("assistant_id", lambda v: v is None or type(v) is str),
]


def _graph() -> Any:
    from graphs.weather import build

    return build()


@pytest.mark.parametrize(("name", "accepts"), WATCH_OPTIONS, ids=[n for n, _ in WATCH_OPTIONS])
@fuzz(50)
@given(value=garbage)
def test_a_watch_takes_each_value_its_contract_allows_and_names_any_other(
    name: str, accepts: Callable[[Any], bool], value: Any
) -> None:
    if accepts(value):
        watch = Watch(_graph(), "sqlite:///never-opened.sqlite", **{name: value})  # opens nothing
        kept = getattr(watch, name) if hasattr(watch, name) else watch._options.get(name)
        if name == "judge_budget" and value is not None:  # an hourly limiter of that many
            assert kept.limits.requests_per_minute == value
            assert kept.limits.window_seconds == 3600.0
        else:
            assert kept == value
    else:
        with pytest.raises(InvalidOptionError, match=f"^{name}="):
            Watch(_graph(), "sqlite:///never-opened.sqlite", **{name: value})


def test_a_watch_keeps_a_budget_given_as_a_limiter_and_refuses_a_run_id() -> None:
    budget = RateLimiter(RateLimits(requests_per_minute=3, window_seconds=3600.0))
    watch = Watch(_graph(), "sqlite:///never-opened.sqlite", judge_budget=budget)
    assert watch._options["judge_budget"] is budget
    with pytest.raises(InvalidOptionError, match=r"^run_id goes with a single sweep"):
        Watch(_graph(), "sqlite:///never-opened.sqlite", run_id="r1")
    with pytest.raises(InvalidOptionError, match=r"^nope=1: extra inputs are not permitted\.$"):
        Watch(_graph(), "sqlite:///never-opened.sqlite", nope=1)  # type: ignore[call-arg]


@fuzz(50)
@given(every=garbage.filter(lambda v: not _seconds(0)(v)))
def test_a_watch_s_pace_outside_its_contract_is_refused_before_a_poll(every: Any) -> None:
    watch = Watch(_graph(), "sqlite:///never-opened.sqlite")
    with pytest.raises(InvalidOptionError, match=r"^every="):
        watch.run(every=every)
    with pytest.raises(InvalidOptionError, match=r"^passes=0: input should be greater than"):
        watch.run(passes=0)


@fuzz(50)
@given(value=garbage)
def test_the_writers_refuse_what_is_no_sweep_result_or_report_by_name(value: Any) -> None:
    with pytest.raises(
        InvalidOptionError, match=r"^result=.*: use a SweepResult \(sweep_threads\)"
    ):
        sweep_json(value)
    with pytest.raises(InvalidOptionError, match=r"^when=.*: use a datetime\.$"):
        checkpoint_bound(value)


def test_a_writer_names_a_report_and_a_batch_outside_their_contract(tmp_path: Path) -> None:
    from lg_eval.sweeps import SweepResult

    result = object.__new__(SweepResult)  # never read: the boundary refuses first
    with pytest.raises(InvalidOptionError, match=r"^report='r': use a Report or None\.$"):
        sweep_json(result, "r")  # type: ignore[arg-type]
    with pytest.raises(InvalidOptionError, match=r"^batch=0: input should be greater than"):
        write_sweep_json(result, tmp_path / "s.json", batch=0)
    assert not (tmp_path / "s.json").exists()
