"""Graph trajectory match: did the graph visit the nodes the reference says, turn by turn?

``graph_trajectory_strict_match`` is a drop-in for agentevals' evaluator of the
same name (same key, same scores). :func:`create_graph_trajectory_match_evaluator`
adds the ``unordered`` / ``subset`` / ``superset`` modes agentevals has not
released, a ``prefix`` mode for threads still paused, and options to ignore
nodes, handle subgraph steps, treat supersteps as sets and compare per turn or
over the whole thread.
"""

from __future__ import annotations

from collections import Counter
from itertools import zip_longest
from typing import Any, Literal, Unpack, get_args

from lg_eval._evaluator import Evaluator, make_evaluator
from lg_eval._feedback import BOOL, Feedback
from lg_eval._inputs import describe_list, require
from lg_eval.errors import InvalidOptionError
from lg_eval.evaluators._graph_view import GraphView, GraphViewOptions

GraphMatchMode = Literal["strict", "unordered", "subset", "superset", "prefix"]
GRAPH_MATCH_MODES: tuple[GraphMatchMode, ...] = get_args(GraphMatchMode)


def create_graph_trajectory_match_evaluator(
    *,
    trajectory_match_mode: GraphMatchMode = "strict",
    **view_options: Unpack[GraphViewOptions],
) -> Evaluator:
    """An evaluator comparing the nodes a graph ran with a reference trajectory.

    Modes (``outputs`` is the actual run):

    * ``strict``: the same nodes in the same order (and the same number of turns).
    * ``unordered``: the same nodes, counted with repeats, in any order.
    * ``subset``: every node that ran is in the reference (it may have skipped some).
    * ``superset``: every reference node ran (extra nodes are allowed).
    * ``prefix``: the run followed the reference so far: earlier turns equal,
      the last turn a prefix of the reference's. For threads still paused.

    ``view_options`` (see :class:`GraphViewOptions`): ``scope="turn"`` compares
    turn by turn, ``"thread"`` all turns as one sequence;
    ``supersteps_as_sets=True`` lets parallel siblings of a superstep appear in
    any order (needs a ``ThreadTrajectory`` on at least one side);
    ``ignore_nodes`` / ``ignore_pattern`` (a regex, full match) drop nodes such
    as ``__start__`` or ``__interrupt__``, matched against the full path or the
    node's own name; ``subgraphs`` keeps subgraph steps as ``parent:child``
    paths, drops them, or strips them to the child name; ``resumed`` decides
    how a ``ThreadTrajectory`` lists re-run paused nodes.

    The score is a bool under the key ``graph_trajectory_<mode>_match``; the
    comment says which turn differed and how, ``metadata`` holds the shaped
    sequences and, per turn, the ``missing`` and ``unexpected`` nodes.

    Raises:
        InvalidOptionError: an unknown mode or option value.
    """
    if trajectory_match_mode not in GRAPH_MATCH_MODES:
        raise InvalidOptionError(
            f"trajectory_match_mode={trajectory_match_mode!r} is not allowed; use one of "
            f"{', '.join(GRAPH_MATCH_MODES)}."
        )
    view = GraphView.create(**view_options)
    key = f"graph_trajectory_{trajectory_match_mode}_match"

    def scorer(*, outputs: Any, reference_outputs: Any = None, **_: Any) -> Feedback:
        require(reference_outputs, "reference_outputs", key)
        actual, reference = view.read(outputs, reference_outputs)
        return _judge(trajectory_match_mode, actual, reference, view.scope)

    scorer.__doc__ = create_graph_trajectory_match_evaluator.__doc__
    return make_evaluator(key, scorer, reads="trajectory", score_range=BOOL)


