"""The tool-call pairing core: one vocabulary, one argument policy, one pairing.

Properties of :func:`pair_tool_calls` against brute-force oracles, and the
same mode strings meaning the same thing in the trajectory match, the tool
sequence check and the tool metrics.
"""

from __future__ import annotations

import functools
import itertools
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lg_eval.errors import InvalidOptionError
from lg_eval.evaluators import (
    SEQUENCE_MODES,
    TOOL_ARGS_MATCH_MODES,
    TRAJECTORY_MATCH_MODES,
    create_argument_precision_evaluator,
    create_tool_order_evaluator,
    create_tool_selection_evaluator,
    create_tool_sequence_evaluator,
    create_trajectory_match_evaluator,
)
from lg_eval.evaluators._tool_calls import (
    CALL_MATCH_MODES,
    EXACT,
    ArgsPolicy,
    check_mode,
    max_pairs,
    order_pairs,
    pair_tool_calls,
)

from .builders import ai, user
from .test_tool_match_differential import largest_pairing as exhaustive_pairing

SETTINGS = settings(max_examples=60, deadline=2000)

arguments = st.dictionaries(st.sampled_from(["a", "b"]), st.integers(0, 2), max_size=2)
actual_calls = st.lists(
    st.fixed_dictionaries({"name": st.sampled_from(["f", "g"]), "args": arguments}), max_size=5
)
expected_calls = st.lists(
    st.fixed_dictionaries(
        {"name": st.sampled_from(["f", "g"]), "args": st.one_of(arguments, st.none())}
    ),
    max_size=5,
)
policies = st.sampled_from(["exact", "ignore", "subset", "superset"]).map(ArgsPolicy)


def largest_pairing(actual: list, expected: list, policy: ArgsPolicy) -> int:
    """The most fitting pairs, each call used once, by exhaustive search."""
    return exhaustive_pairing(
        [(c["name"], c["args"]) for c in actual],
        [(c["name"], c["args"]) for c in expected],
        lambda a, e: policy.test(a[0], a[1], e[1]),
    )


def longest_in_order(actual: list, expected: list, policy: ArgsPolicy) -> int:
    """The longest common subsequence of fitting calls, by plain (memoized) recursion."""

    @functools.cache
    def best(i: int, j: int) -> int:
        if i == len(actual) or j == len(expected):
            return 0
        options = [best(i + 1, j), best(i, j + 1)]
        if policy.fits(actual[i], expected[j]):
            options.append(1 + best(i + 1, j + 1))
        return max(options)

    return best(0, 0)


def passes(mode: str, actual: list, expected: list, policy: ArgsPolicy) -> bool:
    return pair_tool_calls(actual, expected, mode=mode, policy=policy).passed  # type: ignore[arg-type]


# --------------------------------------------------------------------------- vocabulary


def test_one_mode_vocabulary():
    assert CALL_MATCH_MODES == ("strict", "in_order", "unordered", "subset", "superset")
    assert SEQUENCE_MODES == CALL_MATCH_MODES
    assert set(TRAJECTORY_MATCH_MODES) == set(CALL_MATCH_MODES) - {"in_order"}
    assert TOOL_ARGS_MATCH_MODES == ("exact", "ignore", "subset", "superset")


def test_check_mode_names_the_option_and_the_allowed_modes():
    assert check_mode("in_order", "mode") == "in_order"
    with pytest.raises(InvalidOptionError, match=r"^m='any' .* strict, in_order, unordered"):
        check_mode("any", "m")
    with pytest.raises(InvalidOptionError, match="strict, unordered, subset, superset"):
        check_mode("in_order", "trajectory_match_mode", TRAJECTORY_MATCH_MODES)


# --------------------------------------------------------------------------- properties


@SETTINGS
@given(actual_calls, expected_calls, policies, st.sampled_from(["superset", "subset"]))
def test_superset_and_subset_pass_iff_every_call_on_one_side_pairs_with_a_distinct_call(
    actual, expected, policy, mode
):
    """superset: every expected call has its own actual call; subset: every actual call."""
    side = expected if mode == "superset" else actual
    assert passes(mode, actual, expected, policy) == (
        largest_pairing(actual, expected, policy) == len(side)
    )


