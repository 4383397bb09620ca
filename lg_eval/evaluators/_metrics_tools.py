"""Continuous metrics on which tools an agent chose, in what order, with what arguments.

Each factory takes its expectation as an option, or reads it from each
example's ``reference_outputs`` when the option is ``None`` (a list of calls or
tool names, a dict with ``"tool_calls"``, or a message trajectory). Scores run
from 0 to 1; the comment names what pulled a score down and the metadata holds
the detail.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from lg_eval._evaluator import Evaluator, make_evaluator
from lg_eval._feedback import UNIT, Feedback
from lg_eval._inputs import calls_arg, describe_list, expected_from
from lg_eval.errors import InvalidOptionError
from lg_eval.evaluators._matching import max_weight_assignment
from lg_eval.evaluators._tool_args import (
    Args,
    ToolArgsMatchMode,
    ToolArgsMatchOverrides,
)
from lg_eval.evaluators._tool_calls import (
    NAMES_ONLY,
    ArgsPolicy,
    Call,
    fixed_calls,
    pair_tool_calls,
    same_tool_groups,
)

Expected = Sequence[Call | str] | None


def _tools(names: set[str]) -> list[Call]:
    """Distinct tool names as calls, sorted: what selection and its report compare."""
    return [{"name": name, "args": {}} for name in sorted(names)]


# --------------------------------------------------------------------------- selection


def create_tool_selection_evaluator(
    expected_tools: Expected = None, *, penalize_extra: bool = False
) -> Evaluator:
    """Which expected tools the agent used: recall, or F1 when extra tools should cost.

    Tools are compared as sets of names (calling a tool twice is one use).
    ``penalize_extra=False`` (key ``tool_selection_accuracy``) scores the share of
    expected tools used; ``True`` (key ``tool_selection_f1``) scores the F1 of
    precision and recall, so unneeded tools lower it too. When no tool is
    expected, the score is 1.0 if none was used, else 0.0.
    """
    fixed = fixed_calls(expected_tools, "expected_tools")
    key = "tool_selection_f1" if penalize_extra else "tool_selection_accuracy"

    def scorer(*, outputs: Any, reference_outputs: Any = None, **_: Any) -> Feedback:
        expected = _tools({call["name"] for call in expected_from(fixed, reference_outputs, key)})
        used = _tools({call["name"] for call in calls_arg(outputs, "outputs")})
        pairing = pair_tool_calls(used, expected, mode="unordered", policy=NAMES_ONLY)
        hit = len(pairing.pairs)
        precision = hit / len(used) if used else float(not expected)
        recall = hit / len(expected) if expected else float(not used)
        if penalize_extra:
            total = precision + recall
            value = 2 * precision * recall / total if total else 0.0
        else:
            value = recall
        missing = [expected[j]["name"] for j in pairing.missing]
        extra = [used[i]["name"] for i in pairing.unexpected]
        parts = []
        if missing:
            parts.append(f"Expected tools not used: {describe_list(missing)}.")
        if extra and (penalize_extra or not expected):
            parts.append(f"Tools used but not expected: {describe_list(extra)}.")
        metadata = {
            "expected_tools": [call["name"] for call in expected],
            "used_tools": [call["name"] for call in used],
            "missing": missing,
            "unexpected": extra,
            "precision": precision,
            "recall": recall,
        }
        return Feedback(score=value, comment=" ".join(parts) or None, metadata=metadata)

    scorer.__doc__ = create_tool_selection_evaluator.__doc__
    return make_evaluator(key, scorer, reads="messages", score_range=UNIT)


# --------------------------------------------------------------------------- order


def create_tool_order_evaluator(expected_order: Expected = None) -> Evaluator:
    """How well the order of tool calls follows the expected order (normalized LCS).

    The score is the length of the longest common subsequence of the actual
    and expected tool names over the number of expected tools: 1.0 when the
    expected tools appear in order (extra calls in between are free). With no
    expected tools the score is 1.0. Key ``tool_order``.
    """
    fixed = fixed_calls(expected_order, "expected_order")

    def scorer(*, outputs: Any, reference_outputs: Any = None, **_: Any) -> Feedback:
        wanted = expected_from(fixed, reference_outputs, "tool_order")
        made = calls_arg(outputs, "outputs")
        pairing = pair_tool_calls(made, wanted, mode="in_order", policy=NAMES_ONLY)
        expected = [call["name"] for call in wanted]
        actual = [call["name"] for call in made]
        common = len(pairing.pairs)
        value = common / len(expected) if expected else 1.0
        placed = {j for _, j in pairing.pairs}
        out_of_order = [name for j, name in enumerate(expected) if j not in placed]
        comment = None
        if out_of_order:
            comment = (
                f"{common} of {len(expected)} expected tools appear in the expected order; "
                f"out of order or missing: {describe_list(out_of_order)}."
            )
        metadata = {
            "expected_order": expected,
            "actual_order": actual,
            "lcs_length": common,
            "out_of_order": out_of_order,
        }
        return Feedback(score=value, comment=comment, metadata=metadata)

    scorer.__doc__ = create_tool_order_evaluator.__doc__
    return make_evaluator("tool_order", scorer, reads="messages", score_range=UNIT)


# --------------------------------------------------------------------------- arguments


def create_argument_precision_evaluator(
    expected_calls: Expected = None,
    *,
    word_overlap: bool = True,
    tool_args_match_mode: ToolArgsMatchMode = "superset",
    tool_args_match_overrides: ToolArgsMatchOverrides | None = None,
) -> Evaluator:
    """How closely the arguments of the calls made match the expected calls' arguments.

    Each expected call is paired with a distinct actual call of the same tool,
    choosing the pairing with the best total score (not by position, so an
    extra or reordered call does not shift every comparison). A pair scores
    the mean over its graded arguments: 1.0 when equal, the word overlap
    (Jaccard of lower-cased words) for two strings when ``word_overlap`` is
    on, else 0.0; a missing argument scores 0.0, and a pair with no graded
    argument (an expected call without arguments) 1.0. An expected call with no
    actual counterpart scores 0.0. The result is the mean over expected calls
    (1.0 when none are expected). Key ``argument_precision``.

    Which arguments are graded follows the trajectory match's argument options:
    ``tool_args_match_mode="superset"`` (default) grades the expected call's
    arguments (extra ones are free), ``exact`` both calls' (an extra argument
    scores 0.0), ``subset`` the actual call's, ``ignore`` none;
    ``tool_args_match_overrides`` sets a mode or a list of dotted field paths
    per tool (a callable is a yes/no test, not a grade, so it is refused).

    Raises:
        InvalidOptionError: an unknown mode, or a malformed or callable override.
    """
    policy = ArgsPolicy(tool_args_match_mode, tool_args_match_overrides)
    for tool, rule in policy.overrides.items():
        if rule.kind == "custom":
            raise InvalidOptionError(
                f"tool_args_match_overrides[{tool!r}] is a callable; argument precision grades "
                "arguments one by one, so give a mode or a list of field paths."
            )
    fixed = fixed_calls(expected_calls, "expected_calls")
    key = "argument_precision"

    def scorer(*, outputs: Any, reference_outputs: Any = None, **_: Any) -> Feedback:
        expected = expected_from(fixed, reference_outputs, key)
        actual = calls_arg(outputs, "outputs")
        if not expected:
            return Feedback(score=1.0, comment=None, metadata={"calls": []})
        calls = _paired_scores(expected, actual, policy, word_overlap)
        value = sum(call["score"] for call in calls) / len(calls)
        weak = [
            f"{call['name']}.{arg} {score:.2f}" if arg else f"{call['name']} not called"
            for call in calls
            for arg, score in (call["arguments"].items() or [("", call["score"])])
            if score < 1.0
        ]
        comment = f"Arguments below 1.0: {describe_list(weak)}." if weak else None
        return Feedback(score=value, comment=comment, metadata={"calls": calls})

    scorer.__doc__ = create_argument_precision_evaluator.__doc__
    return make_evaluator(key, scorer, reads="messages", score_range=UNIT)


def _paired_scores(
    expected: Sequence[Call], actual: Sequence[Call], policy: ArgsPolicy, word_overlap: bool
) -> list[dict[str, Any]]:
    results: list[dict[str, Any]] = [
        {
            "expected_index": j,
            "actual_index": None,
            "name": call["name"],
            "score": 0.0,
            "arguments": {},
        }
        for j, call in enumerate(expected)
    ]
    for name, (made, wanted) in same_tool_groups(actual, expected).items():
        details = [
            [
                _argument_scores(policy, name, actual[i]["args"], expected[j]["args"], word_overlap)
                for i in made
            ]
            for j in wanted
        ]
        weights = [[_mean(d) for d in row] for row in details]
        for row, col in enumerate(max_weight_assignment(weights)):
            if col >= 0:
                result = results[wanted[row]]
                result.update(
                    actual_index=made[col], score=weights[row][col], arguments=details[row][col]
                )
    return results


def _argument_scores(
    policy: ArgsPolicy, tool: str, actual: Args, expected: Args | None, word_overlap: bool
) -> dict[str, float]:
    return {
        name: _argument_score(got, wanted, word_overlap)
        for name, (got, wanted) in policy.compared_values(tool, actual, expected).items()
    }


def _argument_score(actual: object, expected: object, word_overlap: bool) -> float:
    if actual is None:
        return 0.0
    if actual == expected:
        return 1.0
    if word_overlap and isinstance(actual, str) and isinstance(expected, str):
        got, want = set(_WORDS.findall(actual.casefold())), set(_WORDS.findall(expected.casefold()))
        union = got | want
        return len(got & want) / len(union) if union else 0.0
    return 0.0


_WORDS = re.compile(r"\S+")


def _mean(scores: dict[str, float]) -> float:
    return sum(scores.values()) / len(scores) if scores else 1.0
