"""The rubric judge: one score per dimension, plus an overall normalized score.

The evaluator returns a list of feedback dicts (LangSmith accepts a list): first
the overall score under ``feedback_key`` (the weighted mean of the dimension
scores, each normalized to 0..1), then one entry per dimension under
``"{feedback_key}.{dimension}"`` with the raw score on the dimension's scale.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Unpack

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from lg_eval._effects import Core
from lg_eval._evaluator import Evaluator, Scorer
from lg_eval._feedback import Feedback, FeedbackDict
from lg_eval._inputs import any_trajectory
from lg_eval.errors import InvalidOptionError
from lg_eval.judges import _prompts as prompts
from lg_eval.judges._core import Judge
from lg_eval.judges._options import OPTIONS, SCORE_OPTIONS, JudgeOptions, build_judge
from lg_eval.judges._prompting import Prompt
from lg_eval.judges._schema import Judgment, OutputSpec, object_schema, reasoning_property, require
from lg_eval.judges._text import PromptText, escape

RUBRIC_KEY = "rubric"
RUBRIC_TOOL = "record_rubric_scores"


class RubricDimension(BaseModel):
    """One dimension of a rubric: what it measures and the integer scale it uses."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
    description: str
    scale: tuple[int, int] = (1, 5)
    levels: dict[int, str] | None = Field(
        default=None, description="Optional meaning of particular scores, e.g. {1: ..., 5: ...}."
    )
    weight: float = Field(default=1.0, gt=0)

    @model_validator(mode="after")
    def _scale_rises(self) -> RubricDimension:
        low, high = self.scale
        if low >= high:
            raise ValueError(f"scale must be (low, high) with low < high, got {self.scale}")
        return self


DEFAULT_RUBRIC: tuple[RubricDimension, ...] = tuple(
    RubricDimension(name=name, description=text) for name, text in prompts.RUBRIC_DIMENSIONS.items()
)

DimensionsLike = Sequence[RubricDimension | Mapping[str, Any] | tuple[str, str]] | Mapping[str, str]


def rubric_dimensions(dimensions: DimensionsLike) -> tuple[RubricDimension, ...]:
    """Dimensions from models, dicts, ``(name, description)`` pairs or a name->description map."""
    items: list[Any] = (
        [{"name": k, "description": v} for k, v in dimensions.items()]
        if isinstance(dimensions, Mapping)
        else list(dimensions)
    )
    try:
        parsed = tuple(
            RubricDimension(name=item[0], description=item[1])
            if isinstance(item, tuple)
            else RubricDimension.model_validate(item)
            for item in items
        )
    except ValidationError as exc:
        raise InvalidOptionError(f"Invalid rubric dimension: {exc}") from exc
    names = [d.name for d in parsed]
    if not parsed or len(set(names)) != len(names):
        raise InvalidOptionError(
            f"dimensions must be a non-empty list with distinct names, got {names}."
        )
    return parsed


def render_rubric(dimensions: Sequence[RubricDimension]) -> str:
    """The rubric as prompt text, one ``<dimension>`` block each (descriptions escaped, as
    a rubric may come from a dataset file: no text of it can close a fence)."""
    blocks = []
    for d in dimensions:
        low, high = d.scale
        lines = [f'<dimension name="{d.name}" scale="{low}-{high}">', escape(d.description)]
        lines += [
            f"{score}: {escape(meaning)}" for score, meaning in sorted((d.levels or {}).items())
        ]
        lines.append("</dimension>")
        blocks.append("\n".join(lines))
    return PromptText("\n".join(blocks))


def rubric_spec(dimensions: Sequence[RubricDimension], use_reasoning: bool = True) -> OutputSpec:
    """A tool asking for every dimension's score (with reasoning first, by default)."""
    properties: dict[str, Any] = {}
    for d in dimensions:
        low, high = d.scale
        fields: dict[str, Any] = (
            {
                "reasoning": {
                    **reasoning_property(),
                    "description": prompts.RUBRIC_DIMENSION_REASONING,
                }
            }
            if use_reasoning
            else {}
        )
        fields["score"] = {
            "type": "integer",
            "minimum": low,
            "maximum": high,
            "description": prompts.RUBRIC_DIMENSION_SCORE.format(low=low, high=high),
        }
        properties[d.name] = object_schema(d.name, fields, d.description)
    schema = object_schema(RUBRIC_TOOL, properties, prompts.RUBRIC_TOOL_DESCRIPTION)

    def read(args: dict[str, Any]) -> Judgment:
        require(args, schema)
        scores = {d.name: int(args[d.name]["score"]) for d in dimensions}
        return Judgment(scores, None, dict(args))

    scales = {d.name: (float(d.scale[0]), float(d.scale[1])) for d in dimensions}
    return OutputSpec(RUBRIC_TOOL, schema, read, scales, prompts.RUBRIC_TOOL_DESCRIPTION)


