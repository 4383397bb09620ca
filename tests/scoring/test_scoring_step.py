"""The one scoring step: calls (in turn, together, with timeouts) and reading what came back."""

from __future__ import annotations

import asyncio
import math
import threading
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from lg_eval._evaluator import make_evaluator
from lg_eval._feedback import DEFAULT_RANGE, ScoreRange
from lg_eval.errors import EvaluatorTimeoutError
from lg_eval.scoring import (
    DeclaredRanges,
    EvaluatorCall,
    Scored,
    call_evaluators,
    read_outcome,
)

RUN = {"outputs": {"answer": "42"}}


def call_of(function: Any, name: str = "f", **options: Any) -> EvaluatorCall:
    return EvaluatorCall(name, function, function, RUN, **options)


def read(function: Any, **options: Any) -> list[Scored]:
    call = call_of(function, **options)
    (outcome,) = call_evaluators([call]).run()
    return read_outcome(call, outcome)


class Verdict(BaseModel):
    key: str
    score: float


@pytest.mark.parametrize(
    ("returned", "expected"),
    [
        (True, [("f", True, None)]),
        (0.25, [("f", 0.25, None)]),
        (None, [("f", None, None)]),
        ({"key": "k", "score": 1}, [("k", 1, None)]),
        (
            [{"key": "a", "score": 0.5}, {"key": "b", "score": False}],
            [("a", 0.5, None), ("b", False, None)],
        ),
        ({"results": [{"key": "a", "score": 1.0}]}, [("a", 1.0, None)]),
        (Verdict(key="m", score=0.5), [("m", 0.5, None)]),
    ],
)
def test_every_feedback_shape_is_read(returned: Any, expected: list[tuple[Any, ...]]) -> None:
    got = read(lambda **_: returned)
    assert [(s.key, s.score, s.error) for s in got] == expected


@pytest.mark.parametrize(
    ("returned", "error"),
    [
        ("seven", "TypeError: evaluator 'f' returned a str; expected a feedback dict"),
        ([], "TypeError: evaluator 'f' returned no results"),
        ({"score": 0.5, "key": 3}, "TypeError: evaluator 'f' returned a feedback whose key is a"),
    ],
)
def test_what_is_no_feedback_is_the_evaluators_error(returned: Any, error: str) -> None:
    (got,) = read(lambda **_: returned)
    assert (got.key, got.score, got.refused) == ("f", None, None)
    assert got.error is not None and got.error.startswith(error)


def test_a_raising_evaluator_is_an_error_keyed_as_the_call_says() -> None:
    def boom(**_: Any) -> Any:
        raise ValueError("no answer")

    (got,) = read(boom, key="quality")
    assert (got.key, got.score, got.error) == ("quality", None, "ValueError: no answer")


def test_a_score_outside_the_declared_range_is_refused_with_the_reason() -> None:
    (got,) = read(lambda **_: 7, declared=DeclaredRanges(forced=ScoreRange.between(1, 5)))
    assert (got.score, got.rejected) == (None, 7)
    assert got.refused == (
        "evaluator 'f' produced the score 7, outside its range (a number from 1 to 5)"
    )
    assert got.error == f"InvalidScoreError: {got.refused}"


def test_a_score_the_evaluator_core_refused_keeps_its_reason_and_comment() -> None:
    scorer = make_evaluator("ratio", lambda **_: {"score": math.nan})
    call = EvaluatorCall.of(scorer, RUN)
    (outcome,) = call_evaluators([call]).run()
    (got,) = read_outcome(call, outcome)
    assert (got.key, got.score) == ("ratio", None)
    assert got.refused == "evaluator 'ratio' produced a non-finite score (nan)"
    assert got.comment == (
        "Not scored: evaluator 'ratio' produced a non-finite score (nan); see metadata['error']."
    )
    assert got.rejected == "nan"


def test_rename_replaces_the_key_of_a_single_feedback_only() -> None:
    (one,) = read(lambda **_: {"key": "own", "score": 1}, key="mine", rename=True)
    two = read(lambda **_: [{"key": "a", "score": 1}, {"score": 0}], key="mine", rename=True)
    assert one.key == "mine"
    assert [s.key for s in two] == ["a", "mine"]


def test_awaited_calls_run_together_and_keep_their_order() -> None:
    """Each of two awaited evaluators waits until the other has started: run in turn, the
    first would wait for ever (its guard gives up after a minute and scores False)."""
    started = {"a": asyncio.Event(), "b": asyncio.Event()}

    def meeting(own: str, other: str) -> Any:
        async def evaluator(**_: Any) -> dict[str, Any]:
            started[own].set()
            try:
                await asyncio.wait_for(started[other].wait(), timeout=60)
            except TimeoutError:
                return {"score": False}
            return {"score": True}

        return evaluator

    def fast(**_: Any) -> bool:
        return False

    calls = [call_of(meeting("a", "b"), "a"), call_of(meeting("b", "a"), "b"), call_of(fast, "c")]
    outcomes = asyncio.run(call_evaluators(calls).arun())
    assert [result for result, _ in outcomes] == [{"score": True}, {"score": True}, False]


def test_driven_sync_the_calls_run_in_turn_and_share_the_budget() -> None:
    """The first answers at once; the second hangs (until the test ends) and is cut off by
    what is left of the shared budget."""
    hung = threading.Event()

    def answers(**_: Any) -> bool:
        return True

    def hangs(**_: Any) -> bool:
        return hung.wait(60)

    calls = [call_of(answers, "a"), call_of(hangs, "b")]
    try:
        first, second = call_evaluators(calls, timeout=0.45).run()
    finally:
        hung.set()
    assert first == (True, None)
    assert isinstance(second[1], EvaluatorTimeoutError)
    assert "the node's timeout of 0.45s" in str(second[1])


def test_a_missing_reference_key_is_that_calls_error() -> None:
    call = EvaluatorCall("f", lambda **_: 1, lambda **_: 1, RUN, reference_key="output")
    (outcome,) = call_evaluators([call]).run()
    (got,) = read_outcome(call, outcome)
    assert got.error == (
        "ReferenceKeyError: EvalSpec(reference_key='output') needs a dict reference holding "
        "'output', but the evaluator was given no reference."
    )


values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(max_size=5)
    | st.builds(object),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(["key", "score", "comment", "metadata", "results"]), inner
        )
    ),
    max_leaves=8,
)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(returned=values)
def test_whatever_an_evaluator_returns_is_read_without_raising_and_never_scores_garbage(
    returned: Any,
) -> None:
    for scored in read(lambda **_: returned):
        assert isinstance(scored.key, str) and scored.key
        assert scored.comment is None or isinstance(scored.comment, str)
        if scored.score is not None:
            assert scored.error is None
            assert isinstance(scored.score, bool | int | float)
            assert DEFAULT_RANGE.accepts(scored.score)
        if scored.refused is not None:
            assert scored.score is None and scored.error == f"InvalidScoreError: {scored.refused}"


@settings(max_examples=100)
@given(returned=values)
def test_sync_and_awaited_calls_read_alike(returned: Any) -> None:
    call = call_of(lambda **_: returned)
    (sync,) = call_evaluators([call]).run()
    (awaited,) = asyncio.run(call_evaluators([call]).arun())
    assert read_outcome(call, sync) == read_outcome(call, awaited)
