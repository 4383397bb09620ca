"""Field-list overrides: a missing path reads as None, or fails with require_override_fields."""

from __future__ import annotations

import pytest

from lg_eval.errors import InvalidOptionError
from lg_eval.evaluators import create_trajectory_match_evaluator
from tests.evaluators.builders import call, run

OVERRIDES = {"search": ["filters.city"]}


def score(outputs, reference, *, required: bool, mode: str = "unordered") -> bool:
    evaluator = create_trajectory_match_evaluator(
        trajectory_match_mode=mode,
        tool_args_match_overrides=OVERRIDES,
        require_override_fields=required,
    )
    return evaluator(outputs=outputs, reference_outputs=reference)["score"]


def test_a_path_missing_on_both_sides_reads_as_none_by_default() -> None:
    calls = run([call("search", q="a"), call("search", filters={})])
    assert score(calls, calls, required=False) is True


def test_a_required_path_missing_on_both_sides_pairs_with_nothing() -> None:
    calls = run([call("search", q="a"), call("search", filters={})])
    evaluator = create_trajectory_match_evaluator(
        trajectory_match_mode="unordered",
        tool_args_match_overrides=OVERRIDES,
        require_override_fields=True,
    )
    result = evaluator(outputs=calls, reference_outputs=calls)
    assert result["score"] is False
    assert result["metadata"]["pairs"] == []
    assert [c["index"] for c in result["metadata"]["missing"]] == [0, 1]
    assert score(calls, calls, required=True, mode="subset") is False
    assert score(run([]), calls, required=True, mode="subset") is True


def test_a_required_path_present_as_none_on_both_sides_matches() -> None:
    calls = run([call("search", filters={"city": None})])
    assert score(calls, calls, required=True) is True
    other = run([call("search", filters={})])
    assert score(calls, other, required=True) is False
    assert score(calls, other, required=False) is True


def test_required_paths_pair_calls_with_equal_values_there_only() -> None:
    actual = run([call("search", filters={"city": "b"}), call("search", filters={"city": "a"})])
    swapped = run(
        [
            call("search", filters={"city": "a", "day": 1}),
            call("search", q="b", filters={"city": "b"}),
        ]
    )
    assert score(actual, swapped, required=True) is True
    partly = run([call("search", filters={"city": "a"}), call("search", filters={})])
    assert score(actual, partly, required=True, mode="superset") is False


def test_require_override_fields_must_be_a_bool() -> None:
    with pytest.raises(
        InvalidOptionError,
        match=r"^require_override_fields='yes': input should be a valid boolean\.$",
    ):
        create_trajectory_match_evaluator(require_override_fields="yes")  # type: ignore[arg-type]
