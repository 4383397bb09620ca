"""What users pass as ``outputs`` / ``reference_outputs`` / ``inputs``, made readable.

The one coercion layer of lg_eval, shared by evaluators, judges and nodes.

* **Field lookup** (:func:`select_field`): an evaluator declares the field it
  reads (:data:`Field`). When it is handed a dict, it first takes the value
  under the field's keys (:data:`FIELD_KEYS`, first present wins), so a
  LangSmith target returning ``{"trajectory": ..., "messages": ..., "output":
  ...}`` or a reference holding several expectations serves every evaluator
  unwrapped; otherwise it reads the value itself.
* **Shapes**: every reader accepts what a user has at hand (ThreadTrajectory,
  GraphTrajectory, agentevals dicts with or without the ``{"inputs",
  "outputs"}`` envelope, LangChain or OpenAI messages, state dicts, plain call
  lists, strings); a shape error always names the argument and what was
  expected.
"""

from __future__ import annotations

import json
import reprlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

from langchain_core.messages import BaseMessage
from pydantic import ValidationError

from lg_eval._trajectory import GraphTrajectory, ResumedMode, ThreadTrajectory
from lg_eval.errors import InvalidOptionError, TrajectoryFormatError
from lg_eval.messages import (
    ToolCall,
    call_outcomes,
    check_depth,
    message_text,
    parse_arguments,
    to_openai_messages,
    tool_calls_from_openai,
)

WILDCARD: Any = None  # an expected call's args when any arguments are acceptable

# --------------------------------------------------------------------------- field lookup

Field = Literal["trajectory", "thread", "messages", "calls", "output"]
"""What an evaluator reads: a graph trajectory, a whole thread, messages (and their tool
calls), the calls that ran (a whole thread when there is one: its resume turns hold the
reviewer's edits), or the final answer."""

FIELD_KEYS: dict[str, tuple[str, ...]] = {
    "trajectory": ("trajectory", "thread"),
    "thread": ("thread", "trajectory"),
    "messages": ("messages", "tool_calls"),
    "calls": ("thread", "messages", "tool_calls"),
    "output": ("output", "answer", "final_answer"),
}
"""The dict keys each field is looked up under, in order."""

_MESSAGE_KEYS = frozenset(
    {"role", "content", "type", "tool_calls", "expected_calls", "expected_tools", "outputs",
     "thread"}
)  # fmt: skip
_SHAPE_KEYS: dict[str, frozenset[str]] = {
    "trajectory": frozenset({"steps", "results", "turns", "outputs", "inputs"}),
    "thread": frozenset(
        {"steps", "results", "turns", "outputs", "inputs", "interrupts", "resumes"}
    ),
    "messages": _MESSAGE_KEYS,
    "calls": _MESSAGE_KEYS | {"turns"},
    "output": frozenset({"content", "text", "response", "result", "role", "outputs"}),
}
"""Keys of dicts a field's reader understands whole (no lookup hint is due for them)."""

_WHOLE = frozenset({"role"})
"""A dict with these keys is one message: it is read whole, never looked into."""


def select_field(value: Any, field: Field | None, argument: str) -> tuple[Any, str]:
    """The part of ``value`` an evaluator reading ``field`` should read, and where it was.

    The rule: when ``value`` is a dict holding one of ``FIELD_KEYS[field]``, the
    first present key's value (a dict that is itself a message, with a ``role``,
    is never looked into); otherwise ``value`` itself (which the field's
    reader then accepts in any shape it understands, agentevals' included).
    Returns the value and its description for error messages (``outputs['trajectory']``).
    """
    if field is None or not isinstance(value, Mapping) or not _WHOLE.isdisjoint(value):
        return value, argument
    for key in FIELD_KEYS[field]:
        if key in value:
            return value[key], f"{argument}[{key!r}]"
    return value, argument


def lookup_hint(value: Any, field: Field | None, argument: str) -> str:
    """Why a dict was read whole, for a shape error: the keys looked for and those present."""
    if field is None or not isinstance(value, Mapping):
        return ""
    if not _SHAPE_KEYS[field].isdisjoint(value):
        return ""
    if any(key in value for key in FIELD_KEYS[field]):
        return f" (read from {argument}[{next(k for k in FIELD_KEYS[field] if k in value)!r}])"
    wanted = " or ".join(repr(key) for key in FIELD_KEYS[field])
    present = ", ".join(repr(str(key)) for key in list(value)[:8]) or "none"
    return (
        f" ({argument} is a dict without {wanted}, so it was read whole; its keys: {present}."
        f" Put the {field} under {FIELD_KEYS[field][0]!r} or pass it directly.)"
    )


