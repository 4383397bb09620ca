"""Coerce what users pass as ``outputs`` / ``reference_outputs`` into what scorers read.

Every evaluator accepts the shapes a user has at hand (ThreadTrajectory,
GraphTrajectory, agentevals dicts with or without the ``{"inputs", "outputs"}``
envelope, LangChain or OpenAI messages, state dicts, plain call lists, strings)
and a shape error always names the argument and what was expected.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import BaseMessage

from lg_eval.errors import TrajectoryFormatError
from lg_eval.messages import (
    ToolCall,
    message_text,
    parse_arguments,
    to_openai_messages,
    tool_calls_from_openai,
)
from lg_eval.trajectory import GraphTrajectory, ResumedMode, ThreadTrajectory

WILDCARD: Any = None  # an expected call's args when any arguments are acceptable


def require(value: Any, argument: str, key: str) -> Any:
    """``value``, or a clear error when an evaluator needs it and it is missing."""
    if value is None:
        raise TrajectoryFormatError(
            f"{key} needs {argument}; pass the expected trajectory, calls or answer "
            f"as {argument}=..."
        )
    return value


# --------------------------------------------------------------------------- tool calls


def calls_arg(value: Any, argument: str) -> list[ToolCall]:
    """Actual tool calls: from any message shape, or a plain list of calls / tool names."""
    if _is_call_list(value):
        return [_call(item, f"{argument}[{n}]") for n, item in enumerate(value)]
    return tool_calls_from_openai(to_openai_messages(value, argument=argument))


def expected_calls_arg(value: Any, argument: str) -> list[dict[str, Any]]:
    """Expected calls as ``{"name", "args"}``; ``args`` is ``WILDCARD`` when not given.

    Accepts a list of tool names or call dicts, any message shape (its tool
    calls, with their exact args), or a dict holding one of those under
    ``"tool_calls"``, ``"expected_calls"`` or ``"expected_tools"``.
    """
    if isinstance(value, Mapping):
        for key in ("tool_calls", "expected_calls", "expected_tools"):
            if key in value:
                return expected_calls_arg(value[key], f"{argument}[{key!r}]")
    if _is_call_list(value):
        return [_expected(item, f"{argument}[{n}]") for n, item in enumerate(value)]
    return [dict(call) for call in calls_arg(value, argument)]


def expected_from(
    fixed: list[dict[str, Any]] | None, reference_outputs: Any, key: str
) -> list[dict[str, Any]]:
    """The expected calls given to the factory, else those in ``reference_outputs``."""
    if fixed is not None:
        return fixed
    reference = require(reference_outputs, "reference_outputs", key)
    return expected_calls_arg(reference, "reference_outputs")


def _is_call_list(value: Any) -> bool:
    """A non-empty list with nothing that looks like a chat message: calls or tool names."""
    if not isinstance(value, list | tuple) or not value:
        return False
    return not any(_looks_like_message(item) for item in value)


def _looks_like_message(item: Any) -> bool:
    if isinstance(item, BaseMessage | tuple):
        return True
    if not isinstance(item, Mapping):
        return not isinstance(item, str)
    kind = item.get("type")
    return "role" in item or "content" in item or (kind is not None and kind not in _CALL_TYPES)


_CALL_TYPES = ("function", "tool_call")


def _call(item: Any, where: str) -> ToolCall:
    expected = _expected(item, where)
    args = expected["args"]
    return ToolCall(name=expected["name"], args=args or {}, id=expected.get("id"))


def _expected(item: Any, where: str) -> dict[str, Any]:
    if isinstance(item, str):
        return {"name": item, "args": WILDCARD}
    function = item.get("function")
    if isinstance(function, Mapping):
        args = parse_arguments(function.get("arguments"), where)
        name = function.get("name")
    else:
        name, args = item.get("name"), item.get("args", WILDCARD)
    if not isinstance(name, str) or not name:
        raise TrajectoryFormatError(f"{where} has no tool name; expected {{'name': ..., ...}}.")
    if args is not WILDCARD and not isinstance(args, Mapping):
        raise TrajectoryFormatError(f"{where}['args'] must be a dict, not {type(args).__name__}.")
    return {"name": name, "args": None if args is None else dict(args), "id": item.get("id")}


# --------------------------------------------------------------------------- text


_ANSWER_KEYS = ("answer", "final_answer", "output", "response", "content", "text", "result")


def text_arg(value: Any, argument: str) -> str | None:
    """The answer text in ``value``: a string, the last AI message, or a known answer key."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool | int | float):
        return str(value)
    if isinstance(value, BaseMessage):
        return value.text
    if isinstance(value, Mapping) and "role" in value:
        return message_text(value)
    if isinstance(value, Mapping) and "messages" not in value:
        if "outputs" in value:
            return text_arg(value["outputs"], f"{argument}['outputs']")
        for key in _ANSWER_KEYS:
            if isinstance(value.get(key), str):
                return value[key]
        return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    messages = to_openai_messages(value, argument=argument)
    for message in reversed(messages):
        if message.get("role") == "assistant" and not message.get("tool_calls"):
            return message_text(message)
    return None


