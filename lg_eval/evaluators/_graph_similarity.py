"""Graph trajectory similarity: how close the run's node sequence is to the reference, 0..1.

A match evaluator says *whether* a run took the reference path; this one says
*how far* it strayed, from the edit distance between node sequences, so a
one-node detour scores near 1 instead of failing outright. The alignment
(which steps were inserted, deleted or substituted) is in the metadata.
"""

from __future__ import annotations

from itertools import zip_longest
from typing import Any, Unpack

from rapidfuzz.distance import Levenshtein

from lg_eval._evaluator import Evaluator, make_evaluator
from lg_eval._feedback import UNIT, Feedback
from lg_eval._inputs import describe_list, require
from lg_eval.evaluators._graph_view import GraphView, GraphViewOptions

KEY = "graph_trajectory_similarity"


def create_graph_trajectory_similarity_evaluator(
    **view_options: Unpack[GraphViewOptions],
) -> Evaluator:
    """An evaluator scoring node-sequence similarity from 0 (nothing alike) to 1 (identical).

    Per turn, similarity is ``1 - distance / max(len(actual), len(reference))``
    with the Levenshtein distance over node names (one insertion, deletion or
    substitution costs 1). The overall score is ``1 - total distance / total
    max length`` over all turns, so long turns weigh more; a turn present on
    one side only counts as fully inserted or deleted. Two empty trajectories
    score 1.0. With ``scope="thread"`` the turns are joined into one sequence.

    ``view_options`` are those of :func:`create_graph_trajectory_match_evaluator`
    (see :class:`GraphViewOptions`).
    ``metadata["turns"]`` lists per-turn ``score``, ``distance`` and
    ``alignment``: ``inserted`` steps (in the run, not the reference),
    ``deleted`` steps (in the reference, not the run) and ``substituted`` steps.

    Raises:
        InvalidOptionError: an unknown option value.
    """
    view = GraphView.create(**view_options)

    def scorer(*, outputs: Any, reference_outputs: Any = None, **_: Any) -> Feedback:
        require(reference_outputs, "reference_outputs", KEY)
        actual, reference = view.read(outputs, reference_outputs)
        no_steps: list[str] = []
        turns = [
            _turn(n, a, r)
            for n, (a, r) in enumerate(zip_longest(actual, reference, fillvalue=no_steps))
        ]
        distance = sum(turn["distance"] for turn in turns)
        length = sum(turn["length"] for turn in turns)
        value = 1.0 - distance / length if length else 1.0
        metadata = {"distance": distance, "max_length": length, "turns": turns}
        return Feedback(score=value, comment=_comment(turns, view.scope), metadata=metadata)

    scorer.__doc__ = create_graph_trajectory_similarity_evaluator.__doc__
    return make_evaluator(KEY, scorer, reads="trajectory", score_range=UNIT)


def _turn(n: int, actual: list[str], reference: list[str]) -> dict[str, Any]:
    alignment: dict[str, list[dict[str, Any]]] = {"inserted": [], "deleted": [], "substituted": []}
    for op in Levenshtein.editops(reference, actual):
        if op.tag == "insert":
            alignment["inserted"].append({"actual_index": op.dest_pos, "node": actual[op.dest_pos]})
        elif op.tag == "delete":
            alignment["deleted"].append(
                {"reference_index": op.src_pos, "node": reference[op.src_pos]}
            )
        else:
            alignment["substituted"].append(
                {
                    "actual_index": op.dest_pos,
                    "reference_index": op.src_pos,
                    "node": actual[op.dest_pos],
                    "expected": reference[op.src_pos],
                }
            )
    distance = sum(len(ops) for ops in alignment.values())
    length = max(len(actual), len(reference))
    score = 1.0 - distance / length if length else 1.0
    return {"turn": n, "score": score, "distance": distance, "length": length, **alignment}


def _comment(turns: list[dict[str, Any]], scope: str) -> str | None:
    parts = []
    for turn in turns:
        if not turn["distance"]:
            continue
        changes = []
        if turn["inserted"]:
            changes.append(f"inserted {_nodes(turn['inserted'], 'node')}")
        if turn["deleted"]:
            changes.append(f"deleted {_nodes(turn['deleted'], 'node')}")
        if turn["substituted"]:
            pairs = [f"{s['expected']!r}->{s['node']!r}" for s in turn["substituted"]]
            changes.append(f"substituted {describe_list(pairs)}")
        label = "The thread" if scope == "thread" else f"Turn {turn['turn'] + 1}"
        parts.append(f"{label}: {', '.join(changes)}.")
    if not parts:
        return None
    return " ".join(parts[:2]) + (
        f" ({len(parts) - 2} more turns differ.)" if len(parts) > 2 else ""
    )


def _nodes(items: list[dict[str, Any]], field: str) -> str:
    return describe_list([repr(item[field]) for item in items])
