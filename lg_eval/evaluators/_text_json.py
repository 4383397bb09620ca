"""JSON scorers for final answers: does the answer parse, does it fit a JSON Schema?

The answer may be a JSON string (a surrounding Markdown code fence is
allowed, as models often add one), the last AI message of a trajectory, or
already-structured data (a dict or list that is not a message container).
Schemas are checked with the ``jsonschema`` library (any draft it knows, picked
from ``$schema``; Draft 2020-12 by default).
"""

from __future__ import annotations

import importlib
import json
import math
import re
from collections.abc import Mapping
from typing import Any

from langchain_core.messages import BaseMessage

from lg_eval._evaluator import Evaluator, make_evaluator
from lg_eval._feedback import BOOL, Feedback
from lg_eval._inputs import brief, require, text_arg
from lg_eval.errors import InvalidOptionError

_FENCE = re.compile(r"^```[\w-]*[ \t]*\n(.*?)\n?```$", re.DOTALL)
_NOTHING = object()


MAX_JSON_DEPTH = 500
"""How deeply a structured answer (lists, dicts) may nest to be checked; deeper ones, and
JSON text deeper than the decoder's limit (about 1,000 levels), get ``score=None``
("too deep to check"), never a crash."""


class TooDeep(Exception):
    """A JSON answer nested past :data:`MAX_JSON_DEPTH`: not checked, so not scored."""


def parse_json_answer(value: Any) -> tuple[Any, str | None]:
    """``(data, None)`` when the answer is JSON, else ``(_NOTHING, reason)``.

    JSON is RFC 8259 JSON: ``NaN`` and ``Infinity`` are not JSON, and structured
    answers may hold only ``None``, bools, finite numbers, strings, lists and
    dicts with string keys (not bytes, not NaN).

    Raises:
        TooDeep: the answer nests too deeply to check (see :data:`MAX_JSON_DEPTH`).
    """
    if isinstance(value, list | tuple | Mapping) and not _is_messages(value):
        problem = _not_json(value)
        return (_NOTHING, problem) if problem else (value, None)
    text = text_arg(value, "outputs")
    if text is None or not text.strip():
        return _NOTHING, "The output has no answer text to parse."
    stripped = text.strip()
    fenced = _FENCE.match(stripped)
    try:
        data = json.loads(fenced.group(1) if fenced else stripped, parse_constant=_refuse_constant)
    except json.JSONDecodeError as exc:
        return _NOTHING, f"Not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}."
    except ValueError as exc:  # NaN / Infinity, or a number past Python's digit limit
        return _NOTHING, f"Not valid JSON: {exc}."
    except RecursionError as exc:  # the decoder's own depth limit (about 1,000 levels)
        raise TooDeep(stripped[:40]) from exc
    return data, None


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value (JSON has no NaN or infinities)")


def _not_json(value: Any) -> str | None:
    """Why a structured answer is no JSON value, or ``None`` (checked without recursion)."""
    stack: list[tuple[Any, str, int]] = [(value, "$", 0)]
    while stack:
        item, path, depth = stack.pop()
        if depth > MAX_JSON_DEPTH:
            raise TooDeep(path)
        if item is None or isinstance(item, bool | int | str):
            continue
        if isinstance(item, float):
            if not math.isfinite(item):
                return f"Not valid JSON: {path} is {item!r}, and JSON has no NaN or infinities."
            continue
        if isinstance(item, Mapping):
            for key, child in item.items():
                if not isinstance(key, str):
                    return (
                        f"Not valid JSON: {path} has the key {brief(key)}; JSON keys are strings."
                    )
                stack.append((child, f"{path}[{key!r:.30}]", depth + 1))
            continue
        if isinstance(item, list | tuple):
            stack.extend((child, f"{path}[{n}]", depth + 1) for n, child in enumerate(item))
            continue
        return f"Not valid JSON: {path} is a {type(item).__name__}, which JSON cannot hold."
    return None