@SETTINGS
@given(actual_calls, expected_calls, policies)
def test_unordered_is_subset_and_superset_with_equal_counts(actual, expected, policy):
    unordered = passes("unordered", actual, expected, policy)
    both = passes("subset", actual, expected, policy) and passes(
        "superset", actual, expected, policy
    )
    assert unordered == both
    if unordered:
        assert len(actual) == len(expected)


@SETTINGS
@given(actual_calls, expected_calls, policies)
def test_strict_implies_in_order_implies_superset(actual, expected, policy):
    strict = passes("strict", actual, expected, policy)
    in_order = passes("in_order", actual, expected, policy)
    superset = passes("superset", actual, expected, policy)
    assert not strict or in_order
    assert not in_order or superset
    if strict:
        assert passes("unordered", actual, expected, policy)


@SETTINGS
@given(actual_calls, expected_calls, policies)
def test_in_order_passes_iff_the_expected_calls_are_a_subsequence(actual, expected, policy):
    longest = longest_in_order(actual, expected, policy)
    assert passes("in_order", actual, expected, policy) == (longest == len(expected))
    pairs = order_pairs(actual, expected, policy)
    assert len(pairs) == longest
    assert all(policy.fits(actual[i], expected[j]) for i, j in pairs)
    assert all(a < c and b < d for (a, b), (c, d) in itertools.pairwise(pairs))


@SETTINGS
@given(actual_calls, expected_calls, policies, st.sampled_from(CALL_MATCH_MODES))
def test_pairs_missing_and_unexpected_account_for_every_call(actual, expected, policy, mode):
    pairing = pair_tool_calls(actual, expected, mode=mode, policy=policy)
    assert all(policy.fits(actual[i], expected[j]) for i, j in pairing.pairs)
    paired_actual = [i for i, _ in pairing.pairs]
    paired_expected = [j for _, j in pairing.pairs]
    assert len(set(paired_actual)) == len(paired_actual)
    assert paired_expected == sorted(set(paired_expected))
    out_of_order = pairing.order.out_of_order if pairing.order else ()
    assert sorted([*paired_expected, *pairing.missing, *out_of_order]) == list(range(len(expected)))
    assert sorted([*paired_actual, *pairing.unexpected]) == list(range(len(actual)))
    if mode != "in_order":
        assert len(pairing.pairs) == largest_pairing(actual, expected, policy)


@SETTINGS
@given(actual_calls, actual_calls)
def test_equivalence_rules_and_the_general_search_find_equally_long_in_order_pairings(
    actual, expected
):
    """Exact args go through rapidfuzz; a callable with the same meaning, through the DP."""
    same = ArgsPolicy("exact", {"f": lambda a, r: a == r, "g": lambda a, r: a == r})
    assert len(order_pairs(actual, expected, EXACT)) == len(order_pairs(actual, expected, same))


# --------------------------------------------------------------------------- wildcards


def test_a_wildcard_expected_call_takes_any_call_left_over():
    actual = [{"name": "f", "args": {"a": 1}}, {"name": "f", "args": {"a": 2}}]
    expected = [{"name": "f", "args": None}, {"name": "f", "args": {"a": 1}}]
    assert max_pairs(actual, expected, EXACT) == [(1, 0), (0, 1)]
    assert EXACT.test("f", {"anything": 1}, None)
    assert EXACT.compared_values("f", {"a": 1}, None) == {}


def test_compared_values_follow_the_args_mode():
    actual, expected = {"a": 1, "b": 2}, {"a": 1, "c": 3}
    assert list(ArgsPolicy("superset").compared_values("t", actual, expected)) == ["a", "c"]
    assert list(ArgsPolicy("subset").compared_values("t", actual, expected)) == ["a", "b"]
    assert list(ArgsPolicy("exact").compared_values("t", actual, expected)) == ["a", "c", "b"]
    assert ArgsPolicy("ignore").compared_values("t", actual, expected) == {}
    fields = ArgsPolicy("exact", {"t": ["f.x", "a", "zz"]})
    assert fields.compared_values("t", {"f": {"x": 5}, "a": 1}, {"f": {"x": 6}, "a": 1}) == {
        "f.x": (5, 6),
        "a": (1, 1),
    }


