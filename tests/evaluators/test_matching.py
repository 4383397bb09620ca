"""Maximum bipartite matching, call pairing and max-weight assignment."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from lg_eval.evaluators._matching import max_weight_assignment, maximum_matching
from lg_eval.evaluators._tool_calls import ArgsPolicy, max_pairs


def brute_force_size(adjacency: list[list[int]]) -> int:
    """The largest matching by exhaustive search (small graphs only)."""

    def best(u: int, used: frozenset[int]) -> int:
        if u == len(adjacency):
            return 0
        skip = best(u + 1, used)
        take = [1 + best(u + 1, used | {v}) for v in adjacency[u] if v not in used]
        return max([skip, *take])

    return best(0, frozenset())


graphs = st.integers(0, 6).flatmap(
    lambda n_right: st.tuples(
        st.just(n_right),
        st.lists(
            st.lists(st.integers(0, max(n_right - 1, 0)), max_size=n_right, unique=True)
            if n_right
            else st.just([]),
            max_size=6,
        ).map(lambda rows: [row if n_right else [] for row in rows]),
    )
)


@settings(max_examples=200, deadline=None)
@given(graphs)
def test_maximum_matching_is_as_large_as_exhaustive_search(graph):
    n_right, adjacency = graph
    match = maximum_matching(adjacency, n_right)
    partners = [v for v in match if v != -1]
    assert len(partners) == len(set(partners))
    assert all(v == -1 or v in adjacency[u] for u, v in enumerate(match))
    assert len(partners) == brute_force_size(adjacency)


def test_first_fit_trap_is_resolved_by_augmenting():
    # Left 0 could take right 0 or 1; left 1 only right 0. First-fit gives 0->0 and strands 1.
    assert maximum_matching([[0, 1], [0]], 2) == [1, 0]


def test_long_augmenting_paths_do_not_recurse():
    n = 5_000  # a chain: every left but the last prefers the right its successor needs
    adjacency = [[i, i + 1] if i + 1 < n else [i] for i in range(n)]
    adjacency = [list(reversed(row)) for row in adjacency]
    match = maximum_matching(adjacency, n)
    assert sorted(match) == list(range(n))


weights = st.integers(1, 4).flatmap(
    lambda cols: st.lists(
        st.lists(st.sampled_from([0.0, 0.25, 0.5, 1.0]), min_size=cols, max_size=cols),
        min_size=1,
        max_size=4,
    )
)


@settings(max_examples=200, deadline=None)
@given(weights)
def test_max_weight_assignment_matches_exhaustive_search(matrix):
    rows, cols = len(matrix), len(matrix[0])
    result = max_weight_assignment(matrix)
    chosen = [c for c in result if c != -1]
    assert len(chosen) == len(set(chosen)) == min(rows, cols)
    total = sum(matrix[r][c] for r, c in enumerate(result) if c != -1)
    if rows <= cols:
        best = max(
            sum(matrix[r][p[r]] for r in range(rows))
            for p in itertools.permutations(range(cols), rows)
        )
    else:
        best = max(
            sum(matrix[p[c]][c] for c in range(cols))
            for p in itertools.permutations(range(rows), cols)
        )
    assert abs(total - best) < 1e-9


def test_max_weight_assignment_of_empty_matrix():
    assert max_weight_assignment([]) == []


def calls(*specs):
    return [{"name": name, "args": args} for name, args in specs]


def test_max_pairs_pairs_only_same_name_calls():
    pairs = max_pairs(
        calls(("f", {}), ("g", {})), calls(("g", {}), ("h", {})), ArgsPolicy("ignore")
    )
    assert pairs == [(1, 0)]


def test_max_pairs_with_exact_args_pairs_each_duplicate_once():
    actual = calls(("f", {"a": 1}), ("f", {"a": 1}), ("f", {"a": 2}))
    reference = calls(("f", {"a": 2}), ("f", {"a": 1}))
    assert max_pairs(actual, reference, ArgsPolicy("exact")) == [(2, 0), (0, 1)]


def test_max_pairs_exact_treats_one_and_one_point_zero_as_equal_like_python():
    pairs = max_pairs(calls(("f", {"n": 1})), calls(("f", {"n": 1.0})), ArgsPolicy("exact"))
    assert pairs == [(0, 0)]


def test_max_pairs_with_superset_rule_finds_the_pairing_first_fit_misses():
    actual = calls(("f", {"a": 1}), ("f", {"b": 2}))
    reference = calls(("f", {}), ("f", {"a": 1}))
    assert max_pairs(actual, reference, ArgsPolicy("superset")) == [(1, 0), (0, 1)]


def test_max_pairs_with_subset_rule_uses_the_item_index():
    actual = calls(("f", {"a": 1}), ("f", {}))
    reference = calls(("f", {"a": 1, "b": 2}), ("f", {"c": 3}))
    assert len(max_pairs(actual, reference, ArgsPolicy("subset"))) == 2


def test_max_pairs_with_a_custom_rule_tests_every_pair():
    def close(actual, reference):
        return abs(actual["x"] - reference["x"]) <= 1

    actual = calls(("f", {"x": 1}), ("f", {"x": 3}))
    reference = calls(("f", {"x": 2}), ("f", {"x": 0}))
    pairs = max_pairs(actual, reference, ArgsPolicy("exact", {"f": close}))
    assert pairs == [(1, 0), (0, 1)]
