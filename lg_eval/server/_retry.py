"""How long to wait before retrying a LangGraph Server request.

Exponential backoff (``backoff * 2 ** (attempt - 1)``), unless the server said how long
with ``Retry-After`` (seconds, or an HTTP date) on a 429 or 5xx: then that, capped at
:data:`MAX_WAIT` so that a server asking for an hour does not hang a sweep.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

import httpx

MAX_WAIT = 60.0
"""The longest wait between two attempts, in seconds, whatever ``Retry-After`` says."""


def retry_after(response: httpx.Response | None, *, now: datetime | None = None) -> float | None:
    """The wait the response's ``Retry-After`` header asks for, in seconds: finite and
    >= 0, a date in the past being 0 (None: no header, or one that is neither a number
    of seconds nor an HTTP date)."""
    if response is None:
        return None
    value = response.headers.get("retry-after")
    if value is None:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        pass
    else:
        return max(0.0, seconds) if math.isfinite(seconds) else None
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


def wait_before(attempt: int, backoff: float, response: httpx.Response | None) -> float:
    """Seconds to sleep after failed attempt number ``attempt`` (1-based)."""
    asked = retry_after(response)
    wait = asked if asked is not None else backoff * 2 ** (attempt - 1)
    return min(wait, MAX_WAIT)


__all__ = ["MAX_WAIT", "retry_after", "wait_before"]
