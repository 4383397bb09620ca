"""The judge client for what the user named: a ``"provider:model"`` string, a chat model,
or an OpenAI client.

A model named by a string is created by lg_eval (LangChain's ``init_chat_model``) on first
use. For OpenAI's providers lg_eval also chooses the client settings that the judge's own
policy depends on:

* ``max_retries=0`` and the judge's ``timeout``: the judge's retry policy is the only one
  (the SDK's two retries of its own would multiply it, wait on their own schedule and hide
  requests from the rate limiter), and a call the judge gave up on is ended by the HTTP
  client too, instead of running on in the background for the SDK's ten minutes.
* one async HTTP client per event loop: ``langchain-openai`` shares one cached
  ``httpx.AsyncClient`` per base URL across every ``ChatOpenAI``, and a keep-alive
  connection opened on an event loop that has since closed fails the next call on another
  loop with ``RuntimeError: Event loop is closed`` (each ``asyncio.run``, each
  pytest-asyncio test, each sync node awaiting an async judge has a loop of its own).
"""

from __future__ import annotations

import asyncio
import os
import threading
import weakref
from collections.abc import Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage

from lg_eval._effects import Effect
from lg_eval.errors import InvalidOptionError, JudgeError
from lg_eval.judges._limits import JudgeConcurrency
from lg_eval.judges._model import (
    DEFAULT_MODEL,
    MODEL_ENV,
    ChatModelClient,
    JudgeClient,
    OpenAIClient,
    StructuredOutput,
)
from lg_eval.judges._schema import OutputSpec

OPENAI_PROVIDERS = ("openai", "azure_openai")
"""Providers whose model lg_eval creates with the settings above."""


class LazyClient:
    """A ``"provider:model"`` string, turned into a chat model on first use."""

    def __init__(
        self,
        model: str,
        *,
        timeout: float | None = None,
        method: StructuredOutput = "function_calling",
    ) -> None:
        self.name = model
        self.timeout = timeout
        self.method = method
        provider, colon, _ = model.partition(":")
        self.openai = bool(colon) and provider in OPENAI_PROVIDERS
        self._client: ChatModelClient | None = None
        self._per_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, ChatModelClient]
        self._per_loop = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()

    def request(
        self,
        messages: Sequence[BaseMessage],
        spec: OutputSpec,
        timeout: float | None,
        limit: JudgeConcurrency,
    ) -> Effect[AIMessage]:
        def run() -> AIMessage:
            return self._resolve().request(messages, spec, timeout, limit).run()

        async def arun() -> AIMessage:
            client = self._resolve(asyncio.get_running_loop())
            return await client.request(messages, spec, timeout, limit).arun()

        return Effect(run, arun)

    def _resolve(self, loop: asyncio.AbstractEventLoop | None = None) -> ChatModelClient:
        """The client for sync calls, or for async calls on ``loop``."""
        with self._lock:
            if loop is None or not self.openai:
                if self._client is None:
                    self._client = self._create({})
                return self._client
            client = self._per_loop.get(loop)
            if client is None:
                import openai  # the provider's own package, present with langchain-openai

                http = openai.DefaultAsyncHttpxClient(timeout=self.timeout)
                client = self._per_loop[loop] = self._create({"http_async_client": http})
            return client

    def _create(self, settings: dict[str, Any]) -> ChatModelClient:
        from langchain.chat_models import init_chat_model

        if self.openai:
            settings = {"max_retries": 0, "timeout": self.timeout, **settings}
        try:
            return ChatModelClient(init_chat_model(self.name, **settings), self.method)
        except Exception as exc:
            raise JudgeError(
                f"Could not create the judge model {self.name!r}: {exc} Install the "
                "provider's package and set its API key, choose another model with "
                f"model= or {MODEL_ENV}, or pass judge=<a chat model>."
            ) from exc


def resolve_client(
    model: str | None,
    judge: Any,
    *,
    timeout: float | None = None,
    method: StructuredOutput = "function_calling",
) -> JudgeClient:
    """The client for ``judge`` (a chat model or OpenAI client) or for the ``model`` string.

    ``timeout`` (the judge's, per call) is given to the clients lg_eval creates itself;
    ``method`` is how the structured answer is asked for.
    """
    if judge is None:
        name = model or os.environ.get(MODEL_ENV, "").strip() or DEFAULT_MODEL
        return LazyClient(name, timeout=timeout, method=method)
    if isinstance(judge, BaseChatModel):
        return ChatModelClient(judge, method)
    completions = getattr(getattr(judge, "chat", None), "completions", None)
    if callable(getattr(completions, "create", None)):
        return OpenAIClient(judge, model, method)
    raise InvalidOptionError(
        f"judge is a {type(judge).__name__}; pass a LangChain chat model, an OpenAI client "
        "(with model=), or leave it out and pass model='provider:model'."
    )
