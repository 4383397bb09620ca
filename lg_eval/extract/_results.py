"""The flat-form result of a turn, computed exactly as agentevals does.

A completed turn's result is ``{"messages": [<last message>]}`` when the state
holds a ``messages`` list (LangChain messages converted to OpenAI-style dicts,
to keep results small), and the state values otherwise. Paused and failed
turns have the result ``{}``.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import BaseMessage
from langchain_core.messages.utils import convert_to_openai_messages


def turn_result(values: Any) -> Any:
    """The agentevals-compatible result for a completed turn's state ``values``."""
    if isinstance(values, dict) and isinstance(values.get("messages"), list):
        messages = values["messages"]
        if not messages:
            return {"messages": []}
        last = messages[-1]
        if isinstance(last, BaseMessage):
            return {"messages": convert_to_openai_messages([last])}
        return {"messages": [last]}
    return values
