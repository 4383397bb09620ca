"""Unordered matching of two 1,000-call trajectories stays well under a second.

The detailed numbers come from ``tests/benchmarks/bench_matching.py``; this
guard keeps the common cases from regressing into quadratic pairwise tests.
"""

from __future__ import annotations

import json
import random
import time

import pytest

from lg_eval.evaluators import create_trajectory_match_evaluator


def trajectory(calls):
    messages = [{"role": "user", "content": "go"}]
    for n, (name, args) in enumerate(calls):
        call = {"id": f"c{n}", "function": {"name": name, "arguments": json.dumps(args)}}
        messages.append({"role": "assistant", "content": "", "tool_calls": [call]})
        messages.append({"role": "tool", "tool_call_id": f"c{n}", "content": "ok"})
    return messages


@pytest.mark.parametrize("args_mode", ["exact", "superset"])
def test_thousand_call_unordered_match_is_fast(args_mode):
    rng = random.Random(1)
    actual = [(rng.choice(["search", "fetch"]), {"q": f"q{n}", "page": n % 5}) for n in range(1000)]
    reference = actual[:]
    rng.shuffle(reference)
    if args_mode == "superset":
        reference = [(name, {"q": args["q"]}) for name, args in reference]
    evaluator = create_trajectory_match_evaluator(
        trajectory_match_mode="unordered", tool_args_match_mode=args_mode
    )
    outputs, expected = trajectory(actual), trajectory(reference)
    start = time.perf_counter()
    result = evaluator(outputs=outputs, reference_outputs=expected)
    elapsed = time.perf_counter() - start
    assert result["score"] is True
    assert elapsed < 1.0, f"{elapsed:.2f}s"
