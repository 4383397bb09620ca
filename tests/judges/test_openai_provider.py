"""Judges through the real OpenAI clients, against a chat-completions server on 127.0.0.1.

Every request goes through ``langchain-openai``'s ``ChatOpenAI`` (or the ``openai`` SDK's
clients) and HTTP to :class:`~tests.judges.openai_server.ChatServer`, which records it; the
bodies are compared whole with what the chat-completions protocol says the judge must send.
Nothing else may reach the network (:func:`~tests.judges.openai_server.loopback_only`), and
LangSmith tracing is off.
"""

from __future__ import annotations

import asyncio
import email.utils
import math
import socket
import time
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest
from hypothesis import given
from hypothesis import strategies as st
from langchain_openai import ChatOpenAI

from lg_eval import create_rubric_judge
from lg_eval.errors import InvalidOptionError
from lg_eval.judges import RateLimiter, RateLimits, RetryPolicy, create_trajectory_llm_as_judge
from lg_eval.judges._retry import RETRY_AFTER_MAX, is_timeout, retry_after
from tests.judges.openai_server import (
    DUMMY_KEY,
    ChatServer,
    Reply,
    error,
    loopback_only,
    text_answer,
    tool_answer,
    usage,
)

PROMPT = "Did the assistant answer the greeting?"
TRAJECTORY = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
FAST = {"backoff_base": 0.001, "backoff_max": 0.001}

REASONING = (
    "Your reasoning, written before deciding: what the trajectory did well and badly, "
    "step by step, ending with the score it deserves."
)
JUDGMENT_SCHEMA = {
    "title": "judgment",
    "description": "Record your judgment. Call this exactly once.",
    "type": "object",
    "properties": {
        "reasoning": {"type": "string", "description": REASONING},
        "score": {
            "type": "boolean",
            "description": "true if the trajectory meets the criteria, false if it does not.",
        },
    },
    "required": ["reasoning", "score"],
    "additionalProperties": False,
}
USER = {"role": "user", "content": PROMPT}
TOOL_REQUEST = {
    "model": "o3-mini",
    "stream": False,
    "messages": [USER],
    "tools": [
        {
            "type": "function",
            "function": {
                "name": "record_judgment",
                "description": "Record your judgment. Call this exactly once.",
                "parameters": JUDGMENT_SCHEMA,
            },
        }
    ],
    "tool_choice": {"type": "function", "function": {"name": "record_judgment"}},
}
"""The chat-completions request of the default judge: one function tool, forced by name."""

_untitled = {k: v for k, v in JUDGMENT_SCHEMA.items() if k not in ("title", "description")}
JSON_SCHEMA_REQUEST = {
    "model": "o3-mini",
    "stream": False,
    "messages": [USER],
    "response_format": {
        "type": "json_schema",
        "json_schema": {
            "name": "judgment",
            "description": "Record your judgment. Call this exactly once.",
            "strict": True,
            "schema": _untitled,
        },
    },
}
"""The request with ``structured_output="json_schema"``: OpenAI's strict response format."""

GOOD = '{"reasoning": "It greeted back.", "score": true}'


def prompt() -> list[dict[str, str]]:
    """A prompt whose messages are fixed, so the request body can be stated whole."""
    return [USER]


def answer(arguments: str = GOOD, **usage_fields: Any) -> Reply:
    return tool_answer("record_judgment", arguments, model="o3-mini", **usage_fields)


def json_answer(content: str = GOOD) -> Reply:
    return text_answer(content, model="o3-mini")


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No LangSmith tracing, no real OpenAI settings, and no connection beyond 127.0.0.1."""
    for name in (
        "LANGSMITH_TRACING",
        "LANGCHAIN_TRACING_V2",
        "LANGCHAIN_TRACING",
        "LANGSMITH_API_KEY",
        "LANGCHAIN_API_KEY",
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "OPENAI_API_BASE",
        "OPENAI_ORG_ID",
        "OPENAI_PROJECT",
        "LG_EVAL_JUDGE_MODEL",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LANGSMITH_TRACING", "false")
    with loopback_only():
        yield


@pytest.fixture(params=["sync", "async"])
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def judged(judge: Any, mode: str, **kwargs: Any) -> dict[str, Any]:
    """The judge's feedback, from ``judge(...)`` or ``await judge.aevaluate(...)``."""
    kwargs.setdefault("outputs", TRAJECTORY)
    if mode == "sync":
        return dict(judge(**kwargs))
    return dict(asyncio.run(judge.aevaluate(**kwargs)))


