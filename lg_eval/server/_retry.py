"""How long to wait before retrying a LangGraph Server request.

Exponential backoff (``backoff * 2 ** (attempt - 1)``), unless the server said how long
with ``Retry-After`` (seconds, or an HTTP date) on a 429 or 5xx: then that, capped at
:data:`MAX_WAIT` so that a server asking for an hour does not hang a sweep.
"""

from __future__ import annotations

from datetime import datetime

import httpx

from lg_eval._retry_after import asked_wait

MAX_WAIT = 60.0
"""The longest wait between two attempts, in seconds, whatever ``Retry-After`` says."""


def retry_after(response: httpx.Response | None, *, now: datetime | None = None) -> float | None:
    """The wait the response's headers ask for, in seconds (:func:`lg_eval._retry_after.
    asked_wait`: finite and >= 0; None when they do not say)."""
    return asked_wait(None if response is None else response.headers, now=now)


def wait_before(attempt: int, backoff: float, response: httpx.Response | None) -> float:
    """Seconds to sleep after failed attempt number ``attempt`` (1-based)."""
    asked = retry_after(response)
    wait = asked if asked is not None else backoff * 2 ** (attempt - 1)
    return min(wait, MAX_WAIT)