def require(value: Any, argument: str, key: str) -> Any:
    """``value``, or a clear error when an evaluator needs it and it is missing."""
    if value is None:
        raise TrajectoryFormatError(
            f"{key} needs {argument}; pass the expected trajectory, calls or answer "
            f"as {argument}=..."
        )
    return value


# --------------------------------------------------------------------------- tool calls


CallsCounted = Literal["executed", "proposed"]
"""Which tool calls count: those whose tool ran, or every call the model proposed."""
CALLS_COUNTED: tuple[CallsCounted, ...] = ("executed", "proposed")


def calls_arg(value: Any, argument: str, counted: CallsCounted = "proposed") -> list[ToolCall]:
    """Actual tool calls: from any message shape, or a plain list of calls / tool names.

    ``counted="executed"`` keeps only the calls whose tool ran (see :func:`counted_calls`).
    """
    return counted_calls(value, argument, counted).calls


class CountedCalls(NamedTuple):
    """The calls that count, in call order; the proposed calls left out, with their
    positions (``None`` for a plain list of calls, which says nothing of what ran); the
    calls a reviewer edited: position, the model's call, the call that ran."""

    calls: list[ToolCall]
    left_out: list[tuple[int, ToolCall]] | None
    edited: list[tuple[int, ToolCall, ToolCall]]


def counted_calls(value: Any, argument: str, counted: CallsCounted) -> CountedCalls:
    """The calls that count, the proposed calls left out, and the edited calls that ran.

    ``executed``: from messages or a thread, the calls whose tool ran, each as it ran
    (:func:`lg_eval.messages.call_outcomes`: a tool message answers it, not one the harness
    wrote in the tool's place; a call a reviewer edited counts with the arguments it ran
    with); ``proposed``: every call the model made, as it made it. A plain list of calls
    or tool names is taken as made.
    """
    if _is_call_list(value) or (isinstance(value, list | tuple) and not value):
        calls = [_call(item, f"{argument}[{n}]") for n, item in enumerate(value)]
        return CountedCalls(calls, None, [])
    if isinstance(value, Mapping) and "turns" in value:
        value = _validated(ThreadTrajectory, value, argument)
    if counted == "proposed":
        made = tool_calls_from_openai(to_openai_messages(value, argument=argument))
        return CountedCalls(made, [], [])
    outcomes = call_outcomes(value, argument=argument)
    ran = [(n, o["proposed"], o["executed"]) for n, o in enumerate(outcomes)]
    kept = [done for _, _, done in ran if done is not None]
    left = [(n, made) for n, made, done in ran if done is None]
    edited = [(n, made, done) for n, made, done in ran if done is not None and done != made]
    return CountedCalls(kept, left, edited)


def check_counted(value: object, option: str = "calls") -> CallsCounted:
    """``value`` when it is ``executed`` or ``proposed``; else an error naming ``option``."""
    if value == "executed" or value == "proposed":
        return value
    raise InvalidOptionError(
        f"{option}={value!r} is not allowed; use 'executed' (calls whose tool ran, the "
        "default) or 'proposed' (every call the model made, run or not)."
    )


def expected_calls_arg(value: Any, argument: str) -> list[dict[str, Any]]:
    """Expected calls as ``{"name", "args"}``; ``args`` is ``WILDCARD`` when not given.

    Accepts a list of tool names or call dicts, any message shape (its tool
    calls, with their exact args), or a dict holding one of those under
    ``"tool_calls"``, ``"expected_calls"`` or ``"expected_tools"``.
    """
    if isinstance(value, Mapping):
        for key in ("tool_calls", "expected_calls", "expected_tools"):
            if key in value:
                return expected_calls_arg(value[key], f"{argument}[{key!r}]")
    if _is_call_list(value):
        return [_expected(item, f"{argument}[{n}]") for n, item in enumerate(value)]
    return [dict(call) for call in calls_arg(value, argument)]


def expected_from(
    fixed: list[dict[str, Any]] | None, reference_outputs: Any, key: str
) -> list[dict[str, Any]]:
    """The expected calls given to the factory, else those in ``reference_outputs``."""
    if fixed is not None:
        return fixed
    reference = require(reference_outputs, "reference_outputs", key)
    return expected_calls_arg(reference, "reference_outputs")


def _is_call_list(value: Any) -> bool:
    """A non-empty list with nothing that looks like a chat message: calls or tool names."""
    if not isinstance(value, list | tuple) or not value:
        return False
    return not any(_looks_like_message(item) for item in value)


