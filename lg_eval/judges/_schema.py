"""What a judge must answer: the tool schema it is given, and how its answer is checked.

An :class:`OutputSpec` names the tool the judge model is asked to call, its
JSON schema, and ``read``, which turns the tool arguments into a
:class:`Judgment` or raises :class:`MalformedOutput` with a message written
for the model (it is shown to it when the judge retries).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage
from pydantic import BaseModel, ValidationError

from lg_eval._feedback import ScoreValue, is_finite_number
from lg_eval.errors import InvalidOptionError
from lg_eval.judges import _prompts as prompts
from lg_eval.messages import message_text

JUDGMENT_TOOL = "record_judgment"


class MalformedOutput(ValueError):
    """The judge model's answer is unusable; the message tells the model why."""


@dataclass(frozen=True)
class Judgment:
    """A validated answer: named scores, the model's reasoning, every field it gave."""

    scores: Mapping[str, ScoreValue]
    reasoning: str | None = None
    fields: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class OutputSpec:
    """The tool a judge answers with, and how to read its arguments."""

    name: str
    schema: dict[str, Any]
    read: Callable[[dict[str, Any]], Judgment]
    scales: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    description: str = prompts.JUDGMENT_TOOL_DESCRIPTION
    custom: bool = False
    score_range: tuple[float, float] | None = (0.0, 1.0)
    """Where a numeric final score must lie (None: anywhere, as long as it is finite)."""

    def tool(self) -> dict[str, Any]:
        """The tool in OpenAI function format (accepted by every ``bind_tools``)."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.schema,
            },
        }


# --- a small JSON-schema checker (the keywords judge schemas use) ---------------------------

_TYPES: dict[str, Callable[[Any], bool]] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "integer": lambda v: (
        (isinstance(v, int) and not isinstance(v, bool))
        or (isinstance(v, float) and v.is_integer())
    ),
    "number": lambda v: is_finite_number(v),
    "null": lambda v: v is None,
}


def check(value: Any, schema: Mapping[str, Any], where: str = "") -> list[str]:
    """Problems of ``value`` against ``schema``: type, enum, bounds, required, properties."""
    label = where or "the arguments"
    kinds = schema.get("type")
    kinds = [kinds] if isinstance(kinds, str) else kinds
    if kinds and not any(_TYPES.get(k, lambda _: True)(value) for k in kinds):
        return [f"{label} must be of type {' or '.join(kinds)}, got {json.dumps(value)}"]
    if "enum" in schema and value not in schema["enum"]:
        return [f"{label} must be one of {json.dumps(schema['enum'])}, got {json.dumps(value)}"]
    problems = []
    if isinstance(value, int | float) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            problems.append(f"{label} must be at least {schema['minimum']}, got {value}")
        if "maximum" in schema and value > schema["maximum"]:
            problems.append(f"{label} must be at most {schema['maximum']}, got {value}")
    if isinstance(value, dict):
        properties = schema.get("properties", {})
        problems += [
            f"the required field '{where + '.' if where else ''}{key}' is missing"
            for key in schema.get("required", [])
            if key not in value
        ]
        for key, item in value.items():
            path = f"{where}.{key}" if where else key
            if key in properties:
                problems += check(item, properties[key], path)
            elif schema.get("additionalProperties") is False:
                problems.append(f"{path} is not an allowed field")
    if isinstance(value, list) and isinstance(schema.get("items"), Mapping):
        for i, item in enumerate(value):
            problems += check(item, schema["items"], f"{label}[{i}]")
    return problems


def object_schema(title: str, properties: dict[str, Any], description: str) -> dict[str, Any]:
    """A closed object schema requiring every property, in the order given."""
    return {
        "title": title,
        "description": description,
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


def reasoning_property() -> dict[str, Any]:
    return {"type": "string", "description": prompts.REASONING_DESCRIPTION}


def require(args: dict[str, Any], schema: Mapping[str, Any]) -> None:
    """Raise :class:`MalformedOutput` listing every problem of ``args``."""
    problems = check(args, schema)
    if problems:
        raise MalformedOutput("; ".join(problems) + ".")


# --- the default score ----------------------------------------------------------------------


def score_spec(
    *, continuous: bool = False, choices: Sequence[float] | None = None, use_reasoning: bool = True
) -> OutputSpec:
    """A boolean score, a 0..1 float (``continuous``), or one of ``choices``."""
    if choices is not None and continuous:
        raise InvalidOptionError(
            "continuous=True and choices= contradict each other: continuous asks for any "
            "number in 0..1, choices for one of the numbers given. Pass one of them."
        )
    if choices is not None:
        score: dict[str, Any] = {"type": "number", "enum": list(choices)}
        score["description"] = prompts.CHOICE_SCORE_DESCRIPTION
        scale = (min(choices), max(choices))
    elif continuous:
        score = {"type": "number", "minimum": 0, "maximum": 1}
        score["description"] = prompts.CONTINUOUS_SCORE_DESCRIPTION
        scale = (0.0, 1.0)
    else:
        score = {"type": "boolean", "description": prompts.BOOLEAN_SCORE_DESCRIPTION}
        scale = (0.0, 1.0)
    properties = {"reasoning": reasoning_property()} if use_reasoning else {}
    properties["score"] = score
    schema = object_schema("judgment", properties, prompts.JUDGMENT_TOOL_DESCRIPTION)

    def read(args: dict[str, Any]) -> Judgment:
        require(args, schema)
        value = args["score"]
        value = value if isinstance(value, bool) else float(value)
        return Judgment({"score": value}, args.get("reasoning"), dict(args))

    return OutputSpec(JUDGMENT_TOOL, schema, read, {"score": scale}, score_range=scale)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def score_problem(score: Any, score_range: tuple[float, float] | None) -> str | None:
    """Why ``score`` cannot leave a judge (None: it is a bool, None, or a number in range)."""
    if score is None or isinstance(score, bool):
        return None
    if not _is_number(score):
        return f"which is a {type(score).__name__}, not a number"
    if not is_finite_number(score):
        return "which is not a finite number"
    if score_range is not None and not score_range[0] <= score <= score_range[1]:
        return f"outside the judge's range {score_range[0]:g}..{score_range[1]:g}"
    return None


# --- a caller's own schema ------------------------------------------------------------------


def custom_spec(output_schema: type[BaseModel] | Mapping[str, Any]) -> OutputSpec:
    """Structured feedback of the caller's shape: a pydantic model or a JSON schema.

    A field named ``score`` (boolean or number) becomes the feedback score, and
    ``reasoning`` (or ``comment``/``explanation``) its comment.
    """
    if isinstance(output_schema, type) and issubclass(output_schema, BaseModel):
        schema = output_schema.model_json_schema()
        model = output_schema

        def validate(args: dict[str, Any]) -> dict[str, Any]:
            try:
                return model.model_validate(args).model_dump(mode="json")
            except ValidationError as exc:
                raise MalformedOutput(_pydantic_problems(exc)) from None

    elif isinstance(output_schema, Mapping):
        schema = dict(output_schema)
        if isinstance(schema.get("schema"), Mapping) and "name" in schema:  # OpenAI format
            schema = {"title": schema["name"], **schema["schema"]}

        def validate(args: dict[str, Any]) -> dict[str, Any]:
            require(args, schema)
            return dict(args)

    else:
        raise InvalidOptionError(
            f"output_schema is a {type(output_schema).__name__}; pass a pydantic model class "
            "or a JSON schema dict."
        )
    score_schema = schema.get("properties", {}).get("score", {})
    scale = (float(score_schema.get("minimum", 0)), float(score_schema.get("maximum", 1)))

    def read(args: dict[str, Any]) -> Judgment:
        fields = validate(args)
        score = fields.get("score")
        if _is_number(score) and not is_finite_number(score):
            raise MalformedOutput(f"score must be a finite number, got {score}.")
        scores = {"score": score} if isinstance(score, bool | int | float) else {}
        reasoning = next(
            (fields[k] for k in ("reasoning", "comment", "explanation") if k in fields), None
        )
        return Judgment(scores, None if reasoning is None else str(reasoning), fields)

    name = re.sub(r"[^A-Za-z0-9_-]", "_", str(schema.get("title") or JUDGMENT_TOOL))[:64]
    return OutputSpec(
        name, schema, read, {"score": scale}, custom=True, score_range=declared_range(score_schema)
    )


def declared_range(score_schema: Mapping[str, Any]) -> tuple[float, float] | None:
    """The range a custom schema declares for ``score``: its bounds, or its enum's span."""
    low: Any = score_schema.get("minimum")
    high: Any = score_schema.get("maximum")
    if _is_number(low) and _is_number(high):
        return float(low), float(high)
    options = [v for v in score_schema.get("enum") or () if _is_number(v)]
    if options:
        return float(min(options)), float(max(options))
    return None


