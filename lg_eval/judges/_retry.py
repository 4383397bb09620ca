"""When and how long to wait before asking a judge model again."""

from __future__ import annotations

import random
from collections.abc import Mapping

from langchain_core.exceptions import ModelError, ModelTimeoutError
from pydantic.dataclasses import dataclass

from lg_eval._arguments import BOUNDARY, Delay, Seconds, Size, validated
from lg_eval._retry_after import asked_wait

_TRANSIENT_STATUS = {408, 409, 425, 429, 500, 502, 503, 504, 529}
_TRANSIENT_NAMES = {
    "RateLimitError",
    "APITimeoutError",
    "APIConnectionError",
    "InternalServerError",
    "OverloadedError",
    "ServiceUnavailableError",
    "ServiceUnavailable",
    "ResourceExhausted",
    "DeadlineExceeded",
    "TimeoutException",
    "ConnectError",
    "ReadError",
    "RemoteProtocolError",
}


RETRY_AFTER_MAX = 60.0
"""The longest ``Retry-After`` honoured, in seconds (longer hints wait this long)."""

_TIMEOUT_NAMES = {"APITimeoutError", "TimeoutException", "DeadlineExceeded"}


def is_transient(exc: BaseException) -> bool:
    """Whether retrying may help: rate limits, timeouts, overload, dropped connections.

    LangChain's own classification (``langchain_core.exceptions.ModelError.is_retryable``,
    which provider packages such as ``langchain-openai`` raise) is taken as given.
    """
    if isinstance(exc, TimeoutError | ConnectionError):
        return True
    if isinstance(exc, ModelError):
        return bool(exc.is_retryable)
    if any(cls.__name__ in _TRANSIENT_NAMES for cls in type(exc).__mro__):
        return True
    return _status(exc) in _TRANSIENT_STATUS


def _status(exc: BaseException) -> int | None:
    status = getattr(exc, "status_code", None) or getattr(
        getattr(exc, "response", None), "status_code", None
    )
    return status if isinstance(status, int) else None


def is_timeout(exc: BaseException) -> bool:
    """Whether ``exc`` says the model did not answer in time (ours, or the HTTP client's)."""
    if isinstance(exc, TimeoutError | ModelTimeoutError):
        return True
    return any(cls.__name__ in _TIMEOUT_NAMES for cls in type(exc).__mro__)


def retry_after(exc: BaseException) -> float | None:
    """Seconds the provider asked to wait, if it said, from the headers of the exception's
    response (:func:`lg_eval._retry_after.asked_wait`: ``Retry-After-Ms``, else
    ``Retry-After`` in seconds or as an HTTP date)."""
    headers = getattr(getattr(exc, "response", None), "headers", None)
    return asked_wait(headers) if isinstance(headers, Mapping) else None


@validated
@dataclass(frozen=True, config=BOUNDARY)
class RetryPolicy:
    """How a judge call copes with failure.

    ``max_retries`` transient provider errors are retried after exponential
    backoff with jitter (``backoff_base * 2**n`` seconds, capped at
    ``backoff_max``), or after the provider's ``Retry-After`` when that is longer (up to
    :data:`RETRY_AFTER_MAX`: a retry sooner than asked would only meet another 429);
    ``parse_retries`` malformed
    answers are retried with the problem shown to the model; ``timeout``
    seconds bound each model call (None: no bound).
    """

    max_retries: Size = 3
    parse_retries: Size = 2
    backoff_base: Delay = 1.0
    backoff_max: Delay = 30.0
    timeout: Seconds | None = 120.0

    def delay(self, attempt: int, exc: BaseException) -> float:
        """Seconds to wait before retry number ``attempt + 1``."""
        cap = min(self.backoff_max, self.backoff_base * 2**attempt)
        wait = cap / 2 + random.uniform(0, cap / 2)
        hint = retry_after(exc)
        return float(max(wait, min(hint, RETRY_AFTER_MAX))) if hint else float(wait)
