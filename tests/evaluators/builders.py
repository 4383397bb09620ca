"""Small builders for OpenAI-style messages used across the evaluator tests."""

from __future__ import annotations

import json
from typing import Any


def call(name: str, **args: Any) -> dict[str, Any]:
    """An OpenAI-format tool call with JSON-string arguments."""
    return {"function": {"name": name, "arguments": json.dumps(args)}}


def ai(*calls: dict[str, Any], content: str = "") -> dict[str, Any]:
    """An assistant message, with tool calls when given."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = list(calls)
    return message


def user(content: str = "hi") -> dict[str, Any]:
    return {"role": "user", "content": content}


def tool(content: str = "ok", tool_call_id: str | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "tool", "content": content}
    if tool_call_id is not None:
        message["tool_call_id"] = tool_call_id
    return message


def run(*messages_calls: list[dict[str, Any]] | dict[str, Any]) -> list[dict[str, Any]]:
    """A trajectory: a user message, then one assistant message per group of calls."""
    messages = [user()]
    for group in messages_calls:
        calls = group if isinstance(group, list) else [group]
        messages.append(ai(*calls))
        messages.extend(tool() for _ in calls)
    messages.append(ai(content="done"))
    return messages