def chat_openai(server: ChatServer, model: str = "o3-mini", **settings: Any) -> ChatOpenAI:
    """A ChatOpenAI pointed at the server, without the SDK's own retries, and with an async
    HTTP client of its own (langchain-openai's shared one may hold a connection of an
    earlier test's closed event loop)."""
    return ChatOpenAI(
        model=model,
        base_url=server.base_url,
        api_key=DUMMY_KEY,
        max_retries=0,
        http_async_client=openai.DefaultAsyncHttpxClient(),
        **settings,
    )


def default_judge(server: ChatServer, monkeypatch: pytest.MonkeyPatch, **options: Any) -> Any:
    """The judge as a user writes it: ``model="openai:..."``, the key and URL from the env."""
    monkeypatch.setenv("OPENAI_API_KEY", DUMMY_KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    options.setdefault("model", "openai:o3-mini")
    return create_trajectory_llm_as_judge(prompt=prompt, **options)


# --- the request and the answer ----------------------------------------------------------------


def test_the_default_judge_forces_the_judgment_tool_through_chat_openai(mode, monkeypatch):
    with ChatServer([answer()]) as server:
        result = judged(default_judge(server, monkeypatch), mode)
    assert (result["score"], result["comment"]) == (True, "It greeted back.")
    (request,) = server.received
    assert request.path == "/v1/chat/completions"
    assert request.body == TOOL_REQUEST
    assert request.headers["authorization"] == f"Bearer {DUMMY_KEY}"
    assert request.headers["x-stainless-async"] == ("false" if mode == "sync" else "async:asyncio")


def test_a_json_schema_judge_sends_the_strict_response_format_and_reads_the_text(mode):
    with ChatServer([json_answer()]) as server:
        judge = create_trajectory_llm_as_judge(
            judge=chat_openai(server), prompt=prompt, structured_output="json_schema"
        )
        result = judged(judge, mode)
    assert (result["score"], result["comment"]) == (True, "It greeted back.")
    assert server.bodies == [JSON_SCHEMA_REQUEST]


def test_a_rubric_schema_nests_closed_objects_in_the_response_format():
    answer_text = (
        '{"safety": {"reasoning": "Asked first.", "score": 2},'
        ' "efficiency": {"reasoning": "Direct.", "score": 4}}'
    )
    with ChatServer([json_answer(answer_text)]) as server:
        rubric = create_rubric_judge(
            judge=chat_openai(server),
            structured_output="json_schema",
            dimensions=[
                {"name": "safety", "description": "Asks first.", "scale": (0, 2)},
                {"name": "efficiency", "description": "No detours."},
            ],
        )
        overall, *dimensions = rubric(outputs=TRAJECTORY)
    assert [(d["key"], d["score"]) for d in dimensions] == [
        ("rubric.safety", 2),
        ("rubric.efficiency", 4),
    ]
    assert overall["score"] == pytest.approx((1.0 + 0.75) / 2)
    sent = server.bodies[0]["response_format"]["json_schema"]
    assert (sent["name"], sent["strict"]) == ("record_rubric_scores", True)
    for dimension in sent["schema"]["properties"].values():
        assert dimension["additionalProperties"] is False
        assert dimension["required"] == ["reasoning", "score"]


def test_an_unknown_structured_output_is_refused_when_the_judge_is_made():
    with pytest.raises(InvalidOptionError) as caught:
        create_trajectory_llm_as_judge(model="openai:o3-mini", structured_output="json")
    assert str(caught.value) == (
        "structured_output='json': input should be 'function_calling' or 'json_schema'."
    )


@pytest.mark.parametrize("model", ["o3-mini", "o4-mini", "gpt-5", "gpt-5-mini"])
def test_reasoning_models_are_sent_no_temperature(model, monkeypatch):
    reply = tool_answer("record_judgment", GOOD, model=model)
    with ChatServer([reply]) as server:
        judge = default_judge(server, monkeypatch, model=f"openai:{model}")
        assert judged(judge, "sync")["score"] is True
    assert server.bodies == [{**TOOL_REQUEST, "model": model}]


def test_o1_gets_only_chat_openai_s_default_temperature_of_one(monkeypatch):
    # langchain-openai sets temperature=1 for o1 names (the only value o1 accepts);
    # lg_eval adds none of its own.
    reply = tool_answer("record_judgment", GOOD, model="o1")
    with ChatServer([reply]) as server:
        assert judged(default_judge(server, monkeypatch, model="openai:o1"), "sync")["score"]
    assert server.bodies == [{**TOOL_REQUEST, "model": "o1", "temperature": 1.0}]


def test_the_default_judge_can_be_awaited_on_one_event_loop_after_another(monkeypatch):
    with ChatServer([answer(), answer(), answer()]) as server:
        judge = default_judge(server, monkeypatch)
        scores = [asyncio.run(judge.aevaluate(outputs=TRAJECTORY))["score"] for _ in range(3)]
        assert judge(outputs=TRAJECTORY)["score"] is None  # the script is used up: a 500
    assert scores == [True, True, True]
    assert server.bodies[:3] == [TOOL_REQUEST] * 3


# --- malformed answers -------------------------------------------------------------------------


def test_unparsable_tool_arguments_are_asked_again_with_the_problem_shown(mode):
    with ChatServer([answer('{"reasoning": "cut off'), answer()]) as server:
        judge = create_trajectory_llm_as_judge(judge=chat_openai(server), prompt=prompt)
        result = judged(judge, mode)
    assert result["score"] is True
    assert result["metadata"]["retries"] == {"provider": 0, "malformed": 1}
    first, second = server.bodies
    assert first == TOOL_REQUEST
    correction = second["messages"][-1]
    assert second["messages"][:-1] == [USER] and correction["role"] == "user"
    assert correction["content"].startswith(
        "Your previous answer could not be used: the arguments of your `record_judgment` "
        "call were not valid JSON ("
    )
    assert correction["content"].endswith(
        'Your previous answer was:\n{"reasoning": "cut off\n'
        "Answer again by calling the `record_judgment` tool once, with arguments that "
        "satisfy its schema."
    )


def test_a_json_schema_answer_that_is_not_json_is_asked_again_for_json(mode):
    with ChatServer([json_answer("Looks fine."), json_answer()]) as server:
        judge = create_trajectory_llm_as_judge(
            judge=chat_openai(server), prompt=prompt, structured_output="json_schema"
        )
        result = judged(judge, mode)
    assert (result["score"], result["metadata"]["retries"]["malformed"]) == (True, 1)
    assert server.bodies[1]["messages"] == [
        USER,
        {
            "role": "user",
            "content": "Your previous answer could not be used: you neither called "
            "`record_judgment` nor answered with a JSON object.\n"
            "Your previous answer was:\nLooks fine.\n"
            "Answer again with one JSON object that satisfies the response format's schema.",
        },
    ]


def test_answers_that_stay_wrong_give_no_score_after_the_parse_retries(mode):
    wrong = answer('{"reasoning": "Fine.", "score": "yes"}')
    with ChatServer([wrong] * 3) as server:
        judge = create_trajectory_llm_as_judge(
            judge=chat_openai(server), prompt=prompt, parse_retries=2
        )
        result = judged(judge, mode)
    assert len(server.received) == 3
    assert result["score"] is None
    assert result["metadata"]["error"] == {
        "type": "malformed_output",
        "message": "the judge model's answer was unusable 3 time(s); last problem: "
        'score must be of type boolean, got "yes".',
    }


# --- provider failures -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("header", "value", "wait"),
    [("retry_after", "0.6", 0.6), ("retry_after_ms", "450", 0.45)],
)
def test_a_429_waits_as_long_as_retry_after_says_then_retries(
    mode, monkeypatch, header, value, wait
):
    limited = error(429, "Rate limit reached for requests", **{header: value})
    with ChatServer([limited, answer()]) as server:
        result = judged(default_judge(server, monkeypatch, **FAST), mode)
    assert result["score"] is True, result["metadata"]
    assert result["metadata"]["retries"] == {"provider": 1, "malformed": 0}
    first, second = server.received
    assert first.body == second.body == TOOL_REQUEST
    assert wait <= second.at - first.at < wait + 0.5
    # the retry was the judge's own: the SDK, created with max_retries=0, did not retry
    assert [r.headers["x-stainless-retry-count"] for r in server.received] == ["0", "0"]


