"""Expected against actual trajectory, turn by turn: what a failed case did differently.

For each turn the two node sequences are aligned (``difflib``'s longest common
subsequence) so a side-by-side view can highlight the steps outside the common part;
the first differing position and the ``missing`` / ``unexpected`` nodes (counted with
repeats, like ``graph_trajectory_*_match``'s metadata) say in words what changed.
"""

from __future__ import annotations

from collections import Counter
from difflib import SequenceMatcher
from itertools import zip_longest

from lg_eval.experiments import CaseResult
from lg_eval.reports.model import Step, TurnDiff


def sides(result: CaseResult) -> tuple[list[list[str]], list[list[str]]] | None:
    """The (expected, actual) trajectories of a result, or None when one is unknown.

    The result's own fields come first; a ``graph_trajectory_*`` feedback's metadata
    (``reference`` / ``actual``) fills in when the runner did not store them.
    """
    expected, actual = result.expected_trajectory, result.trajectory
    for row in result.scores:
        if expected is not None and actual is not None:
            break
        meta = row.metadata or {}
        if row.key.startswith("graph_trajectory_") and "reference" in meta:
            expected = expected if expected is not None else meta.get("reference")
            actual = actual if actual is not None else meta.get("actual")
    if expected is None or actual is None:
        return None
    return expected, actual


def diff_turns(expected: list[list[str]], actual: list[list[str]]) -> list[TurnDiff]:
    """One :class:`TurnDiff` per turn of the longer trajectory."""
    empty: list[str] = []
    return [
        diff_turn(turn, list(e), list(a))
        for turn, (e, a) in enumerate(zip_longest(expected, actual, fillvalue=empty))
    ]


def diff_turn(turn: int, expected: list[str], actual: list[str]) -> TurnDiff:
    """The difference of one turn's node sequences."""
    expected_marks = [True] * len(expected)
    actual_marks = [True] * len(actual)
    matcher = SequenceMatcher(None, expected, actual, autojunk=False)
    for tag, e0, e1, a0, a1 in matcher.get_opcodes():
        if tag == "equal":
            expected_marks[e0:e1] = [False] * (e1 - e0)
            actual_marks[a0:a1] = [False] * (a1 - a0)
    first = next(
        (i for i, (e, a) in enumerate(zip_longest(expected, actual, fillvalue=None)) if e != a),
        None,
    )
    return TurnDiff(
        turn=turn,
        expected=[Step(name=n, differs=d) for n, d in zip(expected, expected_marks, strict=True)],
        actual=[Step(name=n, differs=d) for n, d in zip(actual, actual_marks, strict=True)],
        match=first is None,
        first_difference=first,
        missing=list((Counter(expected) - Counter(actual)).elements()),
        unexpected=list((Counter(actual) - Counter(expected)).elements()),
        reason=None if first is None else _reason(first, expected, actual),
    )


def _reason(position: int, expected: list[str], actual: list[str]) -> str:
    want = expected[position] if position < len(expected) else None
    got = actual[position] if position < len(actual) else None
    if got is None:
        return f"step {position + 1}: expected {want!r}, the turn stopped"
    if want is None:
        return f"step {position + 1}: unexpected extra {got!r}"
    return f"step {position + 1}: expected {want!r}, got {got!r}"


__all__ = ["diff_turn", "diff_turns", "sides"]
