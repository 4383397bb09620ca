"""Token usage of an AI message, from any shape providers and LangChain leave it in."""

from __future__ import annotations

import reprlib
from collections.abc import Mapping
from typing import Any

from langchain_core.messages import AIMessage

from lg_eval.errors import TrajectoryFormatError


def token_usage(item: Any, where: str) -> dict[str, int] | None:
    """Token usage of an AI message, in LangChain's ``usage_metadata`` shape.

    Raises:
        TrajectoryFormatError: a token count is not a whole number >= 0.
    """
    if isinstance(item, AIMessage):
        usage: Any = item.usage_metadata or item.response_metadata.get("token_usage")
        where = f"{where}.usage_metadata"
    elif isinstance(item, Mapping):
        metadata = item.get("response_metadata")
        metadata = metadata if isinstance(metadata, Mapping) else {}
        for field, found in (
            ("usage_metadata", item.get("usage_metadata")),
            ("usage", item.get("usage")),
            ("response_metadata['token_usage']", metadata.get("token_usage")),
        ):
            if found:
                usage, where = found, f"{where}.{field}"
                break
        else:
            return None
    else:
        return None
    if not isinstance(usage, Mapping):
        return None
    inputs = _tokens(usage, ("input_tokens", "prompt_tokens"), 0, where)
    outputs = _tokens(usage, ("output_tokens", "completion_tokens"), 0, where)
    total = _tokens(usage, ("total_tokens",), inputs + outputs, where)
    return {"input_tokens": inputs, "output_tokens": outputs, "total_tokens": total}


def _tokens(usage: Mapping[str, Any], names: tuple[str, ...], default: int, where: str) -> int:
    """The first of ``names`` present in ``usage``, as a whole number of tokens >= 0."""
    name = next((n for n in names if n in usage), None)
    if name is None or usage[name] is None:
        return default
    value = usage[name]
    if isinstance(value, float) and value.is_integer():  # 12.0 from a JSON round trip
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise TrajectoryFormatError(
            f"{where}[{name!r}] is {_brief(value)}; token counts must be whole numbers >= 0."
        )
    return value


def _brief(value: Any) -> str:
    """A short repr of a user's value for an error message (safe on any nesting)."""
    return reprlib.repr(value)