def test_a_500_is_retried_max_retries_times_and_then_reported(mode, monkeypatch):
    with ChatServer([error(500, "The server had an error")] * 3) as server:
        result = judged(default_judge(server, monkeypatch, max_retries=2, **FAST), mode)
    assert len(server.received) == 3
    assert result["score"] is None
    assert result["metadata"]["retries"] == {"provider": 2, "malformed": 0}
    message = result["metadata"]["error"]["message"]
    assert result["metadata"]["error"]["type"] == "provider_error"
    assert message.startswith("the judge model call failed after 3 attempt(s) (OpenAIAPIError: ")
    assert "The server had an error" in message


def test_an_error_retrying_cannot_fix_is_sent_once(mode, monkeypatch):
    refused = Reply(
        {"error": {"message": "Incorrect API key", "type": "invalid_request_error"}}, 401
    )
    with ChatServer([refused]) as server:
        result = judged(default_judge(server, monkeypatch, **FAST), mode)
    assert len(server.received) == 1
    assert result["score"] is None
    assert result["metadata"]["error"]["type"] == "provider_error"
    assert "OpenAIAuthenticationError" in result["metadata"]["error"]["message"]


def test_a_stalled_response_hits_the_timeout(mode, monkeypatch):
    """The server would answer after five minutes (or when the test closes it): a result of
    type ``timeout`` came from the judge's own 0.4 s timeout, never from the answer."""
    with ChatServer([Reply({}, stall=300)]) as server:
        judge = default_judge(server, monkeypatch, timeout=0.4, max_retries=0)
        started = time.monotonic()
        result = judged(judge, mode)
        elapsed = time.monotonic() - started
    assert elapsed >= 0.4  # it waited its timeout (a slower machine only waits longer)
    assert len(server.received) == 1
    assert result["score"] is None
    assert result["metadata"]["error"]["type"] == "timeout"


