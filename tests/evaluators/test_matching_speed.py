"""Unordered matching of two 1,000-call trajectories builds no pairwise comparison.

The common cases (exact arguments, and expected arguments a subset of the actual ones)
pair calls through an index of their arguments, never by testing every actual call
against every expected one: the candidate graph handed to the matching has at most one
edge per call, not a million. The time it takes is measured in
``tests/benchmarks/bench_matching.py`` (``make bench``), where a wall-clock budget belongs.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from lg_eval.evaluators import _matching, create_trajectory_match_evaluator


def trajectory(calls):
    messages = [{"role": "user", "content": "go"}]
    for n, (name, args) in enumerate(calls):
        call = {"id": f"c{n}", "function": {"name": name, "arguments": json.dumps(args)}}
        messages.append({"role": "assistant", "content": "", "tool_calls": [call]})
        messages.append({"role": "tool", "tool_call_id": f"c{n}", "content": "ok"})
    return messages


@pytest.mark.parametrize("args_mode", ["exact", "superset"])
def test_thousand_call_unordered_match_compares_no_pair_of_calls(args_mode, monkeypatch):
    rng = random.Random(1)
    actual = [(rng.choice(["search", "fetch"]), {"q": f"q{n}", "page": n % 5}) for n in range(1000)]
    reference = actual[:]
    rng.shuffle(reference)
    if args_mode == "superset":
        reference = [(name, {"q": args["q"]}) for name, args in reference]
    edges: list[int] = []
    matching = _matching.maximum_matching

    def counted(adjacency: Any, n_right: int) -> list[int]:
        edges.append(sum(len(row) for row in adjacency))
        return matching(adjacency, n_right)

    monkeypatch.setattr(_matching, "maximum_matching", counted)
    evaluator = create_trajectory_match_evaluator(
        trajectory_match_mode="unordered", tool_args_match_mode=args_mode
    )
    result = evaluator(outputs=trajectory(actual), reference_outputs=trajectory(reference))
    assert (result["key"], result["score"], result["comment"]) == (
        "trajectory_unordered_match",
        True,
        None,
    )
    assert len(result["metadata"]["pairs"]) == 1000
    assert sum(edges) <= 1000  # one candidate per call at most (pairwise tests: ~500,000)
