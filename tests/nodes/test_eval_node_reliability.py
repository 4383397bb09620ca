"""Eval nodes survive any evaluator: bad scores, unserialisable data, unprintable errors, hangs."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from lg_eval import make_evaluator
from lg_eval._feedback import Feedback
from lg_eval.errors import InvalidOptionError
from lg_eval.nodes import (
    EvalFeedback,
    EvalNode,
    EvalSpec,
    EvaluationResult,
    create_evaluation_graph,
)
from tests.nodes.hosts_contract import arun, run, without_evaluations

NAN, INF = float("nan"), float("inf")
TRAJECTORY = {"steps": [["__start__", "agent"]]}


def stored(state: dict[str, Any]) -> list[EvalFeedback]:
    return [EvalFeedback.model_validate(r) for r in state["evaluations"]]


def returning(value: Any, name: str = "custom") -> Any:
    def evaluator(**_: Any) -> Any:
        return value

    evaluator.__name__ = name
    return evaluator


# --- scores ---------------------------------------------------------------------------------


@pytest.mark.parametrize("score", [NAN, INF, -INF])
def test_a_non_finite_score_in_the_evaluation_graph_fails_and_is_reviewed(score):
    graph = create_evaluation_graph(
        [returning(score), returning(1.0, "fine")],
        review_threshold=0.9,
        checkpointer=InMemorySaver(),
    )
    config = {"configurable": {"thread_id": "nan"}}
    graph.invoke({"trajectory": TRAJECTORY}, config)
    result = EvaluationResult.model_validate(graph.get_state(config).values["result"])
    bad, _fine = result.results
    assert (bad.score, bad.passed) == (None, None)
    assert (
        bad.error
        == f"InvalidScoreError: evaluator 'custom' produced a non-finite score ({score!r})"
    )
    assert result.score == 1.0  # the errored score is not averaged in
    assert result.passed is False and result.needs_review is True
    assert "Evaluator error: custom." in result.reasons


@pytest.mark.parametrize("score", [7, INF, NAN, "0.9", [1], {"a": 1}, 10**400, complex(1, 0)])
def test_an_lg_eval_evaluator_with_a_declared_range_never_stores_a_score_outside_it(
    tmp_path, score
):
    def scorer(**_: Any) -> Any:
        return {"score": 0.5, "comment": "computed"}

    evaluator = make_evaluator("ranged", scorer, score_range=(0.0, 1.0))
    bound_score = EvalSpec(returning({"score": score}), threshold=0.5, score_range=(0.0, 1.0))
    state = run(EvalNode([evaluator, bound_score]), tmp_path / "db.sqlite")
    good, bad = stored(state)
    assert (good.score, good.passed) == (0.5, None)
    assert (bad.score, bad.passed) == (None, None)
    assert bad.error.startswith("InvalidScoreError:")
    assert "rejected_score" in bad.metadata


def test_a_declared_range_is_enforced_on_what_the_evaluator_returns(tmp_path):
    def scorer(**_: Any) -> Feedback:
        return Feedback(score=7)

    evaluator = make_evaluator("ranged", scorer, score_range=(0.0, 1.0))
    (record,) = stored(run(EvalNode([EvalSpec(evaluator, threshold=0.5)]), tmp_path / "db"))
    assert (record.score, record.passed) == (None, None)
    assert record.error == (
        "InvalidScoreError: evaluator 'ranged' produced the score 7, outside its range "
        "(a number from 0 to 1)"
    )


def test_a_user_function_without_a_range_may_score_only_a_bool_or_zero_to_one(tmp_path):
    node = EvalNode(
        [EvalSpec(returning(7, "seven"), threshold=0.5), EvalSpec(returning(1, "one"), threshold=1)]
    )
    seven, one = stored(run(node, tmp_path / "db"))
    assert (seven.score, seven.passed) == (None, None)
    assert seven.error == (
        "InvalidScoreError: evaluator 'seven' produced the score 7, outside the range of an "
        "evaluator that declares none (a bool or a number from 0 to 1; declare score_range for "
        "another scale)"
    )
    assert (one.score, one.passed, one.error) == (1, True, None)


def test_a_user_function_declaring_its_range_keeps_scores_inside_it(tmp_path):
    node = EvalNode([EvalSpec(returning(7, "seven"), threshold=5, score_range=(0, 10))])
    (seven,) = stored(run(node, tmp_path / "db"))
    assert (seven.score, seven.passed, seven.error) == (7, True, None)


def test_stored_feedback_with_a_nan_score_is_an_error_when_read_back():
    record = EvalFeedback.model_validate({"key": "k", "score": NAN, "passed": True})
    assert (record.score, record.passed) == (None, None)
    assert record.error == "InvalidScoreError: the feedback holds a non-finite score (nan)"
    text = EvalFeedback.model_validate({"key": "k", "score": "0.9"})
    assert text.error == "InvalidScoreError: the feedback holds a str score, not a bool or a number"


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("threshold", NAN),
        ("weight", INF),
        ("timeout", 0),
        ("timeout", NAN),
        ("score_range", (1, 0)),
    ],
)
def test_eval_spec_rejects_non_finite_settings(option, value):
    with pytest.raises(InvalidOptionError):
        EvalSpec(returning(1.0), **{option: value})


# --- unserialisable data and unprintable errors --------------------------------------------


class Unprintable(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no str")

    def __repr__(self) -> str:
        raise RuntimeError("no repr")


def test_unserialisable_metadata_is_dropped_and_named_on_a_sqlite_host(tmp_path):
    looped: dict[str, Any] = {"name": "loop"}
    looped["self"] = looped
    metadata = {
        "o": object(),
        "f": lambda: 1,
        "lock": threading.Lock(),
        "loop": looped,
        "kept": {"n": 1, "xs": (1, 2.5, "s"), 3: "int key"},
        "nan": NAN,
    }
    node = EvalNode([returning({"score": True, "metadata": metadata})])
    state = run(node, tmp_path / "db")
    (record,) = stored(state)
    assert record.score is True and record.error is None
    assert record.metadata["kept"] == {"n": 1, "xs": [1, 2.5, "s"], "3": "int key"}
    assert record.metadata["loop"] == {"name": "loop"}
    assert sorted(d.split(":")[0] for d in record.metadata["dropped"]) == [
        "metadata.f",
        "metadata.lock",
        "metadata.loop.self",
        "metadata.nan",
        "metadata.o",
    ]


def test_an_exception_whose_str_raises_is_an_error_feedback(tmp_path):
    def broken(**_: Any) -> Any:
        raise Unprintable

    (record,) = stored(run(EvalNode([broken]), tmp_path / "db"))
    assert record.error == "Unprintable: <Unprintable that cannot be shown>"
    assert record.passed is None


def test_garbage_results_are_error_feedback(tmp_path):
    node = EvalNode([returning(object(), "obj"), returning([], "empty"), returning("yes", "text")])
    records = stored(run(node, tmp_path / "db"))
    assert [r.key for r in records] == ["obj", "empty", "text"]
    assert all(r.error and r.score is None and r.passed is None for r in records)


# --- timeouts -------------------------------------------------------------------------------


def sleeper(seconds: float, name: str) -> Any:
    def evaluator(**_: Any) -> bool:
        time.sleep(seconds)
        return True

    evaluator.__name__ = name
    return evaluator


class Hung:
    """Evaluators that hang until :meth:`release` (the end of the test): when the host
    returns while they still hang, it went on without them, whatever the machine's speed."""

    def __init__(self) -> None:
        self.released = threading.Event()
        self.returned: list[str] = []

    def sync(self, name: str) -> Any:
        def evaluator(**_: Any) -> bool:
            self.released.wait(120)
            self.returned.append(name)
            return True

        evaluator.__name__ = name
        return evaluator

    def awaited(self, name: str) -> Any:
        async def evaluator(**_: Any) -> bool:
            while not self.released.is_set():
                await asyncio.sleep(0.01)
            self.returned.append(name)
            return True

        evaluator.__name__ = name
        return evaluator

    def release(self) -> None:
        self.released.set()