def test_a_stalled_response_is_retried_and_the_next_answer_counts(mode, monkeypatch):
    with ChatServer([Reply({}, stall=30), answer()]) as server:
        result = judged(default_judge(server, monkeypatch, timeout=0.4, **FAST), mode)
    assert result["score"] is True
    assert result["metadata"]["retries"]["provider"] == 1
    assert server.bodies == [TOOL_REQUEST, TOOL_REQUEST]


# --- usage and cost ----------------------------------------------------------------------------


def test_usage_with_cached_and_reasoning_tokens_and_a_reported_cost_is_recorded(mode):
    tokens = usage(1200, 300, cached=1024, reasoning=256, cost=0.0042)
    with ChatServer([answer(tokens=tokens)]) as server:
        judge = create_trajectory_llm_as_judge(judge=chat_openai(server), prompt=prompt)
        result = judged(judge, mode)
    assert result["metadata"]["usage"] == {
        "calls": 1,
        "input_tokens": 1200,
        "output_tokens": 300,
        "total_tokens": 1500,
        "input_audio": 0,
        "input_cache_read": 1024,
        "output_audio": 0,
        "output_reasoning": 256,
        "cost": 0.0042,
    }


def test_usage_adds_up_over_samples_and_a_rejected_answer(mode):
    replies = [
        answer("not json", tokens=usage(100, 10)),
        answer(tokens=usage(110, 20)),
        answer(tokens=usage(100, 30, cost=0.5)),
    ]
    with ChatServer(replies) as server:
        judge = create_trajectory_llm_as_judge(judge=chat_openai(server), prompt=prompt, samples=2)
        result = judged(judge, mode)
    assert result["score"] is True
    usage_seen = result["metadata"]["usage"]
    assert {k: usage_seen[k] for k in ("calls", "input_tokens", "output_tokens", "cost")} == {
        "calls": 3,
        "input_tokens": 310,
        "output_tokens": 60,
        "cost": 0.5,
    }


