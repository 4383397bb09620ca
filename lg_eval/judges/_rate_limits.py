"""A provider's rate limits, held for every judge call of a process (or of a Ray cluster).

Providers cap requests per minute, tokens per minute and sometimes the calls in
flight at once; going over gets HTTP 429s, retries and wasted time. A
:class:`RateLimiter` keeps the judge calls under a :class:`RateLimits` budget:
before each request it waits until a request slot, a concurrency slot and the
request's *estimated* tokens fit the rolling window, and after the reply it
replaces the estimate with the tokens the reply reports.

The estimate (:func:`estimate_tokens`) is the characters sent (every message's
content and tool calls, plus the judgment tool's name, description and schema)
divided by 4, rounded up, plus ``reply_tokens`` for the answer. It only has to
be close: the correction from ``usage_metadata["total_tokens"]`` follows as soon
as the reply arrives (a reply without usage keeps its estimate, as does a
failed request, which counts as a request too).

One bookkeeping core, :class:`Budget`, decides; :func:`limited_request` is the
one request core (sync and async, see :mod:`lg_eval._effects`), asking a
:class:`Gate` for permission: the local limiter's gate is a lock around a
``Budget``, the Ray limiter actor's gate (:mod:`lg_eval.experiments._judges`)
a remote ``Budget``; :func:`holding` enters either for a context. A limits'
``max_concurrent`` is then the one cap on judge calls in flight: the judges' own
:class:`~lg_eval.judges.JudgeConcurrency` steps aside inside it. Waiting callers poll: a
sync caller sleeps its thread, an async one awaits ``asyncio.sleep``, so its event loop
keeps running. Polling is not first-come-first-served; under a long wait any caller may
go next.
"""

from __future__ import annotations

import itertools
import json
import math
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import asdict, dataclass, field
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage
from pydantic import BaseModel, ConfigDict

from lg_eval._arguments import Count, Seconds, Size, validated
from lg_eval._effects import Core, Effect, driven, sleep
from lg_eval.errors import InvalidOptionError
from lg_eval.judges._limits import limiter_caps
from lg_eval.judges._model import RequestHook, use_hook
from lg_eval.judges._schema import OutputSpec

DEFAULT_REPLY_TOKENS = 512
LEASE_SECONDS = 600.0
"""A grant not settled this long after it was given is released (its caller died)."""


@validated
class RateLimits(BaseModel):
    """What the provider allows: every field optional, None meaning no limit of that kind.

    ``requests_per_minute`` and ``tokens_per_minute`` hold in *any* rolling window of
    ``window_seconds`` (60: a minute, as providers state them; a shorter window makes
    tests fast: ``requests_per_minute=5, window_seconds=1`` allows 5 requests in any
    second). ``max_concurrent`` caps the calls in flight. ``reply_tokens`` is the reply
    allowance added to each request's estimate. Bad values raise
    :class:`~lg_eval.errors.InvalidOptionError` naming the field.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    requests_per_minute: Count | None = None
    tokens_per_minute: Count | None = None
    max_concurrent: Count | None = None
    reply_tokens: Size = DEFAULT_REPLY_TOKENS
    window_seconds: Seconds = 60.0

    @classmethod
    def of(cls, value: RateLimits | Mapping[str, Any]) -> RateLimits:
        """``value`` as :class:`RateLimits` (a mapping is validated like keyword arguments)."""
        if isinstance(value, RateLimits):
            return value
        if not isinstance(value, Mapping):
            raise InvalidOptionError(
                f"limits is a {type(value).__name__}; pass RateLimits(...) or a dict of its "
                "fields (requests_per_minute, tokens_per_minute, max_concurrent, ...)."
            )
        return cls(**value)


def estimate_tokens(messages: Sequence[BaseMessage], spec: OutputSpec, reply_tokens: int) -> int:
    """Tokens a request will use: ceil(characters sent / 4) + ``reply_tokens``.

    The characters are each message's content (text, or the JSON of content blocks)
    and tool calls, and the judgment tool's name, description and JSON schema.
    """
    chars = len(spec.name) + len(spec.description or "") + len(_json(spec.schema))
    for message in messages:
        content = message.content
        chars += len(content) if isinstance(content, str) else len(_json(content))
        for call in getattr(message, "tool_calls", None) or ():
            chars += len(call["name"]) + len(_json(call["args"]))
    return math.ceil(chars / 4) + reply_tokens


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def used_tokens(reply: AIMessage) -> int | None:
    """The reply's ``usage_metadata["total_tokens"]``, or None when it reports no usage."""
    usage = reply.usage_metadata
    return None if usage is None else int(usage.get("total_tokens") or 0)