# --------------------------------------------------------------------------- one meaning everywhere


def one_call_per_message(calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    messages = [user()]
    for call in calls:
        messages.append(ai({"name": call["name"], "args": call["args"]}))
        messages.append({"role": "tool", "content": "ok"})
    return messages


@SETTINGS
@given(
    actual_calls,
    actual_calls,
    st.sampled_from(TRAJECTORY_MATCH_MODES),
    st.sampled_from(TOOL_ARGS_MATCH_MODES),
)
def test_a_mode_means_the_same_in_the_trajectory_match_and_the_sequence_check(
    actual, expected, mode, args_mode
):
    options = {"trajectory_match_mode": mode, "tool_args_match_mode": args_mode}
    trajectory = create_trajectory_match_evaluator(**options)(
        outputs=one_call_per_message(actual), reference_outputs=one_call_per_message(expected)
    )
    sequence = create_tool_sequence_evaluator(expected, **options)(outputs=actual)
    core = passes(mode, actual, expected, ArgsPolicy(args_mode))
    assert trajectory["score"] is sequence["score"] is core
    if mode != "strict":  # the trajectory's strict mode reports by message
        assert trajectory["metadata"] == sequence["metadata"]


@SETTINGS
@given(actual_calls, actual_calls)
def test_tool_order_is_the_in_order_pairing_of_tool_names(actual, expected):
    names = [call["name"] for call in expected]
    order = create_tool_order_evaluator(names)(outputs=actual)
    in_order = create_tool_sequence_evaluator(names, trajectory_match_mode="in_order")
    assert (order["score"] == 1.0) is in_order(outputs=actual)["score"]
    assert order["metadata"]["lcs_length"] == longest_in_order(
        actual, expected, ArgsPolicy("ignore")
    )


@SETTINGS
@given(actual_calls, actual_calls)
def test_tool_selection_is_the_pairing_of_distinct_tool_names(actual, expected):
    names = sorted({call["name"] for call in expected})
    selection = create_tool_selection_evaluator(names)(outputs=actual)
    superset = create_tool_sequence_evaluator(names, trajectory_match_mode="superset")
    if names:
        assert (selection["score"] == 1.0) is superset(outputs=actual)["score"]


@SETTINGS
@given(actual_calls, expected_calls, st.sampled_from(TOOL_ARGS_MATCH_MODES))
def test_full_argument_precision_is_a_superset_pairing_under_the_same_args_mode(
    actual, expected, args_mode
):
    precision = create_argument_precision_evaluator(
        expected, word_overlap=False, tool_args_match_mode=args_mode
    )(outputs=actual)
    superset = create_tool_sequence_evaluator(
        expected, trajectory_match_mode="superset", tool_args_match_mode=args_mode
    )(outputs=actual)
    assert (precision["score"] == pytest.approx(1.0)) is superset["score"]


def test_argument_precision_grades_the_arguments_the_args_mode_compares():
    expected = [{"name": "s", "args": {"q": "x"}}]
    actual = [{"name": "s", "args": {"q": "x", "page": 2}}]
    assert create_argument_precision_evaluator(expected)(outputs=actual)["score"] == 1.0
    exact = create_argument_precision_evaluator(expected, tool_args_match_mode="exact")
    result = exact(outputs=actual)
    assert result["score"] == 0.5
    assert result["comment"] == "Arguments below 1.0: s.page 0.00."
    fields = create_argument_precision_evaluator(
        expected, tool_args_match_mode="exact", tool_args_match_overrides={"s": ["q"]}
    )
    assert fields(outputs=actual)["score"] == 1.0


def test_argument_precision_refuses_a_callable_override():
    with pytest.raises(InvalidOptionError, match=r"tool_args_match_overrides\['s'\] is a callable"):
        create_argument_precision_evaluator(
            [], tool_args_match_overrides={"s": lambda actual, expected: True}
        )