@pytest.fixture
def hung() -> Any:
    evaluators = Hung()
    yield evaluators
    evaluators.release()


def test_a_hanging_evaluator_times_out_and_the_host_goes_on(tmp_path, hung):
    node = EvalNode([EvalSpec(hung.sync("hangs"), timeout=0.2), returning(True, "quick")])
    state = run(node, tmp_path / "db")
    assert hung.returned == []  # the node returned while "hangs" still ran
    hangs, quick = stored(state)
    assert hangs.error == (
        "EvaluatorTimeoutError: evaluator 'hangs' did not finish within its timeout of 0.2s; "
        "it was abandoned"
    )
    assert (quick.score, quick.error) == (True, None)
    assert state["log"] == ["start", "work", "finish:1"]


def test_the_node_timeout_bounds_all_evaluators_together(tmp_path, hung):
    node = EvalNode(
        [returning(True, "first"), hung.sync("second"), returning(1, "third")], timeout=0.6
    )
    first, second, third = stored(run(node, tmp_path / "db"))
    assert hung.returned == []
    assert first.error is None
    assert "did not finish within the node's timeout of 0.6s" in second.error
    assert "was not run: the node's timeout of 0.6s was used up" in third.error


def test_evaluator_timeout_is_the_default_for_every_spec(tmp_path, hung):
    node = EvalNode(
        [hung.sync("slow"), EvalSpec(sleeper(0.3, "allowed"), timeout=60)], evaluator_timeout=0.1
    )
    slow, allowed = stored(run(node, tmp_path / "db"))
    assert "within its timeout of 0.1s" in slow.error
    assert allowed.error is None


async def test_async_hosts_time_out_async_and_sync_evaluators(hung):
    node = EvalNode(
        [hung.awaited("async_hang"), hung.sync("sync_hang"), returning(True, "ok")],
        evaluator_timeout=0.2,
    )
    state = await arun(node, InMemorySaver())
    assert hung.returned == []
    hang_a, hang_s, ok = stored(state)
    assert "'async_hang' did not finish within its timeout of 0.2s" in hang_a.error
    assert "'sync_hang' did not finish within its timeout of 0.2s" in hang_s.error
    assert ok.score is True
    assert without_evaluations(state)["log"] == ["start", "work", "finish:1"]


def test_the_evaluation_graph_times_out_an_evaluator(hung):
    graph = create_evaluation_graph(
        [hung.sync("hangs"), returning(True, "ok")],
        evaluator_timeout=0.2,
        checkpointer=InMemorySaver(),
    )
    config = {"configurable": {"thread_id": "timeout"}}
    graph.invoke({"trajectory": TRAJECTORY}, config)
    result = EvaluationResult.model_validate(graph.get_state(config).values["result"])
    hangs, ok = result.results
    assert hangs.error.startswith("EvaluatorTimeoutError")
    assert result.passed is False and ok.score is True


def test_timeouts_must_be_positive():
    with pytest.raises(InvalidOptionError, match="timeout"):
        EvalNode([returning(True)], timeout=-1)
    with pytest.raises(InvalidOptionError, match="evaluator_timeout"):
        create_evaluation_graph([returning(True)], evaluator_timeout=0)