@dataclass
class LimiterStats:
    """What a limiter let through: requests, how many had to wait and for how long, tokens."""

    requests: int = 0
    waits: int = 0
    waited_seconds: float = 0.0
    tokens: int = 0
    max_in_flight: int = 0

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["waited_seconds"] = round(self.waited_seconds, 6)
        return data


@dataclass
class _Entry:
    started: float
    tokens: int
    counted: bool = True  # still in the window (its tokens in Budget._tokens)


@dataclass
class Budget:
    """The rolling-window bookkeeping of one :class:`RateLimits` (not thread-safe: the
    local limiter locks around it, the Ray actor runs one call at a time).

    :meth:`try_acquire` either grants a request (a grant id to :meth:`settle` when the
    reply is in) or says how long to wait before asking again (None: until a call in
    flight finishes, which cannot be known in advance).
    """

    limits: RateLimits
    clock: Callable[[], float] = time.monotonic
    lease: float = LEASE_SECONDS
    stats: LimiterStats = field(default_factory=LimiterStats)
    _window: deque[_Entry] = field(default_factory=deque)
    _in_flight: dict[int, _Entry] = field(default_factory=dict)  # oldest grant first
    _tokens: int = 0
    _ids: Iterator[int] = field(default_factory=lambda: itertools.count(1))

    def try_acquire(self, estimate: int, waited: float = 0.0) -> tuple[int | None, float | None]:
        """``(grant, None)`` if a request of ``estimate`` tokens fits now, else ``(None,
        seconds to wait)``; ``waited`` is how long the caller has waited so far (for stats)."""
        now = self.clock()
        self._expire(now)
        limits = self.limits
        if limits.max_concurrent is not None and len(self._in_flight) >= limits.max_concurrent:
            return None, None
        tokens = estimate
        if limits.tokens_per_minute is not None:  # a request bigger than the budget runs alone
            tokens = min(estimate, limits.tokens_per_minute)
        wait = max(self._request_wait(now), self._token_wait(now, tokens))
        if wait > 0:
            return None, wait
        grant = next(self._ids)
        entry = _Entry(now, tokens)
        self._window.append(entry)
        self._tokens += tokens
        self._in_flight[grant] = entry
        self.stats.requests += 1
        self.stats.max_in_flight = max(self.stats.max_in_flight, len(self._in_flight))
        if waited > 0:
            self.stats.waits += 1
            self.stats.waited_seconds += waited
        return grant, None

    def settle(self, grant: int, tokens: int | None) -> None:
        """The request of ``grant`` is done: free its slot; ``tokens`` it really used (None:
        unknown, keep the estimate)."""
        entry = self._in_flight.pop(grant, None)
        if entry is None:
            return  # already released by its lease
        if tokens is not None:
            if entry.counted:
                self._tokens += tokens - entry.tokens
            entry.tokens = tokens
        self.stats.tokens += entry.tokens

    def _request_wait(self, now: float) -> float:
        limit = self.limits.requests_per_minute
        if limit is None or len(self._window) < limit:
            return 0.0
        return self._window[len(self._window) - limit].started + self.limits.window_seconds - now

    def _token_wait(self, now: float, tokens: int) -> float:
        limit = self.limits.tokens_per_minute
        if limit is None or self._tokens + tokens <= limit:
            return 0.0
        left = self._tokens
        for entry in self._window:  # oldest first: the ones that expire first
            left -= entry.tokens
            if left + tokens <= limit:
                return entry.started + self.limits.window_seconds - now
        return 0.0  # unreachable: an empty window holds any clamped request

    def _expire(self, now: float) -> None:
        horizon = now - self.limits.window_seconds
        while self._window and self._window[0].started <= horizon:
            entry = self._window.popleft()
            entry.counted = False
            self._tokens -= entry.tokens
        while self._in_flight:
            grant, entry = next(iter(self._in_flight.items()))
            if entry.started > now - self.lease:
                break
            del self._in_flight[grant]  # its caller never settled: gone, or cancelled


