"""``langsmith.evaluate`` over examples whose inputs hold a simulated user, offline: the
case round-trips through an example, ``graph_target`` plays the conversation with the
``user_model`` it is given (examples are remote data: they may not name code), and the
conversation judges score it with the example's persona and goal as ``inputs``."""

from __future__ import annotations

from langsmith import evaluate

from lg_eval.datasets import Dataset
from lg_eval.langsmith import (
    case_from_example,
    case_to_example,
    graph_target,
    offline,
    offline_client,
)
from tests.langsmith.helpers import examples_of
from tests.play import support
from tests.play.support import FRUSTRATION_MODEL

DATASET = Dataset.model_validate(
    {
        "name": "support-simulated",
        "cases": [
            {
                "id": "refund",
                "user": {
                    "persona": "a customer whose blender arrived broken",
                    "goal": "a refund for order 42",
                    "stop": {"tool_call": {"name": "refund"}},
                },
            }
        ],
    }
)


def test_an_example_holds_the_user_and_reads_back_as_the_case() -> None:
    (case,) = DATASET.cases
    example = case_to_example(case)
    assert example["inputs"] == {
        "turns": [],
        "user": case.user.model_dump(mode="json") if case.user else None,
    }
    back = case_from_example(
        example["inputs"], example["outputs"], example["metadata"], fallback_id="x"
    )
    assert back.model_dump() == case.model_dump()


def test_evaluate_plays_the_conversation_and_the_frustration_judge_reads_it() -> None:
    target = graph_target(
        "tests.play.support:build", checkpointer="memory://", user_model=support.customer_model()
    )
    before = len(FRUSTRATION_MODEL.calls)
    with offline():
        results = evaluate(
            target,
            data=examples_of(DATASET),
            evaluators=[support.frustration],
            upload_results=False,
            client=offline_client(),
            max_concurrency=0,
        )
        (row,) = list(results)
    outputs = row["run"].outputs
    assert [m["content"] for m in outputs["messages"] if m["role"] == "user"] == [
        "Hi, I want a refund for my blender.",
        "It's order 42.",
        "It arrived broken.",
    ]
    assert outputs["output"] == support.DONE.format(order="42")
    scores = [(r.key, r.score) for r in row["evaluation_results"]["results"]]
    assert scores == [("user_frustration", 1.0), ("user_frustration.calm", 5)]
    (judged,) = FRUSTRATION_MODEL.calls[before:]
    assert '"goal": "a refund for order 42"' in judged.prompt  # the example's inputs
