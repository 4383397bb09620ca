"""When an answer a human gave may answer the question a graph asks now: the one rule.

An answer source that holds answers given earlier (a replay's recording of a production
thread's humans, :class:`~lg_eval.play.FromRecording`) reuses one only for the same
question. Two questions are the same when they are asked at the same node (the top-level
node of the parent graph, where a recording files its answers) and :func:`question_key`
gives equal keys:

* a ``HumanInTheLoopMiddleware`` request of langchain's ``create_agent`` (batched mode,
  ``{"action_requests": [...], "review_configs": [...]}``): its action requests in order,
  each as its tool name and arguments. Descriptions are text written about a call, and
  the review configs say what the reviewer may decide, not what is asked;
* a per-call approval of the same middleware (``{"type": "tool_approval", "tool_call_id",
  "name", "args", "description"}``): the tool name and arguments (the model's call id is
  new on every run);
* LangGraph's older ``HumanInterrupt`` (``{"action_request": {"action", "args"}, "config",
  "description"}``, alone or in a list): each action and its arguments;
* any other payload: the payload itself as JSON data (``pydantic_core.to_jsonable_python``:
  a mapping equal whatever its key order, a tuple equal to the list of its items, a
  pydantic model or dataclass equal to its fields).

Arguments are compared whole and as data: ``{"flight": "AF123"}`` and ``{"flight":
"BA456"}`` are two questions, and so are a call with an argument more and one without it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic_core import to_jsonable_python

from lg_eval.play._models import PendingInterrupt, QuestionChange

_WIDTH = 120


def question_key(value: Any) -> Any:
    """What an interrupt payload asks, as JSON data compared for equality (see the module
    text): the action requests of a human-in-the-loop request, else the payload."""
    data = to_jsonable_python(value, fallback=repr)
    actions = _actions(data)
    return {"actions": actions} if actions is not None else {"payload": data}


def _actions(data: Any) -> list[list[Any]] | None:
    """``[[tool name, args], ...]`` of a human-in-the-loop payload; None for any other."""
    if isinstance(data, Mapping):
        requests = data.get("action_requests")
        if isinstance(requests, list) and all(_is_call(r, "name") for r in requests):
            return [[r["name"], r.get("args")] for r in requests]
        if data.get("type") == "tool_approval" and _is_call(data, "name"):
            return [[data["name"], data.get("args")]]
        data = [data]  # LangGraph's HumanInterrupt, alone
    if isinstance(data, list) and data:
        requests = [
            item.get("action_request") if isinstance(item, Mapping) else None for item in data
        ]
        if all(_is_call(request, "action") for request in requests):
            return [[request["action"], request.get("args")] for request in requests]
    return None


def _is_call(value: Any, name_key: str) -> bool:
    return isinstance(value, Mapping) and isinstance(value.get(name_key), str)


def top_node(path: str) -> str:
    """The top-level node of an interrupt's path (``researcher`` of ``researcher:verify``)."""
    return path.split(":", 1)[0]


def same_question(answered: PendingInterrupt, asked: PendingInterrupt) -> bool:
    """Whether ``asked`` (pending now) asks what ``answered`` (the question an answer was
    given to) asked: the same top-level node and equal :func:`question_key`."""
    return top_node(answered.path) == top_node(asked.path) and question_key(
        answered.value
    ) == question_key(asked.value)


def describe_question(value: Any) -> str:
    """A question for a one-line message: the tool calls of a human-in-the-loop request
    (``book_flight({"flight": "AF123"})``), else the payload as compact JSON, cut short."""
    key = question_key(value)
    if "actions" in key:
        text = "; ".join(f"{name}({_json(args)})" for name, args in key["actions"])
    else:
        data = key["payload"]
        text = repr(data) if isinstance(data, str) else _json(data)
    return text if len(text) <= _WIDTH else text[: _WIDTH - 3] + "..."


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def describe_changes(changes: Sequence[QuestionChange]) -> str:
    """``question changed at node 'n': the recorded answer was given to X; the graph now
    asks Y`` for each change, joined by ``; ``."""
    return "; ".join(
        f"question changed at node {change.node!r}: the recorded answer was given to "
        f"{describe_question(change.answered)}; the graph now asks "
        f"{describe_question(change.asked)}"
        for change in changes
    )
