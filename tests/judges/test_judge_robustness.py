"""Judges survive bad answers and flaky providers, stay within limits, and count tokens."""

from __future__ import annotations

import asyncio
import json
import time
from types import SimpleNamespace

import pytest
from langchain_core.messages import HumanMessage

from lg_eval._effects import Effect
from lg_eval.errors import InvalidOptionError
from lg_eval.judges import (
    JudgeConcurrency,
    create_async_graph_trajectory_llm_as_judge,
    create_graph_trajectory_llm_as_judge,
    set_judge_concurrency,
)
from lg_eval.judges._limits import DEFAULT_CONCURRENCY
from lg_eval.judges._prompts import TEXT_MODE_INSTRUCTIONS
from lg_eval.judges._retry import RetryPolicy, is_transient
from tests.judges.fake_judge import (
    PlainChatModel,
    ScriptedJudge,
    auth_error,
    invalid_json,
    rate_limit,
    text,
    verdict,
)
from tests.judges.threads import weather_thread

FAST = {"backoff_base": 0.0}


def judge_with(*replies, **options):
    model = ScriptedJudge.of(*replies)
    return model, create_graph_trajectory_llm_as_judge(judge=model, **{**FAST, **options})


# --- malformed answers -----------------------------------------------------------------------


def test_invalid_json_is_retried_with_the_problem_shown_to_the_model():
    model, judge = judge_with(invalid_json(), verdict(reasoning="Fine.", score=True))
    result = judge(outputs=weather_thread())
    assert result["score"] is True
    first, retry = model.calls
    assert retry.messages[:-1] == first.messages
    assert retry.messages[-1] == HumanMessage(
        "Your previous answer could not be used: the arguments of your `record_judgment` call "
        "were not valid JSON (Expecting value).\n"
        'Your previous answer was:\n{"score": tru\n'
        "Answer again by calling the `record_judgment` tool once, with arguments that satisfy "
        "its schema."
    )
    assert result["metadata"]["retries"] == {"provider": 0, "malformed": 1}


def test_out_of_range_score_is_retried():
    model, judge = judge_with(
        verdict(reasoning="Great.", score=7),
        verdict(reasoning="Great.", score=1.0),
        continuous=True,
    )
    result = judge(outputs=weather_thread())
    assert result["score"] == 1.0
    assert result["metadata"]["rejected_answers"] == ["score must be at most 1, got 7."]
    assert "score must be at most 1, got 7." in model.calls[1].messages[-1].content


def test_unusable_answers_give_no_score_rather_than_a_fail():
    model, judge = judge_with(
        verdict(reasoning="Yes.", score="yes"),
        verdict(score=False),
        text("I think it is fine."),
        parse_retries=2,
    )
    result = judge(outputs=weather_thread())
    assert result["score"] is None
    assert len(model.calls) == 3
    assert result["comment"].startswith("Not scored: the judge model's answer was unusable 3")
    assert result["metadata"]["error"] == {
        "type": "malformed_output",
        "message": "the judge model's answer was unusable 3 time(s); last problem: you "
        "neither called `record_judgment` nor answered with a JSON object.",
    }
    assert result["metadata"]["rejected_answers"][:2] == [
        'score must be of type boolean, got "yes".',
        "the required field 'reasoning' is missing.",
    ]


def test_json_in_plain_text_is_accepted():
    _, judge = judge_with(text('```json\n{"reasoning": "Ok.", "score": true}\n```'))
    assert judge(outputs=weather_thread())["score"] is True


def test_a_call_to_another_tool_is_rejected():
    reply = verdict(reasoning="x", score=True)
    reply.tool_calls[0]["name"] = "search"
    _, judge = judge_with(reply, verdict(reasoning="Ok.", score=True))
    result = judge(outputs=weather_thread())
    assert result["metadata"]["rejected_answers"] == [
        "you called the tool `search` instead of `record_judgment`."
    ]


def test_model_without_tool_calling_is_asked_for_json_text():
    model = PlainChatModel.of(text('{"reasoning": "Ok.", "score": false}'))
    result = create_graph_trajectory_llm_as_judge(judge=model)(outputs=weather_thread())
    assert result["score"] is False
    instructions = model.calls[0].messages[-1].content
    assert instructions.startswith(TEXT_MODE_INSTRUCTIONS.split("{schema}")[0])
    assert json.loads(instructions.split("JSON schema:\n")[1])["required"] == [
        "reasoning",
        "score",
    ]


# --- provider errors -------------------------------------------------------------------------


