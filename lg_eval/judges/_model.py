"""The judge model at the edge: resolving it and putting a prompt to it.

A judge client turns a prompt and an :class:`OutputSpec` into one
:class:`~lg_eval._effects.Effect` returning an ``AIMessage``: a blocking call
for the sync driver, an awaited call for the async one, both inside a slot of
the process-wide concurrency cap (see :mod:`lg_eval.judges._limits`). Deciding
what to do with the answer, and whether to retry, is left to the judge core.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Literal, Protocol

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.messages.tool import invalid_tool_call, tool_call
from langchain_core.messages.utils import convert_to_openai_messages
from langchain_core.runnables import RunnableLambda

from lg_eval._daemons import athread
from lg_eval._effects import Effect
from lg_eval.errors import InvalidOptionError
from lg_eval.judges import _prompts as prompts
from lg_eval.judges._limits import JudgeConcurrency, blocking, limited
from lg_eval.judges._schema import OutputSpec

DEFAULT_MODEL = "openai:o3-mini"
MODEL_ENV = "LG_EVAL_JUDGE_MODEL"

StructuredOutput = Literal["function_calling", "json_schema"]
"""How a judge asks for its structured answer: a forced call of the judgment tool, or the
provider's ``json_schema`` response format (the answer is then a JSON text)."""


class JudgeClient(Protocol):
    """Something that can put a prompt to a judge model."""

    @property
    def name(self) -> str: ...

    def request(
        self,
        messages: Sequence[BaseMessage],
        spec: OutputSpec,
        timeout: float | None,
        limit: JudgeConcurrency,
    ) -> Effect[AIMessage]: ...


RequestHook = Callable[
    [str, Sequence[BaseMessage], OutputSpec, Callable[[], Effect[AIMessage]]], Effect[AIMessage]
]
"""Wraps each judge model request: ``hook(model_name, messages, spec, make_request)`` returns
the effect to perform (``make_request()`` builds the next one in, ending at the real call).
Install one with :func:`use_hook`; the judge cache and the rate limiter are hooks."""

REQUEST_HOOK: ContextVar[RequestHook | None] = ContextVar("lg_eval_judge_request", default=None)
"""The hook in force in this context: every hook entered with :func:`use_hook`, composed."""


def compose(outer: RequestHook, inner: RequestHook | None) -> RequestHook:
    """``outer`` around ``inner``: what ``outer`` asks ``make_request()`` for goes through
    ``inner`` first (and only then to the model), so whatever ``outer`` answers by itself (a
    cache hit) never reaches ``inner`` (the rate limiter)."""
    if inner is None:
        return outer

    def hook(
        model: str,
        messages: Sequence[BaseMessage],
        spec: OutputSpec,
        make_request: Callable[[], Effect[AIMessage]],
    ) -> Effect[AIMessage]:
        return outer(model, messages, spec, lambda: inner(model, messages, spec, make_request))

    return hook


@contextmanager
def use_hook(hook: RequestHook) -> Iterator[None]:
    """Route the judge requests of this context (and the tasks and threads copying it) through
    ``hook``, wrapped around whichever hooks are already in force.

    The hook entered last is the outermost: enter the rate limiter first and the cache inside
    it (``with limiter.active(), cache.active():``), so that cache hits spend no rate budget.
    """
    token = REQUEST_HOOK.set(compose(hook, REQUEST_HOOK.get()))
    try:
        yield
    finally:
        REQUEST_HOOK.reset(token)


def model_request(
    client: JudgeClient,
    messages: Sequence[BaseMessage],
    spec: OutputSpec,
    timeout: float | None,
    limit: JudgeConcurrency,
) -> Effect[AIMessage]:
    """``client.request(...)``, through the :data:`REQUEST_HOOK` in context if one is set."""
    hook = REQUEST_HOOK.get()
    if hook is None:
        return client.request(messages, spec, timeout, limit)
    return hook(client.name, messages, spec, lambda: client.request(messages, spec, timeout, limit))


