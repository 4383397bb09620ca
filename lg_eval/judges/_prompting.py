"""Turn a prompt (format string, LangChain prompt, or callable) into chat messages."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from langchain_core.messages.utils import convert_to_messages
from langchain_core.runnables import Runnable

from lg_eval._inputs import any_trajectory
from lg_eval.errors import InvalidOptionError
from lg_eval.judges import _prompts as prompts
from lg_eval.judges._render import render_trajectory
from lg_eval.judges._text import FULL, PromptText, Tally, escape, render_value

Prompt = str | Runnable[Any, Any] | Callable[..., Sequence[Any]]


class _Values(dict[str, Any]):
    def __missing__(self, key: str) -> str:
        raise InvalidOptionError(
            f"The prompt uses {{{key}}}, but no value named {key!r} was given. Pass "
            f"{key}=... when calling the evaluator, or write a literal brace as '{{{{' or '}}}}'."
        )


def build_messages(
    prompt: Prompt,
    values: Mapping[str, Any],
    *,
    system: str | None = None,
    examples: str | None = None,
) -> list[BaseMessage]:
    """The chat messages for one judge call.

    ``values`` fill the prompt: a format string's placeholders, a LangChain
    prompt's variables, or a callable's keyword arguments (only those it accepts
    unless it takes ``**kwargs``). Non-string values are rendered as text first.
    Every value is escaped (``<`` as ``&lt;``, see :func:`~lg_eval.judges._text.escape`)
    unless it is :class:`~lg_eval.judges._text.PromptText` lg_eval built, so a value
    passed for a custom placeholder cannot close the prompt's tags either.
    ``system`` is prepended; ``examples`` are appended to the last user message.
    """
    text = {key: _filled(v) for key, v in values.items()}
    if isinstance(prompt, str):
        messages: list[BaseMessage] = [HumanMessage(prompt.format_map(_Values(text)))]
    elif isinstance(prompt, Runnable):
        value = prompt.invoke(text)
        messages = value.to_messages() if hasattr(value, "to_messages") else _messages(value)
    elif callable(prompt):
        messages = _messages(prompt(**_accepted(prompt, text)))
    else:
        raise InvalidOptionError(
            f"prompt is a {type(prompt).__name__}; pass a format string, a LangChain prompt "
            "template, or a function returning chat messages."
        )
    if system:
        messages = [SystemMessage(system), *messages]
    if examples:
        messages = _append_to_last_user_message(messages, examples)
    return messages


def _filled(value: Any) -> str:
    if isinstance(value, PromptText):
        return value
    return escape(value) if isinstance(value, str) else render_value(value)


def _messages(value: Any) -> list[BaseMessage]:
    try:
        return convert_to_messages(value)
    except Exception as exc:
        raise InvalidOptionError(
            f"The prompt returned something that is not a list of chat messages ({exc})."
        ) from exc


def _accepted(function: Callable[..., Any], values: dict[str, str]) -> dict[str, str]:
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return values
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return values
    names = {p.name for p in parameters}
    return {key: value for key, value in values.items() if key in names}


def _append_to_last_user_message(messages: list[BaseMessage], text: str) -> list[BaseMessage]:
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if isinstance(message, HumanMessage):
            content = message.content
            if isinstance(content, str):
                content = f"{content}\n\n{text}"
            else:
                content = [*content, {"type": "text", "text": text}]
            return [*messages[:index], message.model_copy(update={"content": content})]
    return [*messages, HumanMessage(text)]


def examples_block(examples: Sequence[Mapping[str, Any]]) -> str | None:
    """Few-shot examples as one text block; trajectories rendered like the judged one."""
    if not examples:
        return None
    blocks = [prompts.FEW_SHOT_INTRO]
    for example in examples:
        parts = ["<example>"]
        for key in ("inputs", "outputs", "reference_outputs", "reasoning", "score"):
            if key in example and example[key] is not None:
                parts.append(f"<{key}>\n{_example_text(key, example[key])}\n</{key}>")
        parts.append("</example>")
        blocks.append("\n".join(parts))
    return "<examples>\n" + "\n".join(blocks) + "\n</examples>"


def _example_text(key: str, value: Any) -> str:
    if key in ("outputs", "reference_outputs"):
        return render_trajectory(any_trajectory(value, argument=key), FULL, Tally())
    return render_value(value)
