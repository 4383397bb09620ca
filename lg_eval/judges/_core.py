"""The judge core: one judged call with its retries, samples, and the final score.

Everything here decides; nothing here does I/O. Model calls and sleeps are
yielded as effects (:mod:`lg_eval._effects`), so the sync and async judges
share every line of this module.
"""

from __future__ import annotations

import asyncio
import functools
import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from lg_eval._describe import describe_error
from lg_eval._effects import Core, Effect, adrive, drive, sleep
from lg_eval._feedback import Feedback
from lg_eval.errors import LgEvalError
from lg_eval.judges import _prompts as prompts
from lg_eval.judges._consensus import DEFAULT_THRESHOLD, combine
from lg_eval.judges._limits import DEFAULT_CONCURRENCY, JudgeConcurrency
from lg_eval.judges._model import JudgeClient, model_request
from lg_eval.judges._prompting import Prompt, build_messages
from lg_eval.judges._render import render_fitted
from lg_eval.judges._retry import RetryPolicy, is_timeout, is_transient
from lg_eval.judges._schema import (
    Judgment,
    MalformedOutput,
    OutputSpec,
    describe_reply,
    score_problem,
    tool_arguments,
)
from lg_eval.judges._text import PromptText, Rendered
from lg_eval.judges._usage import Usage

T = TypeVar("T")
DEFAULT_MAX_CHARS = 32_000


@dataclass(frozen=True)
class Request:
    """One sample: the messages to send and how to read the answer."""

    messages: list[BaseMessage]
    read: Callable[[dict[str, Any]], Judgment]


@dataclass
class Outcome:
    """What one sample produced, with what it cost."""

    judgment: Judgment | None = None
    error: dict[str, str] | None = None
    usage: Usage = field(default_factory=Usage)
    rejected: list[str] = field(default_factory=list)
    provider_retries: int = 0


class _ProviderFailure(Exception):
    def __init__(self, cause: BaseException, attempts: int) -> None:
        super().__init__(str(cause))
        self.cause, self.attempts = cause, attempts


