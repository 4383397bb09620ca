"""A server sweep and a judge read a response's wait the same way: one reading of
``Retry-After`` / ``Retry-After-Ms`` (:mod:`lg_eval._retry_after`) behind both clients."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import httpx
import openai
from hypothesis import given
from hypothesis import strategies as st

from lg_eval._retry_after import asked_wait
from lg_eval.judges._retry import retry_after as judge_wait
from lg_eval.server._retry import retry_after as server_wait

HEADER = st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=30)


def limited(headers: dict[str, str]) -> openai.RateLimitError:
    request = httpx.Request("POST", "http://127.0.0.1/v1/chat/completions")
    response = httpx.Response(429, headers=headers, request=request)
    return openai.RateLimitError("Rate limit reached", response=response, body=None)


@given(seconds=HEADER | st.floats().map(str), millis=st.none() | HEADER)
def test_the_server_and_the_judge_read_one_wait_from_the_same_headers(
    seconds: str, millis: str | None
) -> None:
    headers = {"retry-after": seconds, **({} if millis is None else {"retry-after-ms": millis})}
    now = datetime.now(UTC)
    by_server = server_wait(httpx.Response(503, headers=headers), now=now)
    by_judge = judge_wait(limited(headers))
    assert by_server is None or (math.isfinite(by_server) and by_server >= 0)
    if by_server is None or by_judge is None:
        assert by_server is by_judge is None
    else:  # an HTTP date is read against the clock, a moment apart (a busy machine's
        # moment: what is compared is the reading of one header, not the time it takes)
        assert abs(by_server - by_judge) < 60.0


def test_a_wait_is_read_in_milliseconds_seconds_or_an_http_date_and_never_below_zero() -> None:
    now = datetime(2026, 12, 4, 12, 0, tzinfo=UTC)
    in_90 = format_datetime(now + timedelta(seconds=90), usegmt=True)
    assert asked_wait({"Retry-After-Ms": "250", "Retry-After": "9"}, now=now) == 0.25
    assert asked_wait({"RETRY-AFTER": " 2.5 "}, now=now) == 2.5  # any case, spaces trimmed
    assert asked_wait({"retry-after": in_90}, now=now) == 90.0
    assert asked_wait({"retry-after": "-3"}, now=now) == 0.0
    past = format_datetime(now - timedelta(seconds=5), usegmt=True)
    assert asked_wait({"retry-after": past}, now=now) == 0.0
    for unreadable in ("soon", "inf", "nan", ""):
        assert asked_wait({"retry-after": unreadable}, now=now) is None
    assert asked_wait({}, now=now) is None and asked_wait(None) is None