# --------------------------------------------------------------------------- graphs


@dataclass(frozen=True)
class GraphSide:
    """Node names per turn, and per-turn superstep sizes when the source had them."""

    turns: list[list[str]]
    supersteps: list[list[int]] | None = None


_GRAPH_EXPECTED = (
    "a ThreadTrajectory, a GraphTrajectory, a dict with 'steps' (optionally inside "
    "an {'inputs', 'outputs'} envelope), or a list of per-turn lists of node names"
)


def graph_arg(value: Any, argument: str, resumed: ResumedMode = "omit") -> GraphSide:
    """Node sequences per turn from any graph-trajectory shape."""
    if isinstance(value, ThreadTrajectory):
        return GraphSide(value.to_graph_trajectory(resumed).steps, _superstep_sizes(value, resumed))
    if isinstance(value, GraphTrajectory):
        return GraphSide(value.steps)
    if isinstance(value, Mapping):
        if "steps" in value:
            return GraphSide(_steps(value["steps"], f"{argument}['steps']"))
        if "outputs" in value:
            return graph_arg(value["outputs"], f"{argument}['outputs']", resumed)
        raise TrajectoryFormatError(
            f"{argument} is a dict without 'steps'; expected {_GRAPH_EXPECTED}."
        )
    if isinstance(value, list | tuple):
        if value and all(isinstance(item, str) for item in value):
            return GraphSide([list(value)])
        return GraphSide(_steps(value, argument))
    raise TrajectoryFormatError(
        f"{argument} is a {type(value).__name__}; expected {_GRAPH_EXPECTED}."
    )


def _steps(value: Any, where: str) -> list[list[str]]:
    if not isinstance(value, list | tuple):
        raise TrajectoryFormatError(f"{where} must be a list of per-turn lists of node names.")
    turns: list[list[str]] = []
    for n, turn in enumerate(value):
        if not isinstance(turn, list | tuple) or not all(isinstance(x, str) for x in turn):
            raise TrajectoryFormatError(
                f"{where}[{n}] must be a list of node names (strings), got {turn!r:.60}."
            )
        turns.append(list(turn))
    return turns


def _superstep_sizes(thread: ThreadTrajectory, resumed: ResumedMode) -> list[list[int]]:
    """How many flattened names each superstep contributes, turn by turn."""
    return [[len(group) for group in groups] for groups in thread.step_groups(resumed)]


def describe_call(call: Mapping[str, Any]) -> str:
    """``name(arg=value, ...)`` for comments; ``name(...)`` when any args are accepted."""
    args = call.get("args")
    if args is None:
        return f"{call['name']}(...)"
    inner = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in args.items())
    return f"{call['name']}({inner})"


def describe_list(items: list[str], limit: int = 3) -> str:
    """``a, b, c and 2 more`` for comments."""
    shown = ", ".join(items[:limit])
    return shown if len(items) <= limit else f"{shown} and {len(items) - limit} more"


__all__ = [
    "WILDCARD",
    "GraphSide",
    "calls_arg",
    "describe_call",
    "describe_list",
    "expected_calls_arg",
    "expected_from",
    "graph_arg",
    "require",
    "text_arg",
]
