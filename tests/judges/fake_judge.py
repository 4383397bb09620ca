"""A scripted chat model for testing LLM judges without an API key.

:class:`ScriptedJudge` answers each call with the next item of its script: an
``AIMessage`` (usually a tool call built with :func:`verdict`), an exception to
raise, or a callable computing the reply from the prompt. ``bind_tools``
returns a bound copy sharing the script, like a real tool-calling model, and
every call is recorded (prompt, tools, tool_choice) along with the peak number
of calls in flight at once.
"""

from __future__ import annotations

import asyncio
import itertools
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import httpx
import openai
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import ConfigDict, Field

Reply = AIMessage | BaseException | Callable[[list[BaseMessage]], AIMessage]
_ids = itertools.count(1)


@dataclass
class Call:
    """One call the judge made."""

    messages: list[BaseMessage]
    tools: list[dict[str, Any]] | None
    tool_choice: Any

    @property
    def prompt(self) -> str:
        """The text of the last user message (the rendered judge prompt)."""
        return str([m for m in self.messages if m.type == "human"][-1].content)


class Script:
    """Shared state of a scripted model and all its bound copies."""

    def __init__(self, replies: list[Reply], repeat_last: bool = False) -> None:
        self.replies = replies
        self.repeat_last = repeat_last
        self.calls: list[Call] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.lock = threading.Lock()

    def take(self, call: Call) -> AIMessage:
        with self.lock:
            index = len(self.calls)
            self.calls.append(call)
            if index >= len(self.replies) and not (self.repeat_last and self.replies):
                raise AssertionError(f"script exhausted: call {index + 1} has no reply")
            reply = self.replies[min(index, len(self.replies) - 1)]
        if isinstance(reply, BaseException):
            raise reply
        if callable(reply) and not isinstance(reply, AIMessage):
            reply = reply(call.messages)
        return _named(reply, call)

    def enter(self) -> None:
        with self.lock:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)

    def leave(self) -> None:
        with self.lock:
            self.in_flight -= 1


def _named(reply: AIMessage, call: Call) -> AIMessage:
    """Fill unnamed tool calls with the tool the judge asked for."""
    wanted = call.tool_choice if isinstance(call.tool_choice, str) else None
    if wanted is None and call.tools:
        wanted = call.tools[0]["function"]["name"]
    calls = [{**c, "name": c["name"] or wanted or ""} for c in reply.tool_calls]
    return reply.model_copy(update={"tool_calls": calls}, deep=True)


class ScriptedJudge(BaseChatModel):
    """A chat model that replays a script; ``delay`` seconds per call (sync or async)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    script: Script
    delay: float = 0.0
    model_name: str = Field(default="scripted-judge")

    @classmethod
    def of(cls, *replies: Reply, delay: float = 0.0, repeat_last: bool = False) -> ScriptedJudge:
        return cls(script=Script(list(replies), repeat_last=repeat_last), delay=delay)

    @property
    def calls(self) -> list[Call]:
        return self.script.calls

    @property
    def _llm_type(self) -> str:
        return "scripted-judge"

    def bind_tools(self, tools: Sequence[Any], *, tool_choice: Any = None, **kwargs: Any):
        return self.bind(tools=list(tools), tool_choice=tool_choice, **kwargs)

    def _call(self, messages: list[BaseMessage], kwargs: dict[str, Any]) -> Call:
        return Call(list(messages), kwargs.get("tools"), kwargs.get("tool_choice"))

    def _generate(self, messages, stop=None, run_manager=None, **kwargs) -> ChatResult:
        self.script.enter()
        try:
            time.sleep(self.delay)
            reply = self.script.take(self._call(messages, kwargs))
        finally:
            self.script.leave()
        return ChatResult(generations=[ChatGeneration(message=reply)])

    async def _agenerate(self, messages, stop=None, run_manager=None, **kwargs) -> ChatResult:
        self.script.enter()
        try:
            await asyncio.sleep(self.delay)
            reply = self.script.take(self._call(messages, kwargs))
        finally:
            self.script.leave()
        return ChatResult(generations=[ChatGeneration(message=reply)])


class PlainChatModel(ScriptedJudge):
    """A scripted model without tool calling (``bind_tools`` is not implemented)."""

    def bind_tools(self, tools: Sequence[Any], *, tool_choice: Any = None, **kwargs: Any):
        raise NotImplementedError


def usage(input_tokens: int = 100, output_tokens: int = 20) -> dict[str, int]:
    return {
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "total_tokens": input_tokens + output_tokens,
    }


def verdict(
    *, tokens: tuple[int, int] = (100, 20), cost: float | None = None, **args: Any
) -> AIMessage:
    """A reply calling the judge's tool with ``args`` (the tool name is filled in)."""
    return AIMessage(
        content="",
        tool_calls=[{"name": "", "args": args, "id": f"call_{next(_ids)}"}],
        usage_metadata=usage(*tokens),
        response_metadata={"cost": cost} if cost is not None else {},
    )


def invalid_json(raw: str = '{"score": tru', tool: str = "record_judgment") -> AIMessage:
    """A reply whose tool call arguments are not valid JSON."""
    return AIMessage(
        content="",
        invalid_tool_calls=[
            {
                "name": tool,
                "args": raw,
                "id": "bad",
                "error": "Expecting value",
                "type": "invalid_tool_call",
            }
        ],
        usage_metadata=usage(),
    )


def text(content: str) -> AIMessage:
    """A plain text reply (no tool call)."""
    return AIMessage(content=content, usage_metadata=usage())


def rate_limit(retry_after: str | None = None) -> openai.RateLimitError:
    """The error OpenAI raises on HTTP 429."""
    headers = {"retry-after": retry_after} if retry_after else {}
    request = httpx.Request("POST", "https://api.openai.com/v1/chat/completions")
    response = httpx.Response(429, headers=headers, request=request)
    return openai.RateLimitError("Rate limit reached", response=response, body=None)


def auth_error() -> openai.AuthenticationError:
    """The error OpenAI raises on HTTP 401 (not worth retrying)."""
    request = httpx.Request("POST", "https://api.openai.com/v1/chat/completions")
    response = httpx.Response(401, request=request)
    return openai.AuthenticationError("Incorrect API key", response=response, body=None)
