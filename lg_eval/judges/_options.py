"""The options every judge factory takes, and building a :class:`Judge` from them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated, Any

from annotated_types import Ge, MinLen
from pydantic import BaseModel, SkipValidation, Strict, TypeAdapter, ValidationError, with_config
from typing_extensions import TypedDict

from lg_eval._arguments import (
    BOUNDARY,
    Count,
    Delay,
    FiniteFloat,
    Flag,
    Seconds,
    Size,
    invalid_option,
)
from lg_eval.errors import InvalidOptionError
from lg_eval.judges._consensus import DEFAULT_THRESHOLD, Reducer
from lg_eval.judges._core import DEFAULT_MAX_CHARS, Judge
from lg_eval.judges._limits import DEFAULT_CONCURRENCY, JudgeConcurrency
from lg_eval.judges._model import StructuredOutput
from lg_eval.judges._prompting import Prompt, examples_block
from lg_eval.judges._provider import resolve_client
from lg_eval.judges._retry import RetryPolicy
from lg_eval.judges._schema import OutputSpec, custom_spec, score_spec


@with_config(BOUNDARY)
class JudgeOptions(TypedDict, total=False):
    """Options every LLM judge factory accepts (all optional, keyword-only).

    model: ``"provider:model"`` for ``init_chat_model`` (default ``LG_EVAL_JUDGE_MODEL``,
        else ``openai:o3-mini``); with an OpenAI client as ``judge``, the model name.
    judge: a LangChain chat model, or an ``openai.OpenAI``/``AsyncOpenAI`` client.
    structured_output: ``"function_calling"`` (default: the model must call the judgment
        tool) or ``"json_schema"`` (the provider's strict JSON-schema response format).
    system: a system message put before the prompt.
    continuous: score as a float in 0..1 instead of a boolean.
    choices: the only scores allowed (numbers), e.g. ``[0, 0.5, 1]``.
    use_reasoning: ask for reasoning before the score (default True).
    few_shot_examples: graded examples (``inputs``, ``outputs``, ``score``,
        optional ``reasoning``) appended to the prompt.
    output_schema: a pydantic model or JSON schema for custom structured feedback;
        its ``score`` field (if any) becomes the score and the whole answer goes to
        ``metadata["feedback"]``.
    samples: ask the model this many times and reduce (consensus), default 1.
    reduce: ``"mean"``, ``"median"`` or ``"majority"`` (default: majority for
        booleans, mean for numbers).
    disagreement_threshold: spread above which a consensus is flagged for review.
    max_chars: character budget of each rendered trajectory before it is
        summarized (default 32000; None for no budget).
    max_retries: retries of rate limits, timeouts and other transient errors.
    parse_retries: retries of malformed or out-of-range answers.
    backoff_base / backoff_max: exponential backoff in seconds (jittered).
    timeout: seconds allowed for one model call (None for no limit).
    concurrency: the :class:`JudgeConcurrency` limit to share (default: process-wide).
    """

    model: str | None
    judge: Any
    structured_output: StructuredOutput
    system: str | None
    continuous: Flag
    choices: Annotated[Sequence[FiniteFloat], MinLen(1)] | None
    use_reasoning: Flag
    few_shot_examples: Sequence[Mapping[str, Any]] | None
    output_schema: SkipValidation[type[BaseModel] | Mapping[str, Any] | None]
    samples: Count
    reduce: Reducer | None
    disagreement_threshold: FiniteFloat
    max_chars: Annotated[int, Strict(), Ge(200)] | None
    max_retries: Size
    parse_retries: Size
    backoff_base: Delay
    backoff_max: Delay
    timeout: Seconds | None
    concurrency: JudgeConcurrency | None


OPTIONS = frozenset(JudgeOptions.__annotations__)
_CHECKED = TypeAdapter(JudgeOptions)
SCORE_OPTIONS = frozenset({"continuous", "choices", "output_schema"})
_POLICY_OPTIONS = ("max_retries", "parse_retries", "backoff_base", "backoff_max", "timeout")


def build_judge(
    options: Mapping[str, Any],
    *,
    spec: OutputSpec | None = None,
    allowed: frozenset[str] = OPTIONS,
    default_reduce: str | None = None,
) -> Judge:
    """A :class:`Judge` from factory keywords; unknown or unsupported options raise."""
    unknown = set(options) - OPTIONS
    if unknown:
        raise InvalidOptionError(
            f"Unknown judge option(s): {', '.join(sorted(unknown))}. "
            f"Allowed: {', '.join(sorted(allowed))}."
        )
    unsupported = {k for k in set(options) - allowed if options[k] not in (None, False)}
    if unsupported:
        raise InvalidOptionError(
            f"This judge does not take {', '.join(sorted(unsupported))}: it defines its own "
            "output. Leave them out."
        )
    try:
        given = _CHECKED.validate_python(options)
    except ValidationError as exc:
        raise invalid_option(exc) from None
    if spec is None:
        output_schema = given.get("output_schema")
        spec = (
            custom_spec(output_schema)
            if output_schema is not None
            else score_spec(
                continuous=given.get("continuous", False),
                choices=given.get("choices"),
                use_reasoning=given.get("use_reasoning", True),
            )
        )
    policy = RetryPolicy(**{k: given[k] for k in _POLICY_OPTIONS if k in given})  # type: ignore[literal-required]
    client = resolve_client(
        given.get("model"),
        given.get("judge"),
        timeout=policy.timeout,
        method=given.get("structured_output", "function_calling"),
    )
    return Judge(
        client=client,
        spec=spec,
        policy=policy,
        limit=given.get("concurrency") or DEFAULT_CONCURRENCY,
        system=given.get("system"),
        examples=examples_block(given.get("few_shot_examples") or ()),
        samples=given.get("samples", 1),
        reduce=given.get("reduce") or default_reduce,
        threshold=given.get("disagreement_threshold", DEFAULT_THRESHOLD),
        max_chars=given.get("max_chars", DEFAULT_MAX_CHARS),
    )


def prompt_judge(prompt: Prompt | None, options: Mapping[str, Any]) -> Judge:
    """The judge for a score-style prompt; a ``StructuredPrompt`` brings its output schema."""
    schema = getattr(prompt, "schema_", None)
    if schema is not None:
        if options.get("output_schema") is not None:
            raise InvalidOptionError(
                "The prompt carries its own output schema (a StructuredPrompt); leave out "
                "output_schema=, or use a plain prompt."
            )
        options = {**options, "output_schema": schema}
    return build_judge(options)