def _finisher(dimensions: Sequence[RubricDimension]) -> Callable[[Judgment], Feedback]:
    def finish(judgment: Judgment) -> Feedback:
        detail: dict[str, dict[str, Any]] = {}
        weighted = total = 0.0
        for d in dimensions:
            low, high = d.scale
            score = judgment.scores.get(d.name)
            normalized = None if score is None else (float(score) - low) / (high - low)
            reasoning = (judgment.fields.get(d.name) or {}).get("reasoning")
            detail[d.name] = {
                "score": score,
                "normalized": normalized,
                "scale": [low, high],
                "weight": d.weight,
                "reasoning": reasoning,
            }
            if normalized is not None:
                weighted, total = weighted + d.weight * normalized, total + d.weight
        overall = weighted / total if total else None
        comment = "\n".join(
            f"{name}: {item['score']} on {item['scale'][0]}-{item['scale'][1]}"
            + (f". {item['reasoning']}" if item["reasoning"] else "")
            for name, item in detail.items()
        )
        return Feedback(score=overall, comment=comment, metadata={"dimensions": detail})

    return finish


def _scorer(prompt: Prompt, judge: Judge, dimensions: Sequence[RubricDimension]) -> Scorer:
    rubric_text = render_rubric(dimensions)
    finish = _finisher(dimensions)

    def rubric(
        *, outputs: Any, inputs: Any = None, reference_outputs: Any = None, **kwargs: Any
    ) -> Core[Feedback]:
        """Grade a trajectory on every dimension of a rubric."""
        values, rendered = judge.render(
            inputs=inputs,
            outputs=any_trajectory(outputs),
            reference=(
                any_trajectory(reference_outputs, argument="reference_outputs")
                if reference_outputs
                else None
            ),
        )
        values["dimensions"] = rubric_text
        score: Feedback = yield from judge.evaluate(
            prompt, {**values, **kwargs}, rendered, finish=finish
        )
        return score

    return rubric


def _split(result: FeedbackDict, dimensions: Sequence[RubricDimension]) -> list[FeedbackDict]:
    """The overall feedback followed by one feedback per dimension."""
    metadata = result["metadata"] or {}
    detail = metadata.get("dimensions", {})
    failure = {"error": metadata["error"]} if "error" in metadata else {}
    per_dimension: list[FeedbackDict] = []
    for d in dimensions:
        item = dict(detail.get(d.name) or {})
        per_dimension.append(
            {
                "key": f"{result['key']}.{d.name}",
                "score": item.pop("score", None),
                "comment": item.pop("reasoning", None) or (result["comment"] if failure else None),
                "metadata": item or {"scale": list(d.scale), "weight": d.weight, **failure},
            }
        )
    return [result, *per_dimension]


def _prepare(
    options: Mapping[str, Any], dimensions: DimensionsLike
) -> tuple[tuple[RubricDimension, ...], Judge]:
    parsed = rubric_dimensions(dimensions)
    spec = rubric_spec(parsed, options.get("use_reasoning", True))
    return parsed, build_judge(options, spec=spec, allowed=OPTIONS - SCORE_OPTIONS)


def create_rubric_judge(
    *,
    dimensions: DimensionsLike = DEFAULT_RUBRIC,
    prompt: Prompt = prompts.RUBRIC_PROMPT,
    feedback_key: str = RUBRIC_KEY,
    **options: Unpack[JudgeOptions],
) -> Evaluator[list[FeedbackDict]]:
    """An LLM judge grading a trajectory on several rubric dimensions.

    ``dimensions`` are :class:`RubricDimension` objects, dicts of their fields,
    ``(name, description)`` pairs, or a ``{name: description}`` map (scale 1-5); the
    default is :data:`DEFAULT_RUBRIC` (reasoning quality, strategy, adaptability,
    information usage). ``outputs`` may be any trajectory shape (graph or messages).
    Returns ``[overall, *one_per_dimension]``; see the module docs. Takes every
    :class:`JudgeOptions` option except ``continuous``, ``choices`` and
    ``output_schema`` (the dimensions define the output).
    """
    parsed, judge = _prepare(options, dimensions)
    ranges = {f"{feedback_key}.{d.name}": (float(d.scale[0]), float(d.scale[1])) for d in parsed}
    return Evaluator(
        feedback_key,
        _scorer(prompt, judge, parsed),
        reads="trajectory",
        expand=lambda result: _split(result, parsed),
        score_range=judge.spec.score_range,
        key_ranges=ranges,
    )