@pytest.fixture
def slept(monkeypatch):
    """Record backoff sleeps instead of sleeping."""
    delays: list[float] = []

    def fake_sleep(seconds: float) -> Effect[None]:
        async def nothing() -> None:
            delays.append(seconds)

        return Effect(lambda: delays.append(seconds), nothing)

    monkeypatch.setattr("lg_eval.judges._core.sleep", fake_sleep)
    return delays


def test_rate_limits_are_retried_with_exponential_backoff_and_jitter(slept):
    model = ScriptedJudge.of(rate_limit(), rate_limit(), rate_limit(), verdict(score=True))
    judge = create_graph_trajectory_llm_as_judge(
        judge=model, use_reasoning=False, backoff_base=1.0, backoff_max=30.0
    )
    result = judge(outputs=weather_thread())
    assert result["score"] is True
    assert result["metadata"]["retries"] == {"provider": 3, "malformed": 0}
    assert [0.5 <= slept[0] <= 1, 1 <= slept[1] <= 2, 2 <= slept[2] <= 4] == [True] * 3


def test_retry_after_header_is_honoured(slept):
    _, judge = judge_with(rate_limit(retry_after="7"), verdict(score=True), use_reasoning=False)
    judge(outputs=weather_thread())
    assert slept == [7.0]


def test_exhausted_retries_give_no_score_and_the_provider_error(slept):
    model, judge = judge_with(*[rate_limit()] * 3, max_retries=2)
    result = judge(outputs=weather_thread())
    assert result["score"] is None
    assert len(model.calls) == 3
    assert result["metadata"]["error"]["type"] == "provider_error"
    assert result["metadata"]["error"]["message"].startswith(
        "the judge model call failed after 3 attempt(s) (RateLimitError: Rate limit reached"
    )


def test_errors_that_retrying_cannot_fix_are_not_retried(slept):
    model, judge = judge_with(auth_error())
    result = judge(outputs=weather_thread())
    assert (result["score"], len(model.calls), slept) == (None, 1, [])


def test_transient_errors_are_recognised_by_class_name_or_status():
    assert is_transient(rate_limit()) and is_transient(TimeoutError())
    assert not is_transient(auth_error()) and not is_transient(ValueError("bad"))
    assert is_transient(type("OverloadedError", (Exception,), {})())
    assert is_transient(_with_status(503)) and not is_transient(_with_status(400))


def _with_status(status: int) -> Exception:
    error = Exception("unavailable")
    error.status_code = status
    return error


def test_a_slow_call_times_out_and_is_retried():
    def slow(_messages):
        time.sleep(0.5)
        return verdict(score=False)

    _model, judge = judge_with(slow, verdict(score=True), use_reasoning=False, timeout=0.05)
    result = judge(outputs=weather_thread())
    assert (result["score"], result["metadata"]["retries"]["provider"]) == (True, 1)


async def test_async_call_that_never_answers_in_time_gives_a_timeout_error():
    model = ScriptedJudge.of(verdict(score=True), delay=1.0, repeat_last=True)
    judge = create_async_graph_trajectory_llm_as_judge(
        judge=model, timeout=0.02, max_retries=1, **FAST
    )
    result = await judge(outputs=weather_thread())
    assert result["score"] is None
    assert result["metadata"]["error"]["type"] == "timeout"
    assert "did not answer within 0.02 seconds" in result["metadata"]["error"]["message"]


def test_retry_policy_rejects_negative_settings():
    with pytest.raises(InvalidOptionError) as raised:
        RetryPolicy(max_retries=-1)
    assert str(raised.value) == (
        "RetryPolicy max_retries=-1: input should be greater than or equal to 0."
    )
    with pytest.raises(InvalidOptionError) as raised:
        RetryPolicy(backoff_base="1")  # type: ignore[arg-type]
    assert str(raised.value) == "RetryPolicy backoff_base='1': input should be a valid number."
    with pytest.raises(InvalidOptionError) as raised:
        create_graph_trajectory_llm_as_judge(judge=ScriptedJudge.of(), timeout=0)
    assert str(raised.value) == "timeout=0: input should be greater than 0."


# --- concurrency -----------------------------------------------------------------------------


async def test_concurrent_evaluations_never_exceed_the_limit():
    model = ScriptedJudge.of(verdict(reasoning="Ok.", score=True), delay=0.02, repeat_last=True)
    judge = create_async_graph_trajectory_llm_as_judge(judge=model, concurrency=JudgeConcurrency(3))
    results = await asyncio.gather(*(judge(outputs=weather_thread()) for _ in range(20)))
    assert [r["score"] for r in results] == [True] * 20
    assert model.script.max_in_flight == 3


@pytest.fixture
def shared_limit():
    before = DEFAULT_CONCURRENCY.limit
    yield
    set_judge_concurrency(before)


