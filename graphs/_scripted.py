"""Scripted chat models: deterministic stand-ins for real LLMs.

`ScriptedChatModel` replays a fixed list of prepared `AIMessage`s, one per model
call, so the example graphs run offline and produce the same trajectory every
time. It behaves like a tool-calling chat model from the graph's point of view:
`bind_tools(...)` returns the model itself, replies may carry `tool_calls`, and
streaming (e.g. `stream_mode="messages"`) yields chunks that reassemble into the
scripted message, tool calls included.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, ToolCall
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from pydantic import Field

__all__ = [
    "ScriptExhaustedError",
    "ScriptedChatModel",
    "ai",
    "reply_text",
    "scripted_model",
    "tool_call",
]


class ScriptExhaustedError(RuntimeError):
    """A scripted model was called more often than its script allows."""


class ScriptedChatModel(GenericFakeChatModel):
    """A fake chat model that answers each call with the next scripted `AIMessage`.

    Each reply is a deep copy of the scripted message, so graph code that mutates
    the returned message (as some middleware does) cannot alter the script.
    Calling the model after the script is used up raises `ScriptExhaustedError`
    naming the model, which makes an unexpected extra LLM call easy to spot.
    """

    name: str | None = "scripted"
    script: list[AIMessage] = Field(default_factory=list)
    """The full script, in call order (for inspection; replies come from `messages`)."""
    calls: int = 0
    """How many scripted replies have been handed out so far."""

    @classmethod
    def from_messages(cls, name: str, messages: Iterable[AIMessage]) -> ScriptedChatModel:
        """Build a model named `name` that replays `messages` in order."""
        script = list(messages)
        return cls(name=name, script=script, messages=iter(script))

    @property
    def remaining(self) -> int:
        """Number of scripted replies not yet used."""
        return len(self.script) - self.calls

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedChatModel:
        """Accept tools like a real tool-calling model; the script decides the calls."""
        return self

    def _next_message(self) -> AIMessage:
        try:
            message = next(self.messages)
        except StopIteration:
            msg = (
                f"ScriptedChatModel {self.name!r} ran out of script: it was called "
                f"{self.calls + 1} time(s) but has only {len(self.script)} scripted "
                "replies."
            )
            raise ScriptExhaustedError(msg) from None
        self.calls += 1
        if isinstance(message, str):
            return AIMessage(content=message)
        return message.model_copy(deep=True)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self._next_message())])

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        message = self._next_message()
        content = message.content
        tokens: list[Any] = (
            [t for t in re.split(r"(\s)", content) if t] if isinstance(content, str) else [content]
        )
        tool_chunks = [
            {
                "name": call["name"],
                "args": json.dumps(call["args"]),
                "id": call["id"],
                "index": index,
                "type": "tool_call_chunk",
            }
            for index, call in enumerate(message.tool_calls)
        ]
        tokens = tokens or [""]
        for index, token in enumerate(tokens):
            last = index == len(tokens) - 1
            chunk = AIMessageChunk(
                content=token,
                id=message.id,
                tool_call_chunks=tool_chunks if last else [],
                chunk_position="last" if last else None,
            )
            if run_manager and isinstance(token, str):
                run_manager.on_llm_new_token(token, chunk=ChatGenerationChunk(message=chunk))
            yield ChatGenerationChunk(message=chunk)


def tool_call(name: str, args: dict[str, Any], id: str) -> ToolCall:
    """A tool call for a scripted reply, with a fixed id."""
    return ToolCall(name=name, args=args, id=id, type="tool_call")


def ai(id: str, content: str = "", *tool_calls: ToolCall) -> AIMessage:
    """A scripted assistant reply with a fixed message `id` and optional tool calls."""
    return AIMessage(content=content, id=id, tool_calls=list(tool_calls))


def scripted_model(name: str, *messages: AIMessage) -> ScriptedChatModel:
    """Shorthand for `ScriptedChatModel.from_messages(name, messages)`."""
    return ScriptedChatModel.from_messages(name, messages)


def reply_text(message: BaseMessage) -> str:
    """The plain-string text of a model reply (works for string and block content)."""
    return str(message.text)
