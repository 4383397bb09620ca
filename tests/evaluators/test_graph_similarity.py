"""Graph trajectory similarity: 1 - edit distance / length, per turn and overall."""

from __future__ import annotations

import pytest

from lg_eval.errors import InvalidOptionError
from lg_eval.evaluators import create_graph_trajectory_similarity_evaluator


def steps(*turns):
    return {"steps": [list(turn) for turn in turns]}


def similarity(outputs, reference, **options):
    evaluator = create_graph_trajectory_similarity_evaluator(**options)
    return evaluator(outputs=outputs, reference_outputs=reference)


def test_identical_trajectories_score_one_without_comment():
    result = similarity(steps(["a", "b"], ["c"]), steps(["a", "b"], ["c"]))
    assert result["key"] == "graph_trajectory_similarity"
    assert result["score"] == 1.0
    assert result["comment"] is None


def test_two_empty_trajectories_score_one():
    assert similarity(steps(), steps())["score"] == 1.0


def test_one_inserted_step_in_four():
    result = similarity(
        steps(["__start__", "agent", "search", "tools"]), steps(["__start__", "agent", "tools"])
    )
    assert result["score"] == pytest.approx(0.75)
    turn = result["metadata"]["turns"][0]
    assert turn["inserted"] == [{"actual_index": 2, "node": "search"}]
    assert turn["deleted"] == [] and turn["substituted"] == []
    assert result["comment"] == "Turn 1: inserted 'search'."


def test_deleted_and_substituted_steps_are_reported():
    result = similarity(steps(["a", "x"]), steps(["a", "b", "c"]))
    turn = result["metadata"]["turns"][0]
    assert result["score"] == pytest.approx(1 - 2 / 3)
    assert turn["distance"] == 2
    assert len(turn["deleted"]) == 1 and len(turn["substituted"]) == 1
    assert turn["substituted"][0]["node"] == "x"


def test_overall_score_weighs_turns_by_length():
    result = similarity(steps(["a", "b", "c", "d"], ["x"]), steps(["a", "b", "c", "d"], ["y"]))
    # turn 1: distance 0 of 4, turn 2: distance 1 of 1 -> 1 - 1/5
    assert result["score"] == pytest.approx(0.8)
    assert [t["score"] for t in result["metadata"]["turns"]] == [1.0, 0.0]


def test_a_missing_turn_counts_as_fully_deleted():
    result = similarity(steps(["a", "b"]), steps(["a", "b"], ["c", "d"]))
    assert result["score"] == pytest.approx(0.5)
    assert result["metadata"]["turns"][1]["deleted"] == [
        {"reference_index": 0, "node": "c"},
        {"reference_index": 1, "node": "d"},
    ]


def test_thread_scope_ignores_turn_boundaries():
    actual, reference = steps(["a", "b"], ["c"]), steps(["a"], ["b", "c"])
    assert similarity(actual, reference)["score"] < 1.0
    assert similarity(actual, reference, scope="thread")["score"] == 1.0


def test_ignored_nodes_do_not_count():
    result = similarity(steps(["__start__", "a"]), steps(["a"]), ignore_nodes=["__start__"])
    assert result["score"] == 1.0


def test_unicode_node_names():
    assert similarity(steps(["café", "naïve"]), steps(["café", "naive"]))["score"] == 0.5


def test_bad_option_fails_at_creation():
    with pytest.raises(InvalidOptionError, match="turn, thread"):
        create_graph_trajectory_similarity_evaluator(scope="run")  # type: ignore[arg-type]


async def test_async_twin():
    evaluator = create_graph_trajectory_similarity_evaluator().as_async()
    result = await evaluator(outputs=steps(["a"]), reference_outputs=steps(["b"]))
    assert result["score"] == 0.0
