"""Continuous metrics on what a run cost: steps, repeated calls, budgets.

A correct answer reached in eight steps when two would do is a regression CI
should see; these evaluators turn "too many steps", "the same call twice" and
"over budget" into scores between 0 and 1 with the reason in the comment.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from typing import Any, Literal, cast, get_args

from lg_eval._evaluator import Evaluator, make_evaluator
from lg_eval._feedback import UNIT, Feedback, is_finite_number
from lg_eval._inputs import calls_arg, describe_call, describe_list, require
from lg_eval.errors import InvalidOptionError
from lg_eval.evaluators._tool_calls import EXACT
from lg_eval.messages import ToolCall, to_openai_messages

StepCount = Literal["tool_calls", "model_calls"]
STEP_COUNTS: tuple[StepCount, ...] = get_args(StepCount)
ExpectedSteps = int | tuple[int, int] | Sequence[int]


# --------------------------------------------------------------------------- efficiency


def create_step_efficiency_evaluator(
    expected_steps: ExpectedSteps | None = None, *, count: StepCount = "tool_calls"
) -> Evaluator:
    """How close the number of steps is to what the task needs.

    ``expected_steps`` is a number ``n`` (at most ``n`` steps, at least one when
    ``n > 0``) or a range ``(min, max)``; when ``None``, each example's
    ``reference_outputs`` gives it (a number, a pair, or a dict with
    ``"expected_steps"``). Steps are tool calls (``count="tool_calls"``) or
    model calls (``"model_calls"``, assistant messages). Inside the range the
    score is 1.0; above, ``max / steps``; below, ``steps / min``. Key
    ``step_efficiency``.

    Raises:
        InvalidOptionError: a negative bound, ``min > max``, or an unknown ``count``.
    """
    if count not in STEP_COUNTS:
        raise InvalidOptionError(
            f"count={count!r} is not allowed; use one of {', '.join(STEP_COUNTS)}."
        )
    fixed = None if expected_steps is None else _step_range(expected_steps, "expected_steps")
    key = "step_efficiency"

    def scorer(*, outputs: Any, reference_outputs: Any = None, **_: Any) -> Feedback:
        low, high = fixed or _step_range(
            require(reference_outputs, "reference_outputs", key), "reference_outputs"
        )
        steps = _model_calls(outputs) if count == "model_calls" else len(_calls(outputs))
        if steps > high:
            value, comment = high / steps, f"{steps} {_noun(count)}, at most {high} expected."
        elif steps < low:
            value, comment = steps / low, f"{steps} {_noun(count)}, at least {low} expected."
        else:
            value, comment = 1.0, None
        return Feedback(
            score=value, comment=comment, metadata={"steps": steps, "expected_range": [low, high]}
        )

    scorer.__doc__ = create_step_efficiency_evaluator.__doc__
    return make_evaluator(key, scorer, reads="messages", score_range=UNIT)


def _step_range(value: Any, where: str) -> tuple[int, int]:
    if isinstance(value, Mapping) and "expected_steps" in value:
        return _step_range(value["expected_steps"], f"{where}['expected_steps']")
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return min(value, 1), value
    if isinstance(value, Sequence) and not isinstance(value, str) and len(value) == 2:
        low, high = value
        if all(isinstance(v, int) and not isinstance(v, bool) for v in value) and 0 <= low <= high:
            return low, high
    raise InvalidOptionError(
        f"{where}={value!r} is not a step expectation; use a number of steps n >= 0 "
        "or a range (min, max) with 0 <= min <= max."
    )


def _noun(count: str) -> str:
    return "tool calls" if count == "tool_calls" else "model calls"


def _calls(outputs: Any) -> list[ToolCall]:
    return calls_arg(outputs, "outputs")


def _model_calls(outputs: Any) -> int:
    messages = to_openai_messages(outputs, argument="outputs")
    return sum(1 for message in messages if message.get("role") == "assistant")


# --------------------------------------------------------------------------- redundancy


def create_redundancy_evaluator(*, consecutive_only: bool = False) -> Evaluator:
    """How free the run is of repeated identical tool calls (same tool, same arguments).

    The score is ``1 - repeats / calls`` (1.0 with one call or none); with
    ``consecutive_only=True`` only a call identical to the one just before
    counts as a repeat. ``metadata["repeats"]`` says which call repeats which.
    Key ``redundancy``.
    """

    def scorer(*, outputs: Any, **_: Any) -> Feedback:
        calls = _calls(outputs)
        keys = [EXACT.class_key(call) for call in calls]  # equal exactly for identical calls
        first_seen: dict[Hashable, int] = {}
        found: list[tuple[int, int]] = []
        for index, key in enumerate(keys):
            earlier = first_seen.setdefault(key, index)
            if consecutive_only:
                earlier = index - 1 if index and keys[index - 1] == key else index
            if earlier != index:
                found.append((index, earlier))
        value = 1.0 - len(found) / len(calls) if calls else 1.0
        notes = [
            f"call {index + 1} repeats call {earlier + 1} ({describe_call(calls[index])})"
            for index, earlier in found
        ]
        repeats = [
            {"index": index, "repeats": earlier, "call": describe_call(calls[index])}
            for index, earlier in found
        ]
        comment = f"Repeated calls: {describe_list(notes)}." if notes else None
        return Feedback(
            score=value, comment=comment, metadata={"calls": len(calls), "repeats": repeats}
        )

    scorer.__doc__ = create_redundancy_evaluator.__doc__
    return make_evaluator("redundancy", scorer, reads="messages", score_range=UNIT)


# --------------------------------------------------------------------------- budget


def create_call_budget_evaluator(
    *,
    max_tool_calls: int | None = None,
    max_model_calls: int | None = None,
    max_tokens: int | None = None,
    max_cost: float | None = None,
    input_token_price: float | None = None,
    output_token_price: float | None = None,
) -> Evaluator:
    """Whether the run stayed within its budgets of tool calls, model calls, tokens, cost.

    Each budget scores ``min(1, limit / used)``; the score is the lowest of
    them, so 1.0 means every budget held. Tokens and cost come from the
    assistant messages' usage metadata (LangChain ``usage_metadata`` or OpenAI
    ``usage``); cost is ``input tokens * input_token_price + output tokens *
    output_token_price``. A budget that cannot be measured (no usage metadata)
    is skipped and listed in ``metadata["unmeasured"]``. Key ``call_budget``.

    Raises:
        InvalidOptionError: no budget given, a negative or non-finite one (or price),
            or ``max_cost`` without both token prices.
    """
    limits = {
        "tool_calls": max_tool_calls,
        "model_calls": max_model_calls,
        "tokens": max_tokens,
        "cost": max_cost,
    }
    limits = {name: limit for name, limit in limits.items() if limit is not None}
    if not limits:
        raise InvalidOptionError(
            "Give at least one budget: max_tool_calls, max_model_calls, max_tokens or max_cost."
        )
    for name, limit in limits.items():
        if not _finite_amount(limit):
            raise InvalidOptionError(f"max_{name}={limit!r} must be a number >= 0, and finite.")
    if "cost" in limits and (input_token_price is None or output_token_price is None):
        raise InvalidOptionError(
            "max_cost needs input_token_price and output_token_price (price per token)."
        )
    for option, price in (
        ("input_token_price", input_token_price),
        ("output_token_price", output_token_price),
    ):
        if price is not None and not _finite_amount(price):
            raise InvalidOptionError(f"{option}={price!r} must be a number >= 0, and finite.")

    def scorer(*, outputs: Any, **_: Any) -> Feedback:
        used = _usage(outputs, input_token_price or 0.0, output_token_price or 0.0)
        checks: dict[str, Any] = {}
        unmeasured = []
        for name, limit in limits.items():
            if used.get(name) is None:
                unmeasured.append(name)
                continue
            amount = used[name]
            ratio = 1.0 if amount <= limit else limit / amount
            checks[name] = {"used": amount, "limit": limit, "score": ratio}
        value = min((check["score"] for check in checks.values()), default=1.0)
        over = [
            f"{name} {c['used']:g} > {c['limit']:g}"
            for name, c in checks.items()
            if c["score"] < 1.0
        ]
        parts = [f"Over budget: {', '.join(over)}."] if over else []
        if unmeasured:
            parts.append(f"Not measured (no usage metadata): {', '.join(unmeasured)}.")
        return Feedback(
            score=value,
            comment=" ".join(parts) or None,
            metadata={"budgets": checks, "unmeasured": unmeasured},
        )

    scorer.__doc__ = create_call_budget_evaluator.__doc__
    return make_evaluator("call_budget", scorer, reads="messages", score_range=UNIT)


def _finite_amount(value: object) -> bool:
    """A number (not a bool) that is finite and >= 0."""
    return is_finite_number(value) and cast(float, value) >= 0


def _usage(outputs: Any, input_price: float, output_price: float) -> dict[str, Any]:
    used: dict[str, Any] = {"tool_calls": len(_calls(outputs))}
    try:
        messages = to_openai_messages(outputs, argument="outputs")
    except ValueError:  # a bare list of calls: no messages, so no model usage
        return used
    replies = [m for m in messages if m.get("role") == "assistant"]
    used["model_calls"] = len(replies)
    usages = [m["usage_metadata"] for m in replies if "usage_metadata" in m]
    if usages:
        used["tokens"] = sum(u["total_tokens"] for u in usages)
        used["cost"] = math.fsum(
            u["input_tokens"] * input_price + u["output_tokens"] * output_price for u in usages
        )
    return used