async def test_the_process_wide_limit_is_shared_by_all_judges(shared_limit):
    set_judge_concurrency(2)
    model = ScriptedJudge.of(verdict(reasoning="Ok.", score=True), delay=0.02, repeat_last=True)
    first = create_async_graph_trajectory_llm_as_judge(judge=model)
    second = create_async_graph_trajectory_llm_as_judge(judge=model, continuous=False)
    calls = [j(outputs=weather_thread()) for j in (first, second) for _ in range(5)]
    await asyncio.gather(*calls)
    assert model.script.max_in_flight == 2


def test_concurrency_limit_must_be_positive():
    with pytest.raises(InvalidOptionError) as raised:
        JudgeConcurrency(0)
    assert str(raised.value) == "limit=0: input should be greater than or equal to 1."


# --- usage -----------------------------------------------------------------------------------


def test_usage_adds_up_over_retries_and_includes_reported_cost():
    _, judge = judge_with(
        verdict(score="bad", reasoning="x", tokens=(300, 50), cost=0.002),
        verdict(score=True, reasoning="y", tokens=(320, 40), cost=0.003),
    )
    usage = judge(outputs=weather_thread())["metadata"]["usage"]
    assert usage == {
        "calls": 2,
        "input_tokens": 620,
        "output_tokens": 90,
        "total_tokens": 710,
        "cost": 0.005,
    }


def test_usage_has_no_cost_when_the_provider_reports_none():
    _, judge = judge_with(verdict(score=True, reasoning="y"))
    assert "cost" not in judge(outputs=weather_thread())["metadata"]["usage"]


# --- OpenAI clients --------------------------------------------------------------------------


def _completion(arguments: str) -> SimpleNamespace:
    call = SimpleNamespace(
        id="call_1", function=SimpleNamespace(name="record_judgment", arguments=arguments)
    )
    return SimpleNamespace(
        choices=[SimpleNamespace(message=SimpleNamespace(content=None, tool_calls=[call]))],
        usage=SimpleNamespace(
            model_dump=lambda: {"prompt_tokens": 11, "completion_tokens": 3, "total_tokens": 14}
        ),
    )


class FakeOpenAI:
    """Just enough of ``openai.OpenAI`` for a judge: ``chat.completions.create``."""

    def __init__(self, *answers: str) -> None:
        self.answers, self.requests = list(answers), []
        self.chat = SimpleNamespace(completions=SimpleNamespace(create=self.create))

    def create(self, **params):
        self.requests.append(params)
        return _completion(self.answers.pop(0))


def test_openai_client_is_called_with_a_forced_tool_and_parsed():
    client = FakeOpenAI('{"reasoning": "Ok", "score": tru', '{"reasoning": "Ok", "score": true}')
    judge = create_graph_trajectory_llm_as_judge(judge=client, model="openai:gpt-4o-mini")
    result = judge(outputs=weather_thread())
    assert result["score"] is True
    assert result["metadata"]["model"] == "openai:gpt-4o-mini"
    assert result["metadata"]["usage"]["total_tokens"] == 28
    request = client.requests[0]
    assert request["model"] == "gpt-4o-mini"
    assert request["tool_choice"] == {"type": "function", "function": {"name": "record_judgment"}}
    assert request["messages"][0]["role"] == "user"


def test_openai_client_needs_a_model_name():
    with pytest.raises(InvalidOptionError, match="model= must name the model"):
        create_graph_trajectory_llm_as_judge(judge=FakeOpenAI())


class FakeAsyncOpenAI(FakeOpenAI):
    async def create(self, **params):
        return super().create(**params)


@pytest.mark.parametrize("client_type", [FakeOpenAI, FakeAsyncOpenAI])
async def test_async_judge_takes_sync_and_async_openai_clients(client_type):
    client = client_type('{"reasoning": "Ok", "score": false}')
    judge = create_async_graph_trajectory_llm_as_judge(judge=client, model="gpt-4o-mini")
    assert (await judge(outputs=weather_thread()))["score"] is False
    assert len(client.requests) == 1


def test_async_openai_client_cannot_serve_the_sync_judge():
    judge = create_graph_trajectory_llm_as_judge(judge=FakeAsyncOpenAI(), model="gpt-4o")
    with pytest.raises(InvalidOptionError, match="only the async judge can call"):
        judge(outputs=weather_thread())


def test_a_failure_message_ending_in_a_period_is_not_doubled():
    from lg_eval.judges._core import failed

    result = failed({"message": 'the answer was "yes".'}, {})
    assert result.comment == (
        "Not scored: the answer was \"yes\". The judge gave no verdict; see metadata['error']."
    )
