"""One structured answer from a chat model that is not judging (a simulated user's turn).

The judges know how to get a structured answer out of any chat model: ask it to call one
tool (or, without tool calling, for a JSON object), check the arguments against the tool's
schema, show the model what was wrong and ask again, retry rate limits and timeouts, count
tokens and cost. :func:`structured_answer` lends that machinery (the judge core's
:meth:`~lg_eval.judges._core.Judge.attempt`) to the player's simulated speakers. Their
requests go straight to the model, past the judge cache (a simulated user's next words are
not replayed from another repetition's) and the judges' rate limiter.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage

from lg_eval._effects import Core
from lg_eval.judges._core import Judge, Request
from lg_eval.judges._model import ChatModelClient
from lg_eval.judges._retry import RetryPolicy
from lg_eval.judges._schema import Judgment, OutputSpec, require
from lg_eval.judges._usage import Usage


@dataclass(frozen=True)
class StructuredAnswer:
    """What the model answered: the tool's arguments (None when it never gave usable ones,
    then ``error`` says why), and what asking cost."""

    arguments: dict[str, Any] | None
    error: str | None
    usage: Usage
    latency_s: float
    """Wall time of the calls, retries and their waits included."""


def structured_answer(
    model: BaseChatModel,
    messages: Sequence[BaseMessage],
    *,
    tool: str,
    description: str,
    schema: Mapping[str, Any],
    policy: RetryPolicy | None = None,
) -> Core[StructuredAnswer]:
    """Ask ``model`` to call ``tool`` (whose arguments ``schema`` describes) once, as a
    judge asks for its judgment (see the module text); never raises for the model's
    failures (they are the answer's ``error``)."""
    shape = dict(schema)

    def read(arguments: dict[str, Any]) -> Judgment:
        require(arguments, shape)
        return Judgment({}, None, dict(arguments))

    spec = OutputSpec(tool, shape, read, description=description, score_range=None)
    judge = Judge(ChatModelClient(model), spec, policy=policy or RetryPolicy(), hooks=False)
    started = time.perf_counter()
    outcome = yield from judge.attempt(Request(list(messages), read))
    latency = time.perf_counter() - started
    if outcome.judgment is None:
        error = (outcome.error or {}).get("message", "no usable answer")
        return StructuredAnswer(None, error, outcome.usage, latency)
    return StructuredAnswer(dict(outcome.judgment.fields), None, outcome.usage, latency)
