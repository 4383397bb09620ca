"""When and how long to wait before asking a judge model again."""

from __future__ import annotations

import random
from dataclasses import dataclass

from lg_eval.errors import InvalidOptionError

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


def is_transient(exc: BaseException) -> bool:
    """Whether retrying may help: rate limits, timeouts, overload, dropped connections."""
    if isinstance(exc, TimeoutError | ConnectionError):
        return True
    if any(cls.__name__ in _TRANSIENT_NAMES for cls in type(exc).__mro__):
        return True
    return _status(exc) in _TRANSIENT_STATUS


def _status(exc: BaseException) -> int | None:
    status = getattr(exc, "status_code", None) or getattr(
        getattr(exc, "response", None), "status_code", None
    )
    return status if isinstance(status, int) else None


def retry_after(exc: BaseException) -> float | None:
    """Seconds the provider asked to wait (a numeric ``Retry-After`` header), if any."""
    headers = getattr(getattr(exc, "response", None), "headers", None)
    try:
        return float(headers.get("retry-after")) if headers is not None else None
    except (TypeError, ValueError):
        return None


@dataclass(frozen=True)
class RetryPolicy:
    """How a judge call copes with failure.

    ``max_retries`` transient provider errors are retried after exponential
    backoff with jitter (``backoff_base * 2**n`` seconds, capped at
    ``backoff_max``, honouring ``Retry-After``); ``parse_retries`` malformed
    answers are retried with the problem shown to the model; ``timeout``
    seconds bound each model call (None: no bound).
    """

    max_retries: int = 3
    parse_retries: int = 2
    backoff_base: float = 1.0
    backoff_max: float = 30.0
    timeout: float | None = 120.0

    def __post_init__(self) -> None:
        for name in ("max_retries", "parse_retries", "backoff_base", "backoff_max"):
            if getattr(self, name) < 0:
                raise InvalidOptionError(f"{name} must be >= 0, got {getattr(self, name)}.")
        if self.timeout is not None and self.timeout <= 0:
            raise InvalidOptionError(f"timeout must be > 0 seconds or None, got {self.timeout}.")

    def delay(self, attempt: int, exc: BaseException) -> float:
        """Seconds to wait before retry number ``attempt + 1``."""
        cap = min(self.backoff_max, self.backoff_base * 2**attempt)
        wait = cap / 2 + random.uniform(0, cap / 2)
        hint = retry_after(exc)
        return float(max(wait, min(hint, self.backoff_max))) if hint else wait


__all__ = [
    "RetryPolicy",
    "is_transient",
    "retry_after",
]