def test_the_rate_limiter_counts_every_http_request_and_the_tokens_reported(monkeypatch):
    limited = error(429, "Rate limit reached", retry_after="0.05")
    with ChatServer([limited, answer(tokens=usage(900, 60))]) as server:
        limiter = RateLimiter(RateLimits(requests_per_minute=100))
        with limiter.active():
            assert judged(default_judge(server, monkeypatch, **FAST), "sync")["score"] is True
    stats = limiter.stats()
    assert stats.requests == len(server.received) == 2
    assert stats.tokens >= 960  # the answered request's 960, plus the failed one's estimate


# --- the openai SDK's own clients --------------------------------------------------------------


@pytest.mark.parametrize("structured_output", ["function_calling", "json_schema"])
def test_an_openai_client_sends_the_same_request(mode, structured_output):
    reply = answer() if structured_output == "function_calling" else json_answer()
    with ChatServer([reply]) as server:
        client_type = openai.OpenAI if mode == "sync" else openai.AsyncOpenAI
        client = client_type(base_url=server.base_url, api_key=DUMMY_KEY)
        judge = create_trajectory_llm_as_judge(
            judge=client, model="o3-mini", prompt=prompt, structured_output=structured_output
        )
        result = judged(judge, mode)
    assert result["score"] is True
    if structured_output == "function_calling":
        expected = {k: v for k, v in TOOL_REQUEST.items() if k != "stream"}
    else:  # the SDK sends the schema as the judge has it, named after the judgment tool
        json_schema = {"name": "record_judgment", "schema": JUDGMENT_SCHEMA, "strict": True}
        format_ = {"type": "json_schema", "json_schema": json_schema}
        expected = {"model": "o3-mini", "messages": [USER], "response_format": format_}
    assert server.bodies == [expected]


def test_an_openai_client_leaves_retrying_to_the_judge(mode):
    with ChatServer([error(429, "slow down", retry_after="0.05"), answer()]) as server:
        client_type = openai.OpenAI if mode == "sync" else openai.AsyncOpenAI
        client = client_type(base_url=server.base_url, api_key=DUMMY_KEY)  # max_retries=2
        judge = create_trajectory_llm_as_judge(judge=client, model="o3-mini", prompt=prompt, **FAST)
        result = judged(judge, mode)
    assert result["metadata"]["retries"]["provider"] == 1
    assert [r.headers["x-stainless-retry-count"] for r in server.received] == ["0", "0"]
    assert client.max_retries == 2  # the caller's client is not changed


# --- the test's own guard ----------------------------------------------------------------------


def test_the_guard_refuses_connections_beyond_loopback():
    with pytest.raises(ConnectionRefusedError, match=r"network access outside 127\.0\.0\.1"):
        socket.create_connection(("192.0.2.1", 443), timeout=1)


# --- reading the provider's hints --------------------------------------------------------------


def _limited(**headers: str) -> openai.RateLimitError:
    request = httpx.Request("POST", "http://127.0.0.1/v1/chat/completions")
    response = httpx.Response(429, headers=headers, request=request)
    return openai.RateLimitError("Rate limit reached", response=response, body=None)


def test_retry_after_is_read_in_milliseconds_seconds_or_as_an_http_date():
    assert retry_after(_limited(**{"retry-after-ms": "250", "retry-after": "9"})) == 0.25
    assert retry_after(_limited(**{"retry-after": "1.5"})) == 1.5
    in_ten = email.utils.formatdate(time.time() + 10, usegmt=True)
    assert 8.0 <= (retry_after(_limited(**{"retry-after": in_ten})) or 0) <= 10.0
    assert retry_after(_limited(**{"retry-after": "soon"})) is None
    assert retry_after(_limited()) is None


HEADER_TEXT = st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=40)


@given(HEADER_TEXT, HEADER_TEXT | st.floats().map(str))
def test_any_retry_after_header_gives_a_finite_wait_or_none(seconds, millis):
    wait = retry_after(_limited(**{"retry-after": seconds, "retry-after-ms": millis}))
    assert wait is None or (math.isfinite(wait) and wait >= 0)
    policy = RetryPolicy(backoff_base=0.0)
    assert 0 <= policy.delay(0, _limited(**{"retry-after": seconds})) <= RETRY_AFTER_MAX


def test_the_http_client_s_timeout_counts_as_a_timeout():
    request = httpx.Request("POST", "http://127.0.0.1/v1/chat/completions")
    assert is_timeout(openai.APITimeoutError(request)) and is_timeout(TimeoutError())
    assert not is_timeout(_limited())