@dataclass(frozen=True)
class Gate:
    """How :func:`limited_request` asks for permission: ``try_acquire(estimate, waited)``
    as an effect returning :meth:`Budget.try_acquire`'s answer; ``settle(grant, tokens)``
    a quick call that must not block (it also runs when the request is cancelled); waits of
    unknown length are polled from ``poll[0]`` doubling up to ``poll[1]`` seconds."""

    try_acquire: Callable[[int, float], Effect[tuple[int | None, float | None]]]
    settle: Callable[[int, int | None], None]
    poll: tuple[float, float] = (0.001, 0.02)


def limited_request(
    gate: Gate, estimate: int, make_request: Callable[[], Effect[AIMessage]]
) -> Core[AIMessage]:
    """The limiter's one core: wait for a grant, make the request, settle with its usage."""
    started = time.monotonic()
    waited, pause = 0.0, gate.poll[0]
    while True:
        grant, wait = yield gate.try_acquire(estimate, waited)
        if grant is not None:
            break
        if wait is None:
            wait, pause = pause, min(pause * 2, gate.poll[1])
        yield sleep(wait)
        waited = time.monotonic() - started
    tokens = None
    try:
        reply: AIMessage = yield make_request()
        tokens = used_tokens(reply)
        return reply
    finally:
        gate.settle(grant, tokens)


def limiting_hook(gate: Gate, limits: RateLimits) -> RequestHook:
    """A :data:`~lg_eval.judges._model.RequestHook` holding each request to ``gate``."""

    def hook(
        model: str,
        messages: Sequence[BaseMessage],
        spec: OutputSpec,
        make_request: Callable[[], Effect[AIMessage]],
    ) -> Effect[AIMessage]:
        estimate = estimate_tokens(messages, spec, limits.reply_tokens)
        # closed however it ends: a cancelled call still settles its grant
        return driven(lambda: limited_request(gate, estimate, make_request))

    return hook


@contextmanager
def holding(gate: Gate, limits: RateLimits) -> Iterator[None]:
    """Hold the judge requests of this context (and the threads and tasks copying it) to
    ``gate``, wrapped around the hooks already active; with ``limits.max_concurrent`` that
    is the one cap on calls in flight (the judges' own concurrency cap steps aside)."""
    with ExitStack() as stack:
        stack.enter_context(use_hook(limiting_hook(gate, limits)))
        if limits.max_concurrent is not None:
            stack.enter_context(limiter_caps())
        yield


class RateLimiter:
    """Rate limits for the judge calls of this process, shared by every thread and loop.

    ``with limiter.active():`` routes the judge calls made in that context (and the
    threads and tasks copying it) through the limiter. Enter it *before* a judge cache
    (``with limiter.active(), cache.active():``) so cache hits spend no budget.
    """

    def __init__(self, limits: RateLimits | Mapping[str, Any]) -> None:
        self.limits = RateLimits.of(limits)
        self._budget = Budget(self.limits)
        self._lock = threading.Lock()
        self.gate = Gate(self._try_acquire, self._settle)

    def _try_acquire(self, estimate: int, waited: float) -> Effect[tuple[int | None, float | None]]:
        def call() -> tuple[int | None, float | None]:
            with self._lock:
                return self._budget.try_acquire(estimate, waited)

        async def acall() -> tuple[int | None, float | None]:
            return call()

        return Effect(call, acall)

    def _settle(self, grant: int, tokens: int | None) -> None:
        with self._lock:
            self._budget.settle(grant, tokens)

    def hook(
        self,
        model: str,
        messages: Sequence[BaseMessage],
        spec: OutputSpec,
        make_request: Callable[[], Effect[AIMessage]],
    ) -> Effect[AIMessage]:
        """The :data:`~lg_eval.judges._model.RequestHook`: hold the request to the budget."""
        return limiting_hook(self.gate, self.limits)(model, messages, spec, make_request)

    @contextmanager
    def active(self) -> Iterator[RateLimiter]:
        """Hold the judge calls of this context to the limits (wrapping hooks already active,
        :func:`holding`)."""
        with holding(self.gate, self.limits):
            yield self

    def stats(self) -> LimiterStats:
        """A copy of the counters so far."""
        with self._lock:
            return LimiterStats(**asdict(self._budget.stats))

    def __repr__(self) -> str:
        return f"RateLimiter({self.limits!r})"