class ChatModelClient:
    """A LangChain chat model, asked to call the judgment tool (or, with ``"json_schema"``,
    for the provider's structured-output response format).

    Models without tool calling are asked for a JSON object in plain text instead.
    """

    def __init__(self, model: BaseChatModel, method: StructuredOutput = "function_calling") -> None:
        self.model = model
        self.method = method
        model_name = getattr(model, "model_name", None) or getattr(model, "model", None)
        self.name = str(model_name or type(model).__name__)

    def request(
        self,
        messages: Sequence[BaseMessage],
        spec: OutputSpec,
        timeout: float | None,
        limit: JudgeConcurrency,
    ) -> Effect[AIMessage]:
        runnable, messages = self._prepare(list(messages), spec)
        return Effect(
            lambda: blocking(limit, lambda: runnable.invoke(messages), timeout),
            lambda: limited(limit, lambda: runnable.ainvoke(messages), timeout),
        )

    def _prepare(
        self, messages: list[BaseMessage], spec: OutputSpec
    ) -> tuple[Any, list[BaseMessage]]:
        if self.method == "json_schema":
            return self._json_schema(spec), messages
        tools = [spec.tool()]
        try:
            return self.model.bind_tools(tools, tool_choice=spec.name), messages
        except NotImplementedError:
            pass
        except (TypeError, ValueError):  # the model takes tools but not tool_choice
            try:
                return self.model.bind_tools(tools), messages
            except NotImplementedError:
                pass
        schema = json.dumps(spec.schema, ensure_ascii=False)
        instructions = HumanMessage(prompts.TEXT_MODE_INSTRUCTIONS.format(schema=schema))
        return self.model, [*messages, instructions]

    def _json_schema(self, spec: OutputSpec) -> Any:
        """The model bound to the ``json_schema`` response format; it answers the raw message
        (its text is read like any JSON answer, so a bad one is retried with the problem)."""
        try:
            structured = self.model.with_structured_output(
                spec.schema, method="json_schema", strict=True, include_raw=True
            )
        except (NotImplementedError, TypeError, ValueError) as exc:
            raise InvalidOptionError(
                f"structured_output='json_schema': the judge model {self.name!r} does not "
                f"support a json_schema response format ({exc}). Use the default "
                "structured_output='function_calling'."
            ) from exc
        return structured | RunnableLambda(_raw_message, name="raw_message")


def _raw_message(output: dict[str, Any]) -> Any:
    return output["raw"]


class OpenAIClient:
    """An ``openai.OpenAI`` or ``openai.AsyncOpenAI`` client plus a model name.

    The client is used through a copy without retries of its own (``with_options``), so the
    judge's retry policy is the only one and counts every request; each request carries the
    judge's timeout.
    """

    def __init__(
        self, client: Any, model: str | None, method: StructuredOutput = "function_calling"
    ) -> None:
        if not model:
            raise InvalidOptionError(
                "judge is an OpenAI client, so model= must name the model to call "
                "(e.g. model='gpt-4o-mini')."
            )
        with_options = getattr(client, "with_options", None)
        self.client = with_options(max_retries=0) if callable(with_options) else client
        self.method = method
        self.model = model.removeprefix("openai:")
        self.name = f"openai:{self.model}"
        create = client.chat.completions.create
        self._async = inspect.iscoroutinefunction(inspect.unwrap(create))

    def request(
        self,
        messages: Sequence[BaseMessage],
        spec: OutputSpec,
        timeout: float | None,
        limit: JudgeConcurrency,
    ) -> Effect[AIMessage]:
        params: dict[str, Any] = {
            "model": self.model,
            "messages": convert_to_openai_messages(list(messages)),
        }
        if self.method == "json_schema":
            schema = {"name": spec.name, "schema": spec.schema, "strict": True}
            params["response_format"] = {"type": "json_schema", "json_schema": schema}
        else:
            params["tools"] = [spec.tool()]
            params["tool_choice"] = {"type": "function", "function": {"name": spec.name}}
        if timeout is not None:
            params["timeout"] = timeout
        create = self.client.chat.completions.create
        if self._async:

            def run() -> AIMessage:
                raise InvalidOptionError(
                    "judge is an AsyncOpenAI client, which only the async judge can call; "
                    "await the judge with .aevaluate(...), or pass an openai.OpenAI client."
                )

            async def arun() -> AIMessage:
                return _from_openai(await limited(limit, lambda: create(**params), timeout))

        else:

            def run() -> AIMessage:
                return _from_openai(blocking(limit, lambda: create(**params), timeout))

            async def arun() -> AIMessage:
                call = lambda: athread(lambda: create(**params))  # noqa: E731
                return _from_openai(await limited(limit, call, timeout))

        return Effect(run, arun)


def _from_openai(response: Any) -> AIMessage:
    """A chat-completions response as an ``AIMessage`` (tool calls parsed, usage kept)."""
    message = response.choices[0].message
    calls, invalid = [], []
    for call in getattr(message, "tool_calls", None) or []:
        name, raw = call.function.name, call.function.arguments
        try:
            args = json.loads(raw or "{}")
            if not isinstance(args, dict):
                raise ValueError("the arguments are not a JSON object")
            calls.append(tool_call(name=name, args=args, id=call.id))
        except ValueError as exc:  # JSONDecodeError is a ValueError
            invalid.append(invalid_tool_call(name=name, args=raw, id=call.id, error=str(exc)))
    usage = getattr(response, "usage", None)
    dump = getattr(usage, "model_dump", None)
    raw_usage: dict[str, Any] = dump() if callable(dump) else dict(usage or {})
    inputs = int(raw_usage.get("prompt_tokens") or 0)
    outputs = int(raw_usage.get("completion_tokens") or 0)
    return AIMessage(
        content=getattr(message, "content", None) or "",
        tool_calls=calls,
        invalid_tool_calls=invalid,
        usage_metadata={
            "input_tokens": inputs,
            "output_tokens": outputs,
            "total_tokens": int(raw_usage.get("total_tokens") or inputs + outputs),
        },
        response_metadata={"token_usage": raw_usage},
    )