def _pydantic_problems(exc: ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(map(str, e['loc'])) or 'the arguments'}: {e['msg']}" for e in exc.errors()
    )


# --- reading the model's reply --------------------------------------------------------------


def tool_arguments(reply: AIMessage, tool: str) -> dict[str, Any]:
    """The arguments of the reply's call to ``tool``, or a JSON object in its text."""
    calls = reply.tool_calls
    if calls:
        call = next((c for c in calls if c["name"] == tool), calls[0])
        if call["name"] != tool:
            raise MalformedOutput(f"you called the tool `{call['name']}` instead of `{tool}`.")
        return dict(call["args"])
    if reply.invalid_tool_calls:
        bad = reply.invalid_tool_calls[0]
        reason = bad.get("error") or "they could not be parsed"
        raise MalformedOutput(
            f"the arguments of your `{tool}` call were not valid JSON ({reason})."
        )
    found = json_object_in(message_text({"content": reply.content}))
    if found is None:
        raise MalformedOutput(f"you neither called `{tool}` nor answered with a JSON object.")
    return found


def json_object_in(text: str) -> dict[str, Any] | None:
    """The JSON object in ``text`` (bare, fenced, or between the first '{' and last '}')."""
    stripped = re.sub(r"^```(?:json)?\s*|\s*```$", "", text.strip())
    candidates = [stripped]
    if "{" in text and "}" in text:
        candidates.append(text[text.index("{") : text.rindex("}") + 1])
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            return value
    return None


def describe_reply(reply: AIMessage, limit: int = 2000) -> str:
    """What the model answered, as text to quote back to it."""
    if reply.tool_calls:
        text = json.dumps([{c["name"]: c["args"]} for c in reply.tool_calls], ensure_ascii=False)
    elif reply.invalid_tool_calls:
        text = " ".join(str(c.get("args")) for c in reply.invalid_tool_calls)
    else:
        text = message_text({"content": reply.content}) or "(an empty reply)"
    return text if len(text) <= limit else text[:limit] + "…"
