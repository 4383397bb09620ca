"""Benchmark: unordered trajectory matching of two 1,000-call trajectories.

Run with ``.venv/bin/python tests/benchmarks/bench_matching.py``. Each case
builds two message trajectories of 1,000 tool calls (the reference is the
actual run shuffled, so a full pairing exists) and times the whole evaluator
call: message normalization, argument decoding and pairing. The budget is
"well under a second" for the common cases (exact / ignore / field overrides);
the partial-argument cases show the cost of the general algorithm.
"""

from __future__ import annotations

import json
import random
import statistics
import time
from collections.abc import Callable
from typing import Any

from lg_eval.evaluators import create_trajectory_match_evaluator
from lg_eval.evaluators._tool_calls import ArgsPolicy, max_pairs

CALLS = 1_000
TOOLS = ["search", "lookup", "fetch", "calc", "summarize"]


def trajectory(calls: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    """One assistant message per call, each answered by a tool message."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    for n, (name, args) in enumerate(calls):
        call = {"id": f"c{n}", "function": {"name": name, "arguments": json.dumps(args)}}
        messages.append({"role": "assistant", "content": "", "tool_calls": [call]})
        messages.append({"role": "tool", "tool_call_id": f"c{n}", "content": "ok"})
    return messages


def calls(rng: random.Random, tools: list[str]) -> list[tuple[str, dict[str, Any]]]:
    return [(rng.choice(tools), {"q": f"query {n}", "page": n % 7}) for n in range(CALLS)]


def case(name: str, tools: list[str], **options: Any) -> tuple[str, Callable[[], Any]]:
    rng = random.Random(7)
    actual = calls(rng, tools)
    reference = actual[:]
    rng.shuffle(reference)
    if options.get("tool_args_match_mode") == "superset":  # references ask for less
        reference = [(n, {"q": args["q"]}) for n, args in reference]
    evaluator = create_trajectory_match_evaluator(trajectory_match_mode="unordered", **options)
    outputs, reference_outputs = trajectory(actual), trajectory(reference)

    def run() -> Any:
        result = evaluator(outputs=outputs, reference_outputs=reference_outputs)
        assert result["score"] is True, result["comment"]
        return result

    return name, run


def pairing_only(name: str, mode: Any, reference_args: Callable[[dict], dict]) -> tuple[str, Any]:
    """Just the pairing step (no message normalization), one tool, 1,000 x 1,000."""
    actual = [{"name": "search", "args": args} for _, args in calls(random.Random(3), ["search"])]
    reference = [{"name": "search", "args": reference_args(c["args"])} for c in actual]
    random.Random(4).shuffle(reference)
    policy = ArgsPolicy("exact", {"search": mode}) if callable(mode) else ArgsPolicy(mode)

    def run() -> Any:
        assert len(max_pairs(actual, reference, policy)) == CALLS

    return name, run


def _same_query(actual: dict, reference: dict) -> bool:
    return actual["q"] == reference["q"]


def main() -> None:
    cases = [
        case("exact args, 5 tools", TOOLS),
        case("exact args, 1 tool", TOOLS[:1]),
        case("ignore args, 1 tool", TOOLS[:1], tool_args_match_mode="ignore"),
        case("field override, 1 tool", TOOLS[:1], tool_args_match_overrides={"search": ["q"]}),
        case("superset args, 5 tools", TOOLS, tool_args_match_mode="superset"),
        case("superset args, 1 tool", TOOLS[:1], tool_args_match_mode="superset"),
        pairing_only("pairing only: exact", "exact", dict),
        pairing_only("pairing only: superset, partial args", "superset", lambda a: {"q": a["q"]}),
        pairing_only("pairing only: superset, {} (complete graph)", "superset", lambda a: {}),
        pairing_only("pairing only: subset, partial args", "subset", lambda a: {**a, "x": 1}),
        pairing_only("pairing only: custom callable (1M tests)", _same_query, dict),
    ]
    print(f"unordered match, {CALLS} vs {CALLS} calls (median of 5 runs, whole evaluator call)")
    for name, run in cases:
        timings = []
        for _ in range(5):
            start = time.perf_counter()
            run()
            timings.append(time.perf_counter() - start)
        print(f"  {name:<46} {statistics.median(timings) * 1000:8.1f} ms")


if __name__ == "__main__":
    main()