def _looks_like_message(item: Any) -> bool:
    if isinstance(item, BaseMessage | tuple):
        return True
    if not isinstance(item, Mapping):
        return not isinstance(item, str)
    kind = item.get("type")
    return "role" in item or "content" in item or (kind is not None and kind not in _CALL_TYPES)


_CALL_TYPES = ("function", "tool_call")


def _call(item: Any, where: str) -> ToolCall:
    expected = _expected(item, where)
    args = expected["args"]
    return ToolCall(name=expected["name"], args=args or {}, id=expected.get("id"))


def _expected(item: Any, where: str) -> dict[str, Any]:
    if isinstance(item, str):
        if not item:
            raise TrajectoryFormatError(
                f"{where} is an empty tool name; expected a tool name or {{'name': ..., ...}}."
            )
        return {"name": item, "args": WILDCARD}
    if not isinstance(item, Mapping):
        raise TrajectoryFormatError(
            f"{where} is a {type(item).__name__}; expected a tool name or {{'name': ..., ...}}."
        )
    function = item.get("function")
    if isinstance(function, Mapping):
        args = parse_arguments(function.get("arguments"), where)
        name = function.get("name")
    else:
        name, args = item.get("name"), item.get("args", WILDCARD)
    if not isinstance(name, str) or not name:
        raise TrajectoryFormatError(f"{where} has no tool name; expected {{'name': ..., ...}}.")
    if args is not WILDCARD and not isinstance(args, Mapping):
        raise TrajectoryFormatError(f"{where}['args'] must be a dict, not {type(args).__name__}.")
    if args is not WILDCARD:
        check_depth(args, f"{where}['args']")
    call_id = item.get("id")
    return {
        "name": name,
        "args": None if args is None else dict(args),
        "id": call_id if isinstance(call_id, str) else None,
    }


# --------------------------------------------------------------------------- text


ANSWER_KEYS = ("answer", "final_answer", "output", "response", "content", "text", "result")
"""The keys an answer is looked up under, in this order, in a dict given as the answer
(:func:`text_arg`) and in a graph's final state without messages (:func:`final_answer`)."""