_STRICT_DOC = """Whether the run visited exactly the reference's nodes, turn by turn, in order.

A drop-in for agentevals' ``graph_trajectory_strict_match`` (same key, same
scores) that accepts every trajectory shape lg_eval reads. For options, use
:func:`create_graph_trajectory_match_evaluator`.
"""
graph_trajectory_strict_match = create_graph_trajectory_match_evaluator()
graph_trajectory_strict_match.__doc__ = _STRICT_DOC
graph_trajectory_strict_match_async = graph_trajectory_strict_match.as_async()
"""The agentevals async name of :data:`graph_trajectory_strict_match` (awaited when called)."""


# --------------------------------------------------------------------------- judging


def _judge(mode: str, actual: list[list[str]], reference: list[list[str]], scope: str) -> Feedback:
    if mode in ("strict", "unordered") and len(actual) != len(reference):
        return Feedback(
            score=False,
            comment=f"Expected {len(reference)} turns, got {len(actual)}.",
            metadata=_metadata(actual, reference, []),
        )
    if mode == "prefix" and len(actual) > len(reference):
        return Feedback(
            score=False,
            comment=f"The run has {len(actual)} turns but the reference only {len(reference)}.",
            metadata=_metadata(actual, reference, []),
        )
    last = len(actual) - 1
    no_steps: list[str] = []
    turns = [
        _compare(mode if mode != "prefix" or n == last else "strict", a, r, n)
        for n, (a, r) in enumerate(zip_longest(actual, reference, fillvalue=no_steps))
        if mode != "prefix" or n <= last
    ]
    failed = [turn for turn in turns if not turn["match"]]
    comment = None
    if failed:
        label = "The thread" if scope == "thread" else f"Turn {failed[0]['turn'] + 1}"
        comment = f"{label}: {failed[0]['reason']}"
        if len(failed) > 1:
            comment += f" ({len(failed) - 1} more turn(s) differ.)"
    return Feedback(score=not failed, comment=comment, metadata=_metadata(actual, reference, turns))


def _compare(mode: str, actual: list[str], reference: list[str], turn: int) -> dict[str, Any]:
    missing = list((Counter(reference) - Counter(actual)).elements())
    unexpected = list((Counter(actual) - Counter(reference)).elements())
    result: dict[str, Any] = {"turn": turn, "missing": missing, "unexpected": unexpected}
    if mode in ("strict", "prefix"):
        limit = len(actual) if mode == "prefix" else max(len(actual), len(reference))
        position = next(
            (i for i in range(limit) if _at(actual, i) != _at(reference, i)),
            None,
        )
        result["match"] = position is None
        if position is not None:
            result["first_difference"] = position
            result["reason"] = _difference(position, actual, reference)
        return result
    blocking = {
        "unordered": missing + unexpected,
        "subset": unexpected,
        "superset": missing,
    }[mode]
    result["match"] = not blocking
    if blocking:
        parts = []
        if mode != "subset" and missing:
            parts.append(f"missing {describe_list([repr(n) for n in missing])}")
        if mode != "superset" and unexpected:
            parts.append(f"unexpected {describe_list([repr(n) for n in unexpected])}")
        result["reason"] = "; ".join(parts) + "."
    return result


def _at(sequence: list[str], index: int) -> str | None:
    return sequence[index] if index < len(sequence) else None


def _difference(position: int, actual: list[str], reference: list[str]) -> str:
    expected, got = _at(reference, position), _at(actual, position)
    if got is None:
        return f"step {position + 1} missing: expected {expected!r}, the run stopped."
    if expected is None:
        return f"unexpected extra step {position + 1}: {got!r}."
    return f"step {position + 1} differs: expected {expected!r}, got {got!r}."


def _metadata(
    actual: list[list[str]], reference: list[list[str]], turns: list[dict[str, Any]]
) -> dict[str, Any]:
    per_turn = [{k: v for k, v in turn.items() if k != "reason"} for turn in turns]
    return {
        "actual": actual,
        "reference": reference,
        "turns": per_turn,
        "missing": [n for turn in per_turn for n in turn["missing"]],
        "unexpected": [n for turn in per_turn for n in turn["unexpected"]],
    }