def _is_messages(value: Any) -> bool:
    if isinstance(value, Mapping):
        return "role" in value or "messages" in value
    return bool(value) and all(
        isinstance(item, BaseMessage) or (isinstance(item, Mapping) and "role" in item)
        for item in value
    )


def _json_valid(*, outputs: Any, **_: Any) -> Feedback:
    """Whether the answer is valid JSON (a surrounding Markdown code fence is allowed).

    Key ``json_valid``; a bool score, the parse error in the comment.
    """
    try:
        _, problem = parse_json_answer(outputs)
    except TooDeep:
        return _too_deep()
    return Feedback(score=problem is None, comment=problem)


def _too_deep() -> Feedback:
    message = "the answer is nested too deeply to check"
    return Feedback(
        score=None,
        comment=f"Not scored: {message}.",
        metadata={"error": {"type": "too_deep", "message": message}},
    )


json_valid = make_evaluator("json_valid", _json_valid, reads="output", score_range=BOOL)


def create_json_schema_evaluator(schema: Mapping[str, Any] | None = None) -> Evaluator:
    """Whether the answer is JSON that validates against a JSON Schema.

    ``schema`` is the schema, or ``None`` to read it from each example's
    ``reference_outputs`` (the schema itself, or a dict holding it under
    ``"schema"``). A bool score under ``json_schema``; the comment lists the
    first violations with their paths and ``metadata["errors"]`` all of them.

    Raises:
        InvalidOptionError: ``schema`` is not a valid JSON Schema.
    """
    fixed = None if schema is None else _validator(schema, "schema")

    def scorer(*, outputs: Any, reference_outputs: Any = None, **_: Any) -> Feedback:
        validator = fixed
        if validator is None:
            reference = require(reference_outputs, "reference_outputs", "json_schema")
            if isinstance(reference, Mapping) and isinstance(reference.get("schema"), Mapping):
                reference = reference["schema"]
            validator = _validator(reference, "reference_outputs")
        try:
            data, problem = parse_json_answer(outputs)
        except TooDeep:
            return _too_deep()
        if problem:
            return Feedback(score=False, comment=problem, metadata={"errors": []})
        errors = [
            {
                "path": "$" + "".join(f"[{p!r}]" for p in error.absolute_path),
                "message": error.message,
            }
            for error in sorted(validator.iter_errors(data), key=_path_order)
        ]
        comment = None
        if errors:
            shown = "; ".join(f"{e['path']}: {e['message']}" for e in errors[:3])
            more = f" (+{len(errors) - 3} more)" if len(errors) > 3 else ""
            comment = f"{len(errors)} schema violation(s): {shown}{more}."
        return Feedback(score=not errors, comment=comment, metadata={"errors": errors})

    scorer.__doc__ = create_json_schema_evaluator.__doc__
    return make_evaluator("json_schema", scorer, reads="output", score_range=BOOL)


def _path_order(error: Any) -> list[tuple[bool, Any]]:
    return [(isinstance(part, str), part) for part in error.absolute_path]


def _validator(schema: Any, where: str) -> Any:
    try:  # imported here so the rest of lg_eval works where jsonschema is not installed
        # (by name: jsonschema ships no type information, so it is used untyped)
        schema_errors = importlib.import_module("jsonschema.exceptions")
        validators = importlib.import_module("jsonschema.validators")
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise InvalidOptionError(
            "The json_schema evaluator needs the jsonschema package: pip install jsonschema."
        ) from exc
    if not isinstance(schema, Mapping | bool):
        raise InvalidOptionError(f"{where} must be a JSON Schema (a dict), not {brief(schema)}.")
    cls = validators.validator_for(schema)
    try:
        cls.check_schema(schema)
    except schema_errors.SchemaError as exc:
        raise InvalidOptionError(f"{where} is not a valid JSON Schema: {exc.message}.") from exc
    return cls(schema)