def text_arg(value: Any, argument: str) -> str | None:
    """The answer text in ``value``: a string, the last AI message, or a known answer key."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool | int | float):
        return str(value)
    if isinstance(value, BaseMessage):
        return value.text
    if isinstance(value, Mapping) and "role" in value:
        return message_text(value)
    if isinstance(value, Mapping) and "messages" not in value:
        if "outputs" in value:
            return text_arg(value["outputs"], f"{argument}['outputs']")
        for key in ANSWER_KEYS:
            answer = value.get(key)
            if isinstance(answer, str):
                return answer
        return _dict_text(value, argument)
    messages = to_openai_messages(value, argument=argument)
    for message in reversed(messages):
        if message.get("role") == "assistant" and not message.get("tool_calls"):
            return message_text(message)
    return None


def _dict_text(value: Mapping[Any, Any], argument: str) -> str:
    """A dict without an answer key, as its JSON text (its ``str`` when it is no JSON)."""
    try:
        try:
            return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
        except (TypeError, ValueError):  # keys that do not sort together, or are no JSON keys
            return str(value)
    except RecursionError as exc:
        raise TrajectoryFormatError(
            f"{argument} is nested too deeply to read as an answer; pass the answer text."
        ) from exc


def state_messages(state: Any) -> list[Any] | None:
    """The list a graph ``state`` holds under ``"messages"`` (a tuple as a list, messages as
    given); ``None`` when ``state`` is not a mapping or holds no list there."""
    messages = state.get("messages") if isinstance(state, Mapping) else None
    return list(messages) if isinstance(messages, list | tuple) else None


def final_answer(state: Any) -> str | None:
    """The answer a graph's final ``state`` gives: the last AI message without tool calls
    in ``messages``, else the first string under :data:`ANSWER_KEYS`; ``None`` when it
    has neither (what a case's ``expected.output`` is compared with)."""
    if not isinstance(state, Mapping):
        return None
    messages = state_messages(state)
    if messages:
        try:
            return text_arg(messages, "messages")
        except TrajectoryFormatError:
            return None
    for key in ANSWER_KEYS:
        if isinstance(state.get(key), str):
            return str(state[key])
    return None


# --------------------------------------------------------------------------- graphs


@dataclass(frozen=True)
class GraphSide:
    """Node names per turn, and per-turn superstep sizes when the source had them."""

    turns: list[list[str]]
    supersteps: list[list[int]] | None = None


_GRAPH_EXPECTED = (
    "a ThreadTrajectory, a GraphTrajectory, a dict with 'steps' (optionally inside "
    "an {'inputs', 'outputs'} envelope), or a list of per-turn lists of node names"
)


def graph_arg(value: Any, argument: str, resumed: ResumedMode = "omit") -> GraphSide:
    """Node sequences per turn from any graph-trajectory shape."""
    if isinstance(value, ThreadTrajectory):  # its steps, from one walk of its supersteps
        groups = value.step_groups(resumed)
        steps = [[name for group in turn for name in group] for turn in groups]
        return GraphSide(steps, [[len(group) for group in turn] for turn in groups])
    if isinstance(value, GraphTrajectory):
        return GraphSide(value.steps)
    if isinstance(value, Mapping):
        if "turns" in value:
            return graph_arg(_validated(ThreadTrajectory, value, argument), argument, resumed)
        if "steps" in value:
            return GraphSide(_steps(value["steps"], f"{argument}['steps']"))
        if "outputs" in value:
            return graph_arg(value["outputs"], f"{argument}['outputs']", resumed)
        raise TrajectoryFormatError(
            f"{argument} is a dict without 'steps'; expected {_GRAPH_EXPECTED}."
        )
    if isinstance(value, list | tuple):
        if value and all(isinstance(item, str) for item in value):
            raise TrajectoryFormatError(
                f"{argument} is a flat list of node names ({brief(list(value))}); a graph "
                "trajectory has one list per turn: write [[...]] for a one-turn thread, or "
                f"{{'steps': [[...], ...]}}; expected {_GRAPH_EXPECTED}."
            )
        return GraphSide(_steps(value, argument))
    raise TrajectoryFormatError(
        f"{argument} is a {type(value).__name__}; expected {_GRAPH_EXPECTED}."
    )


def _steps(value: Any, where: str) -> list[list[str]]:
    if not isinstance(value, list | tuple):
        raise TrajectoryFormatError(f"{where} must be a list of per-turn lists of node names.")
    turns: list[list[str]] = []
    for n, turn in enumerate(value):
        if not isinstance(turn, list | tuple) or not all(isinstance(x, str) for x in turn):
            raise TrajectoryFormatError(
                f"{where}[{n}] must be a list of node names (strings), got {brief(turn)}."
            )
        turns.append(list(turn))
    return turns


# --------------------------------------------------------------------------- judged graphs

GraphLike = ThreadTrajectory | GraphTrajectory

_GRAPH_SHAPES = (
    "a ThreadTrajectory, a GraphTrajectory, or an agentevals graph trajectory "
    "({'inputs': [...], 'results': [...], 'steps': [[...], ...]}, or the "
    "{'inputs': [...], 'outputs': {...}} dict agentevals' extractors return)"
)


def graph_trajectory(outputs: Any, inputs: Any = None, *, argument: str = "outputs") -> GraphLike:
    """``outputs`` (plus separately passed ``inputs``) as a thread or flat graph trajectory.

    Raises:
        TrajectoryFormatError: the shape is not a graph trajectory, or the numbers of
            inputs, results and steps differ (the message says which).
    """
    if isinstance(outputs, ThreadTrajectory):
        return outputs
    if isinstance(outputs, Mapping) and "turns" in outputs:
        return _validated(ThreadTrajectory, outputs, argument)
    if isinstance(outputs, Mapping) and isinstance(outputs.get("outputs"), Mapping | GraphLike):
        if inputs is None:
            inputs = outputs.get("inputs")
        return graph_trajectory(outputs["outputs"], inputs, argument=f"{argument}['outputs']")
    if isinstance(outputs, GraphTrajectory):
        data: dict[str, Any] = outputs.model_dump()
    elif isinstance(outputs, Mapping) and ("results" in outputs or "steps" in outputs):
        data = dict(outputs)
    else:
        raise TrajectoryFormatError(
            f"{argument} is a {type(outputs).__name__}; the graph trajectory judge expects "
            f"{_GRAPH_SHAPES}."
        )
    if inputs is not None and not _example_inputs(inputs, data):
        data["inputs"] = _input_list(inputs)
    _check_lengths(data, argument)
    return _validated(GraphTrajectory, data, argument)


def _example_inputs(inputs: Any, data: Mapping[str, Any]) -> bool:
    """Whether ``inputs`` is a LangSmith example's inputs rather than the turn inputs.

    ``langsmith.evaluate`` hands every evaluator the example's inputs dict; beside
    a trajectory that records its own turn inputs, a dict without ``'inputs'`` is
    that, and the trajectory's own inputs are kept.
    """
    return isinstance(inputs, Mapping) and "inputs" not in inputs and bool(data.get("inputs"))


def _input_list(inputs: Any) -> list[Any]:
    if isinstance(inputs, Mapping):
        if "inputs" not in inputs:
            raise TrajectoryFormatError(
                f"inputs is a dict with keys {sorted(map(str, inputs))}; pass the list of "
                "turn inputs, or a dict holding it under 'inputs'."
            )
        inputs = inputs["inputs"]
    if not isinstance(inputs, list | tuple):
        raise TrajectoryFormatError(
            f"inputs is a {type(inputs).__name__}; pass one input per turn, as a list."
        )
    return list(inputs)


def _check_lengths(data: Mapping[str, Any], argument: str) -> None:
    for key in ("inputs", "results", "steps"):
        value = data.get(key)
        if value is not None and not isinstance(value, list | tuple):
            raise TrajectoryFormatError(
                f"{argument}[{key!r}] is a {type(value).__name__}; expected a list with one "
                "entry per turn."
            )
    sizes = {key: len(data.get(key) or []) for key in ("inputs", "results", "steps")}
    if len(set(sizes.values())) == 1:
        return
    counts = ", ".join(f"{key} has {n}" for key, n in sizes.items())
    differing = [
        f"{a} ({sizes[a]}) vs {b} ({sizes[b]})"
        for a, b in (("inputs", "results"), ("inputs", "steps"), ("results", "steps"))
        if sizes[a] != sizes[b]
    ]
    hint = (
        " No inputs were given: pass inputs= (agentevals' extractor returns them next to "
        "'outputs')."
        if sizes["inputs"] == 0
        else ""
    )
    raise TrajectoryFormatError(
        f"{argument}: the graph trajectory's lengths differ ({counts}; mismatched: "
        f"{', '.join(differing)}). Each turn needs one input, one result and one list of "
        f"steps.{hint}"
    )


def _validated(model: type[GraphLike], data: Mapping[str, Any], argument: str) -> GraphLike:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or '(root)'}: {e['msg']}" for e in exc.errors()
        )
        raise TrajectoryFormatError(
            f"{argument} is not a valid {model.__name__}: {problems}."
        ) from exc


