"""The contract as a property: no evaluator behaviour stops an eval node's host graph.

For evaluators drawn from {return arbitrary JSON, objects, NaN, inf, huge numbers,
unserialisable metadata; raise arbitrary exceptions, including ones that cannot be
printed; sleep past the timeout}, an EvalNode host graph on a real SQLite checkpointer
completes, its state except ``evaluations`` equals the run without the node, and every
stored feedback is plain data with a finite score or None (and never passes when it
is an error).
"""

from __future__ import annotations

import json
import math
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lg_eval.nodes import EvalFeedback, EvalNode, EvalSpec
from tests.nodes.hosts_contract import run, without_evaluations

TIMEOUT = 0.05


class Unprintable(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no str")

    def __repr__(self) -> str:
        raise RuntimeError("no repr")


class Opaque:
    """Neither serializable nor printable."""

    def __repr__(self) -> str:
        raise ValueError("no repr")


def cycle() -> dict[str, Any]:
    loop: dict[str, Any] = {"a": 1}
    loop["self"] = loop
    return loop


NUMBERS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.just(10**400),
    st.booleans(),
    st.none(),
)
JSON = st.recursive(
    st.one_of(NUMBERS, st.text(max_size=5)),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=8,
)
ODD = st.sampled_from(
    [object(), lambda: 1, threading.Lock(), Opaque(), b"bytes", {1, 2}, complex(1, 2), cycle()]
)
ANYTHING = st.one_of(JSON, ODD, st.lists(st.one_of(JSON, ODD), max_size=3))
EXCEPTIONS = st.sampled_from(
    [ValueError("bad"), KeyError("k"), TimeoutError(), Unprintable(), RuntimeError(Opaque())]
)


@st.composite
def behaviours(draw: st.DrawFn) -> tuple[str, Any]:
    kind = draw(st.sampled_from(["return", "feedback", "raise", "sleep", "async"]))
    if kind == "return":
        return kind, draw(ANYTHING)
    if kind == "feedback":
        fields = {
            "score": draw(st.one_of(NUMBERS, ODD, st.text(max_size=3))),
            "metadata": draw(st.one_of(st.none(), st.dictionaries(st.text(max_size=3), ANYTHING))),
        }
        if draw(st.booleans()):
            fields["comment"] = draw(st.one_of(st.text(max_size=5), ODD))
        return kind, fields
    if kind == "raise":
        return kind, draw(EXCEPTIONS)
    return kind, None


def evaluator_for(kind: str, value: Any, index: int) -> Any:
    if kind == "async":

        async def sleeps_async(**_: Any) -> bool:
            import asyncio

            await asyncio.sleep(5)
            return True

        function: Any = sleeps_async
    else:

        def function(**_: Any) -> Any:
            if kind == "raise":
                raise value
            if kind == "sleep":
                time.sleep(5)
            return value

    function.__name__ = f"e{index}"
    return EvalSpec(function, threshold=0.5)


def plain(value: Any) -> bool:
    """JSON round-trips it unchanged (no NaN, no objects, string keys only)."""
    try:
        text = json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return False
    return json.loads(text) == value


BASELINE: dict[str, Any] = {}


def baseline(db_dir: Path) -> dict[str, Any]:
    if not BASELINE:
        BASELINE.update(without_evaluations(run(None, db_dir / "baseline.sqlite")))
    return BASELINE


@settings(
    max_examples=25,
    deadline=3000,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(st.lists(behaviours(), min_size=1, max_size=3))
def test_no_evaluator_behaviour_stops_the_host_or_leaks_bad_data(drawn):
    evaluators = [evaluator_for(kind, value, i) for i, (kind, value) in enumerate(drawn)]
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp)
        state = run(EvalNode(evaluators, evaluator_timeout=TIMEOUT), db / "host.sqlite")
        assert without_evaluations(state) == baseline(db)
    records = state["evaluations"]
    assert records, "every evaluator leaves at least one feedback"
    for record in records:
        assert plain(record), record
        feedback = EvalFeedback.model_validate(record)
        score = feedback.score
        assert score is None or isinstance(score, bool) or math.isfinite(score)
        if feedback.error is not None:
            assert feedback.score is None and feedback.passed is None
    keys = {r["key"] for r in records}
    for index, (kind, _) in enumerate(drawn):
        if kind in ("raise", "sleep", "async"):
            assert f"e{index}" in keys