@dataclass(frozen=True)
class Judge:
    """A configured judge: model client, output spec, retry and consensus settings."""

    client: JudgeClient
    spec: OutputSpec
    policy: RetryPolicy = field(default_factory=RetryPolicy)
    limit: JudgeConcurrency = DEFAULT_CONCURRENCY
    system: str | None = None
    examples: str | None = None
    samples: int = 1
    reduce: str | None = None
    threshold: float = DEFAULT_THRESHOLD
    max_chars: int | None = DEFAULT_MAX_CHARS
    hooks: bool = True
    """Whether requests go through the :data:`~lg_eval.judges._model.REQUEST_HOOK` in
    context (the judge cache, the rate limiter); False sends them straight to the model."""

    # --- building the prompt -----------------------------------------------------------------

    def render(
        self,
        *,
        outputs: Any = None,
        inputs: Any = None,
        reference: Any = None,
        reference_block: str = prompts.REFERENCE_BLOCK,
    ) -> tuple[dict[str, str], dict[str, Rendered | None]]:
        """The placeholders every judge prompt can use, and the rendered trajectories.

        ``outputs`` and ``reference`` are coerced trajectories; None means absent.
        Each is rendered within the ``max_chars`` budget, summarized if need be.
        """

        def fit(value: Any) -> Rendered | None:
            return None if value is None else render_fitted(value, self.max_chars)

        rendered = {
            "inputs": fit(inputs),
            "outputs": fit(outputs),
            "reference_outputs": fit(reference),
        }
        given_inputs, given_reference = rendered["inputs"], rendered["reference_outputs"]
        values = {
            "inputs": given_inputs.text if given_inputs else "",
            "inputs_block": (
                prompts.INPUTS_BLOCK.format(inputs=given_inputs.text) if given_inputs else ""
            ),
            "outputs": rendered["outputs"].text if rendered["outputs"] else "",
            "reference_outputs": given_reference.text if given_reference else "",
            "reference_block": (
                reference_block.format(reference=given_reference.text) if given_reference else ""
            ),
        }
        # every value above is escaped renderings inside lg_eval's own fences
        return {key: PromptText(text) for key, text in values.items()}, rendered

    def messages(self, prompt: Prompt, values: Mapping[str, Any]) -> list[BaseMessage]:
        return build_messages(prompt, values, system=self.system, examples=self.examples)

    def evaluate(
        self,
        prompt: Prompt,
        values: Mapping[str, Any],
        rendered: Mapping[str, Rendered | None],
        finish: Callable[[Judgment], Feedback] | None = None,
    ) -> Core[Feedback]:
        """Judge one prompt ``samples`` times and conclude."""
        request = Request(self.messages(prompt, values), self.spec.read)
        score = yield from self.run([request] * self.samples, finish, summaries(rendered))
        return score

    # --- calling the model -------------------------------------------------------------------

    def run(
        self,
        requests: Sequence[Request],
        finish: Callable[[Judgment], Feedback] | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> Core[Feedback]:
        """Put every request to the model (concurrently when async) and conclude."""
        if len(requests) == 1:
            outcomes = [(yield from self.attempt(requests[0]))]
        else:
            outcomes = yield gather([functools.partial(self.attempt, r) for r in requests])
        return self.conclude(outcomes, finish or self.finish, metadata or {})

    def attempt(self, request: Request) -> Core[Outcome]:
        """One sample: call, check the answer, and retry with the problem shown."""
        outcome = Outcome()
        messages = list(request.messages)
        for _ in range(self.policy.parse_retries + 1):
            effect = (
                model_request(self.client, messages, self.spec, self.policy.timeout, self.limit)
                if self.hooks
                else self.client.request(messages, self.spec, self.policy.timeout, self.limit)
            )
            try:
                reply = yield from self._call(effect, outcome)
            except _ProviderFailure as failure:
                outcome.error = _provider_error(failure)
                return outcome
            try:
                if not isinstance(reply, AIMessage):
                    raise MalformedOutput(f"the model returned a {type(reply).__name__}.")
                outcome.usage.record(reply)
                outcome.judgment = request.read(tool_arguments(reply, self.spec.name))
                return outcome
            except MalformedOutput as problem:
                outcome.rejected.append(str(problem))
                json_schema = getattr(self.client, "method", None) == "json_schema"
                template = (
                    prompts.JSON_CORRECTION_MESSAGE if json_schema else prompts.CORRECTION_MESSAGE
                )
                correction = template.format(
                    error=problem, previous=_previous(reply), tool=self.spec.name
                )
                messages = [*request.messages, HumanMessage(correction)]
        outcome.error = {
            "type": "malformed_output",
            "message": f"the judge model's answer was unusable {len(outcome.rejected)} "
            f"time(s); last problem: {outcome.rejected[-1]}",
        }
        return outcome

    def _call(self, effect: Effect[AIMessage], outcome: Outcome) -> Core[AIMessage]:
        for attempt in itertools.count():
            try:
                answer: AIMessage = yield effect
                return answer
            except LgEvalError:
                raise  # our own errors report misconfiguration: never swallowed
            except Exception as exc:
                if not is_transient(exc) or attempt >= self.policy.max_retries:
                    raise _ProviderFailure(exc, attempt + 1) from exc
                outcome.provider_retries += 1
                yield sleep(self.policy.delay(attempt, exc))
        raise AssertionError("unreachable")

    # --- concluding ----------------------------------------------------------------------------

    def finish(self, judgment: Judgment) -> Feedback:
        """The default feedback: the ``score`` field and the reasoning as comment."""
        metadata = {"feedback": judgment.fields} if self.spec.custom else None
        return Feedback(
            score=judgment.scores.get("score"), comment=judgment.reasoning, metadata=metadata
        )

    def conclude(
        self,
        outcomes: Sequence[Outcome],
        finish: Callable[[Judgment], Feedback],
        extra: Mapping[str, Any],
    ) -> Feedback:
        """The feedback of the samples; a score outside the judge's range is never given."""
        feedback = self._conclude(outcomes, finish, extra)
        problem = score_problem(feedback.score, self.spec.score_range)
        if problem is None:
            return feedback
        error = {
            "type": "invalid_score",
            "message": f"the judge concluded with the score {feedback.score!r}, {problem}",
        }
        return failed(error, {k: v for k, v in (feedback.metadata or {}).items() if k != "error"})

    def _conclude(
        self,
        outcomes: Sequence[Outcome],
        finish: Callable[[Judgment], Feedback],
        extra: Mapping[str, Any],
    ) -> Feedback:
        usage = Usage()
        for outcome in outcomes:
            usage.add(outcome.usage)
        metadata: dict[str, Any] = {"model": self.client.name, "usage": usage.as_metadata()}
        metadata.update(extra)
        if len(outcomes) == 1:
            (outcome,) = outcomes
            metadata["retries"] = {
                "provider": outcome.provider_retries,
                "malformed": len(outcome.rejected),
            }
            if outcome.rejected:
                metadata["rejected_answers"] = outcome.rejected
            if outcome.judgment is None:
                return failed(outcome.error or {}, metadata)
            return _with_metadata(finish(outcome.judgment), metadata)
        combined = combine(
            [(o.judgment, o.error) for o in outcomes],
            reduce=self.reduce,
            threshold=self.threshold,
            scales=self.spec.scales,
        )
        metadata["consensus"] = combined.metadata
        metadata["needs_review"] = combined.metadata.get("needs_review", True)
        if combined.judgment is None:
            errors = [o.error for o in outcomes if o.error]
            error = {"type": "all_samples_failed", "message": _sample_errors(errors)}
            return failed(error, metadata)
        score = finish(combined.judgment)
        comment = combined.lead + (f"\n\n{score.comment}" if score.comment else "")
        return _with_metadata(
            Feedback(score=score.score, comment=comment, metadata=score.metadata, key=score.key),
            metadata,
        )


def gather(cores: Sequence[Callable[[], Core[T]]]) -> Effect[list[T]]:
    """Run several cores: one after another when sync, concurrently when async."""

    async def concurrently() -> list[T]:
        return list(await asyncio.gather(*(adrive(make()) for make in cores)))

    return Effect(lambda: [drive(make()) for make in cores], concurrently)


def failed(error: Mapping[str, str], metadata: dict[str, Any]) -> Feedback:
    """A result that says the judge could not decide: never a 0, never a pass."""
    message = error.get("message", "unknown error").rstrip(". ")
    comment = f"Not scored: {message}. The judge gave no verdict; see metadata['error']."
    return Feedback(score=None, comment=comment, metadata={**metadata, "error": dict(error)})


def _with_metadata(score: Feedback, metadata: Mapping[str, Any]) -> Feedback:
    return Feedback(
        score=score.score,
        comment=score.comment,
        metadata={**metadata, **(score.metadata or {})},
        key=score.key,
    )


def _provider_error(failure: _ProviderFailure) -> dict[str, str]:
    cause = failure.cause
    kind = "timeout" if is_timeout(cause) else "provider_error"
    return {
        "type": kind,
        "message": f"the judge model call failed after {failure.attempts} attempt(s) "
        f"({describe_error(cause)})",
    }


def _sample_errors(errors: Sequence[Mapping[str, str]]) -> str:
    first = errors[0]["message"] if errors else "unknown error"
    return f"all {len(errors)} samples failed; first failure: {first}"


def _previous(reply: Any) -> str:
    return describe_reply(reply) if isinstance(reply, AIMessage) else repr(reply)[:2000]


def summaries(rendered: Mapping[str, Rendered | None]) -> dict[str, Any]:
    """Metadata stating which rendered trajectories were summarized, and how."""
    done = {name: r.summary for name, r in rendered.items() if r is not None and r.summary}
    return {"summarized": done} if done else {}