_GRAPH_KEYS = frozenset(GraphTrajectory.model_fields)


def recorded_trajectory(value: Any, argument: str, expected: str) -> GraphLike:
    """``value`` as the thread or flat trajectory it holds, as recorded (no length rule).

    Accepts a ThreadTrajectory or its dict (``turns``), a GraphTrajectory or a dict
    with any of its fields (``steps``, ``interrupts``, ``resumes``...), either inside
    an ``{"outputs": ...}`` envelope. ``expected`` describes the accepted shapes
    for the error message.
    """
    if isinstance(value, GraphLike):
        return value
    if isinstance(value, Mapping):
        if "turns" in value:
            return _validated(ThreadTrajectory, value, argument)
        if isinstance(value.get("outputs"), Mapping | GraphLike):
            return recorded_trajectory(value["outputs"], f"{argument}['outputs']", expected)
        if not _GRAPH_KEYS.isdisjoint(value):
            return _validated(GraphTrajectory, value, argument)
        wanted = ", ".join(repr(key) for key in ("turns", *sorted(_GRAPH_KEYS)))
        raise TrajectoryFormatError(
            f"{argument} is a dict without any of {wanted}; expected {expected}."
        )
    raise TrajectoryFormatError(f"{argument} is a {type(value).__name__}; expected {expected}.")


def any_trajectory(value: Any, *, argument: str = "outputs") -> Any:
    """A graph trajectory, a list of OpenAI-style messages, or (else) the value itself."""
    if isinstance(value, GraphLike):
        return value
    if isinstance(value, Mapping) and ("turns" in value or "steps" in value):
        return graph_trajectory(value, argument=argument)
    if isinstance(value, str):
        return value
    try:
        return to_openai_messages(value, argument=argument)
    except TrajectoryFormatError:
        return value


def brief(value: Any, limit: int = 60) -> str:
    """A short repr of a user's value for an error message: safe on any nesting or size."""
    text = _REPR.repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


_REPR = reprlib.Repr()
_REPR.maxlevel, _REPR.maxstring, _REPR.maxother = 3, 40, 40


def describe_call(call: Mapping[str, Any]) -> str:
    """``name(arg=value, ...)`` for comments; ``name(...)`` when any args are accepted."""
    args = call.get("args")
    if args is None:
        return f"{call['name']}(...)"
    inner = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in args.items())
    return f"{call['name']}({inner})"


def describe_list(items: list[str], limit: int = 3) -> str:
    """``a, b, c and 2 more`` for comments."""
    shown = ", ".join(items[:limit])
    return shown if len(items) <= limit else f"{shown} and {len(items) - limit} more"
