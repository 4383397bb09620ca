"""The wait a rate-limited or failing HTTP response asks for, read once for every client.

A LangGraph Server and a judge's model provider both say how long to wait before the next
attempt in the response's headers: ``Retry-After`` in seconds or as an HTTP date (RFC 9110),
and OpenAI's ``Retry-After-Ms`` in milliseconds. :func:`asked_wait` reads them the same way
for both, so a server sweep and a judge never disagree on what a header meant.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any


def asked_wait(headers: Mapping[str, Any] | None, *, now: datetime | None = None) -> float | None:
    """Seconds ``headers`` ask to wait: ``Retry-After-Ms`` (in milliseconds), else
    ``Retry-After`` (seconds, or an HTTP date, which is in GMT). Always finite and >= 0: a
    negative number or a date in the past is 0. None when neither header is there or
    readable (``"soon"``, ``"inf"``, ``"nan"``)."""
    if headers is None:
        return None
    named = {str(key).lower(): value for key, value in headers.items()}  # names ignore case
    millis = _seconds(named.get("retry-after-ms"))
    if millis is not None:
        return millis / 1000
    value = named.get("retry-after")
    seconds = _seconds(value)
    if seconds is not None or not isinstance(value, str):
        return seconds
    try:
        when = parsedate_to_datetime(value.strip())
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


def _seconds(value: Any) -> float | None:
    """A number of seconds from a header's text; None for none or what is no finite number."""
    if value is None or isinstance(value, bool):
        return None
    try:
        number = float(value.strip() if isinstance(value, str) else value)
    except (TypeError, ValueError):
        return None
    return max(0.0, number) if math.isfinite(number) else None
