"""Which tool calls were answered, and whether the answer came from the tool.

A model *proposes* a call (an AI message's ``tool_calls``); the call is
*executed* when its tool ran, which a chat history shows as a tool message
answering it. A human-in-the-loop step that rejects a call either leaves it
unanswered or answers it in the tool's place; LangChain marks such an answer
with ``additional_kwargs["lc_source"]`` (``add_notification_metadata``, which
``HumanInTheLoopMiddleware`` uses), and a call answered that way was not
executed. The functions read normalized (OpenAI-style) messages, see
:func:`lg_eval.messages.to_openai_messages`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.messages import BaseMessage

HARNESS_SOURCE = "lc_source"
"""Key of a tool message the harness wrote in the tool's place; normalized tool messages
carry it at the top level."""


def harness_source(item: Any) -> str | None:
    """The ``lc_source`` of a message (LangChain object or dict), or ``None``."""
    if isinstance(item, BaseMessage):
        extra: Any = item.additional_kwargs
    elif isinstance(item, Mapping):
        if isinstance(item.get(HARNESS_SOURCE), str):
            return str(item[HARNESS_SOURCE])
        extra = item.get("additional_kwargs")
    else:
        return None
    source = extra.get(HARNESS_SOURCE) if isinstance(extra, Mapping) else None
    return source if isinstance(source, str) and source else None


def tool_results(messages: list[dict[str, Any]]) -> dict[int, dict[str, Any]]:
    """The tool message answering each call, by the call's position among all calls.

    A tool message answers the call whose id it names; one without a known id
    (or naming a call already answered) answers the earliest unanswered call of
    the latest AI message that made calls. Calls nobody answered are absent.
    """
    answers: dict[int, dict[str, Any]] = {}
    latest: list[int] = []  # positions of the latest AI message's calls
    by_id: dict[str, int] = {}
    position = 0
    for message in messages:
        role = message.get("role")
        if role == "assistant":
            calls = message.get("tool_calls") or []
            if calls:
                latest = list(range(position, position + len(calls)))
            for call in calls:
                call_id = call.get("id") if isinstance(call, Mapping) else None
                if isinstance(call_id, str) and call_id:
                    by_id.setdefault(call_id, position)
                position += 1
        elif role == "tool":
            answered = by_id.get(message.get("tool_call_id") or "")
            if answered is None or answered in answers:
                answered = next((p for p in latest if p not in answers), None)
            if answered is not None:
                answers[answered] = message
    return answers


def executed_calls(messages: list[dict[str, Any]]) -> list[bool]:
    """Per tool call (in order), whether its tool ran: a tool message answers it, and the
    harness did not write that answer in the tool's place (:data:`HARNESS_SOURCE`)."""
    answers = tool_results(messages)
    total = sum(len(m.get("tool_calls") or []) for m in messages if m.get("role") == "assistant")
    return [n in answers and HARNESS_SOURCE not in answers[n] for n in range(total)]


__all__ = ["HARNESS_SOURCE", "executed_calls", "harness_source", "tool_results"]
