"""Which tool calls were answered, and whether the answer came from the tool.

A model *proposes* a call (an AI message's ``tool_calls``); the call is
*executed* when its tool ran, which a chat history shows as a tool message
answering it. A human-in-the-loop step that rejects a call either leaves it
unanswered or answers it in the tool's place; LangChain marks such an answer
with ``additional_kwargs["lc_source"]`` (``add_notification_metadata``, which
``HumanInTheLoopMiddleware`` uses), and a call answered that way was not
executed. A reviewer may also *edit* a call: the middleware then keeps the model's call in
the AI message, runs the tool with the reviewer's arguments, and says so at the head of the
result (:func:`noted_edit`). The functions read normalized (OpenAI-style) messages, see
:func:`lg_eval.messages.to_openai_messages`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
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


def as_run(
    calls: Sequence[Mapping[str, Any]],
    answers: Mapping[int, Mapping[str, Any]],
    decided: Mapping[int, Mapping[str, Any]],
) -> list[dict[str, Any] | None]:
    """Per proposed call (``{"name", "args", "id"}``, in order), the call its tool ran, or
    ``None`` when it did not run: the proposal, unless a reviewer edited it, which the note
    at the head of its result says (:func:`noted_edit`) or, failing that, ``decided`` (the
    reviewer's ``{"name", "args"}`` by position, from the decisions a thread records)."""
    found: list[dict[str, Any] | None] = []
    for position, call in enumerate(calls):
        answer = answers.get(position)
        if answer is None or HARNESS_SOURCE in answer:
            found.append(None)
            continue
        edit = noted_edit(answer) or decided.get(position)
        found.append(dict(call) if edit is None else {**call, **edit})
    return found


# What ``HumanInTheLoopMiddleware`` writes, after its ``edit_notice``, at the head of the
# result of a call a reviewer edited: ``<notice> Executed instead: <name> with arguments
# <JSON>.``, then ``"\n\nTool response:"`` and the tool's own result, if it had one.
_NOTE = re.compile(r" Executed instead: (\S+) with arguments ")
_NOTE_END = ".\n\nTool response:"
_DECODER = json.JSONDecoder()


def noted_edit(message: Mapping[str, Any]) -> dict[str, Any] | None:
    """The call a reviewer's edit ran, as ``{"name", "args"}``, read from the note the
    middleware put at the head of a (normalized) tool message; ``None`` when it has none.

    Only the first note counts, and only when it ends where the middleware ends it (the end
    of the text, or its ``Tool response:`` line before the tool's result), so a tool's own
    output quoting a note mid-text is not read as an edit; one that ends exactly like a
    note is (the note's lead-in, ``edit_notice``, is the user's own text).
    """
    text = _head_text(message.get("content"))
    found = _NOTE.search(text)
    if found is None:
        return None
    try:
        args, end = _DECODER.raw_decode(text, found.end())
    except (ValueError, RecursionError):  # not JSON; a number past int's limit; deep nesting
        return None
    rest = text[end:]
    if not isinstance(args, dict) or not (rest == "." or rest.startswith(_NOTE_END)):
        return None
    return {"name": found.group(1), "args": args}


def _head_text(content: Any) -> str:
    """A message's text, or its first text block's (where the middleware puts its note)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list) and content:
        first = content[0]
        if isinstance(first, str):
            return first
        if isinstance(first, Mapping) and isinstance(first.get("text"), str):
            return str(first["text"])
    return ""
