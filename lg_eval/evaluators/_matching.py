"""Matching algorithms behind tool-call pairing: maximum matching, max-weight assignment.

First-fit greedy pairing (take the first compatible call) is only right when
compatibility is an equivalence. With partial-argument rules it can use up the
one call another reference needed and report a miss that is not there. Here
pairing is a maximum matching (Hopcroft–Karp), so a pairing is found whenever
one exists.

To stay fast on long runs, the pairing core (:mod:`lg_eval.evaluators._tool_calls`)
groups calls by tool name (only same-name calls can pair) and :func:`pair_args`
pairs one group: equivalence rules pair inside hash buckets with no pairwise
test, and preorder rules pair identical arguments first (never loses a pairing,
see :mod:`lg_eval.evaluators._tool_args`) before the general algorithm runs.
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Callable, Hashable, Sequence

from lg_eval.evaluators._tool_args import Args, ArgsRule, freeze

_FREE = -1


def maximum_matching(adjacency: Sequence[Sequence[int]], n_right: int) -> list[int]:
    """A maximum matching of a bipartite graph (Hopcroft–Karp, iterative).

    ``adjacency[u]`` lists the right vertices left vertex ``u`` may pair with.
    Returns, for each left vertex, its right partner or ``-1``.
    """
    match_left = [_FREE] * len(adjacency)
    match_right = [_FREE] * n_right
    for u, neighbours in enumerate(adjacency):  # a greedy start saves most phases
        for v in neighbours:
            if match_right[v] == _FREE:
                match_left[u], match_right[v] = v, u
                break
    while True:
        layer = _layers(adjacency, match_left, match_right)
        if layer is None:
            return match_left
        pointer = [0] * len(adjacency)
        for root in range(len(adjacency)):
            if match_left[root] == _FREE:
                _augment(root, adjacency, match_left, match_right, layer, pointer)


def _layers(
    adjacency: Sequence[Sequence[int]], match_left: list[int], match_right: list[int]
) -> list[float] | None:
    """BFS layers from the free left vertices; ``None`` when no augmenting path exists."""
    infinity = float("inf")
    layer = [infinity] * len(adjacency)
    queue: deque[int] = deque()
    for u, partner in enumerate(match_left):
        if partner == _FREE:
            layer[u] = 0
            queue.append(u)
    reachable_free = False
    while queue:
        u = queue.popleft()
        for v in adjacency[u]:
            w = match_right[v]
            if w == _FREE:
                reachable_free = True
            elif layer[w] == infinity:
                layer[w] = layer[u] + 1
                queue.append(w)
    return layer if reachable_free else None


def _augment(
    root: int,
    adjacency: Sequence[Sequence[int]],
    match_left: list[int],
    match_right: list[int],
    layer: list[float],
    pointer: list[int],
) -> bool:
    """Depth-first search for one augmenting path along the layers, without recursion."""
    path = [root]
    chosen: dict[int, int] = {}
    while path:
        u = path[-1]
        neighbours = adjacency[u]
        advanced = False
        while pointer[u] < len(neighbours):
            v = neighbours[pointer[u]]
            pointer[u] += 1
            w = match_right[v]
            if w == _FREE:
                chosen[u] = v
                for left in path:  # flip the path: each left takes the right it chose
                    match_left[left] = chosen[left]
                    match_right[chosen[left]] = left
                return True
            if layer[w] == layer[u] + 1:
                chosen[u] = v
                path.append(w)
                advanced = True
                break
        if not advanced:
            layer[u] = float("inf")  # dead end for this phase
            path.pop()
    return False


def pair_args(left: list[Args], right: list[Args], rule: ArgsRule) -> list[tuple[int, int]]:
    """A maximum pairing of two lists of arguments (positions), using the rule's shortcuts.

    ``left`` holds the actual calls' args and ``right`` the expected calls' args, all of
    one tool; a pair ``(u, v)`` needs ``rule.test(left[u], right[v])``.
    """
    if rule.key is not None:
        return _pair_equal(left, right, rule.key)[0]
    pairs: list[tuple[int, int]] = []
    open_left, open_right = list(range(len(left))), list(range(len(right)))
    if rule.preorder:
        pairs, open_left, open_right = _pair_equal(left, right, freeze)
    rest_left, rest_right = [left[u] for u in open_left], [right[v] for v in open_right]
    if rule.container is not None:
        adjacency = _contained(rest_left, rest_right, rule.container)
    else:
        adjacency = [[n for n, r in enumerate(rest_right) if rule.test(a, r)] for a in rest_left]
    for u, v in enumerate(maximum_matching(adjacency, len(rest_right))):
        if v != _FREE:
            pairs.append((open_left[u], open_right[v]))
    return pairs


def _contained(left: list[Args], right: list[Args], container: str) -> list[list[int]]:
    """Adjacency for "one side's args contain every item of the other's", via an item index.

    Instead of testing every pair, index the containing side's argument items
    and intersect the candidate sets of each item the contained side needs.
    """
    holders, needs = (left, right) if container == "actual" else (right, left)
    index: dict[Hashable, set[int]] = defaultdict(set)
    for position, args in enumerate(holders):
        for name, value in args.items():
            index[(name, freeze(value))].add(position)
    everyone = set(range(len(holders)))
    candidates = []
    for args in needs:
        sets = sorted((index.get((k, freeze(v)), set()) for k, v in args.items()), key=len)
        candidates.append(set.intersection(*sets) if sets else everyone)
    if container == "reference":  # the left side needs: candidates are right positions
        return [sorted(found) for found in candidates]
    adjacency: list[list[int]] = [[] for _ in left]
    for n, found in enumerate(candidates):
        for position in found:
            adjacency[position].append(n)
    return adjacency


def _pair_equal(
    left: list[Args], right: list[Args], key: Callable[[Args], Hashable]
) -> tuple[list[tuple[int, int]], list[int], list[int]]:
    """Pair positions whose args have equal keys, in order; also return the unpaired ones."""
    waiting: dict[Hashable, deque[int]] = defaultdict(deque)
    for v, args in enumerate(right):
        waiting[key(args)].append(v)
    pairs: list[tuple[int, int]] = []
    unpaired_left: list[int] = []
    for u, args in enumerate(left):
        queue = waiting.get(key(args))
        if queue:
            pairs.append((u, queue.popleft()))
        else:
            unpaired_left.append(u)
    paired_right = {v for _, v in pairs}
    return pairs, unpaired_left, [v for v in range(len(right)) if v not in paired_right]


def max_weight_assignment(weights: Sequence[Sequence[float]]) -> list[int]:
    """Pair rows with columns to maximize the total weight (Hungarian algorithm).

    Weights are non-negative; every row is paired when there are enough
    columns. Returns, for each row, its column or ``-1``. O(n²·m); above
    ``250_000`` cells a greedy pass (heaviest pairs first) keeps it fast.
    """
    rows = len(weights)
    cols = len(weights[0]) if rows else 0
    if rows == 0 or cols == 0:
        return [_FREE] * rows
    if rows * cols > 250_000:
        return _greedy_assignment(weights)
    if rows > cols:  # the algorithm wants rows <= cols: solve the transpose
        by_col = max_weight_assignment([list(col) for col in zip(*weights, strict=True)])
        result = [_FREE] * rows
        for col, row in enumerate(by_col):
            if row != _FREE:
                result[row] = col
        return result
    return _hungarian(weights, rows, cols)


def _hungarian(weights: Sequence[Sequence[float]], rows: int, cols: int) -> list[int]:
    top = max(max(row) for row in weights)
    cost = [[top - w for w in row] for row in weights]  # minimize cost == maximize weight
    infinity = float("inf")
    u = [0.0] * (rows + 1)
    v = [0.0] * (cols + 1)
    owner = [0] * (cols + 1)  # owner[c] = row (1-based) holding column c; 0 = free
    for row in range(1, rows + 1):
        owner[0] = row
        way = [0] * (cols + 1)
        slack = [infinity] * (cols + 1)
        used = [False] * (cols + 1)
        col = 0
        while owner[col]:
            used[col] = True
            r, delta, nxt = owner[col], infinity, 0
            for c in range(1, cols + 1):
                if used[c]:
                    continue
                reduced = cost[r - 1][c - 1] - u[r] - v[c]
                if reduced < slack[c]:
                    slack[c], way[c] = reduced, col
                if slack[c] < delta:
                    delta, nxt = slack[c], c
            for c in range(cols + 1):
                if used[c]:
                    u[owner[c]] += delta
                    v[c] -= delta
                else:
                    slack[c] -= delta
            col = nxt
        while col:
            previous = way[col]
            owner[col] = owner[previous]
            col = previous
    result = [_FREE] * rows
    for c in range(1, cols + 1):
        if owner[c]:
            result[owner[c] - 1] = c - 1
    return result


def _greedy_assignment(weights: Sequence[Sequence[float]]) -> list[int]:
    cells = sorted(
        ((w, r, c) for r, row in enumerate(weights) for c, w in enumerate(row)), reverse=True
    )
    result = [_FREE] * len(weights)
    taken: set[int] = set()
    for _, r, c in cells:
        if result[r] == _FREE and c not in taken:
            result[r] = c
            taken.add(c)
    return result
