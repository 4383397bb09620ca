"""What the run did after the human's answer: an approved call runs, a rejected one does not.

When the graph asks a human about tool calls the model proposed (a refund to
approve), the answer decides whether they run. Questions and answers can
match a reference while a regressed graph executes a rejected call anyway;
this check reads the thread's messages to catch that. A call is executed when
its tool ran (:func:`lg_eval.messages.executed_calls`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal

from lg_eval.errors import TrajectoryFormatError
from lg_eval.evaluators._hitl_sides import answer, in_path_order
from lg_eval.evaluators._hitl_values import show
from lg_eval.feedback import Feedback
from lg_eval.inputs import describe_call, state_messages
from lg_eval.messages import ToolCall, executed_calls, to_openai_messages, tool_calls_from_openai
from lg_eval.trajectory import ThreadTrajectory, Turn

Decision = Literal["approve", "reject"]
Decide = Callable[[Any], Decision | list[Decision | None] | None]
"""``decision(answer)``: what a resume value decided, per named call when it is a list."""

APPROVALS = frozenset(
    {"approve", "approved", "accept", "accepted", "allow", "yes", "y", "ok", "confirm"}
)
REJECTIONS = frozenset({"reject", "rejected", "deny", "denied", "decline", "declined", "no", "n"})
_DECISION_KEYS = ("type", "decision", "action", "approved", "approve")
_MAX_DEPTH = 8  # how deep a question payload is searched for the calls it names


def decision_of(value: Any) -> Decision | list[Decision | None] | None:
    """The default reading of an answer: a bool, a word, a ``{"type": ...}``-style dict, or
    LangChain's ``{"decisions": [...]}`` (a list, one decision per named call)."""
    if isinstance(value, Mapping) and isinstance(value.get("decisions"), list):
        return [_one(item) for item in value["decisions"]]
    return _one(value)


def _one(value: Any) -> Decision | None:
    if isinstance(value, bool):
        return "approve" if value else "reject"
    if isinstance(value, str):
        word = value.strip().lower()
        return "approve" if word in APPROVALS else "reject" if word in REJECTIONS else None
    if isinstance(value, Mapping):
        for key in _DECISION_KEYS:
            if key in value:
                return _one(value[key])
    return None


def check_calls(verdict: Feedback, thread: ThreadTrajectory, decide: Decide) -> Feedback:
    """``verdict`` with the calls each answer decided checked against what ran afterwards.

    Nothing changes for a thread without messages in its state (there are no calls
    to check); ``metadata["calls_after_answer"]`` lists each checked call.
    """
    final = _messages(thread.turns[-1]) if thread.turns else None
    if final is None:
        return verdict
    ran_ids = {
        call["id"]
        for call, ran in zip(tool_calls_from_openai(final), executed_calls(final), strict=True)
        if ran and call["id"]
    }
    rows: list[dict[str, Any]] = []
    problems: list[str] = []
    for n in range(1, len(thread.turns)):
        turn, before = thread.turns[n], thread.turns[n - 1]
        if turn.kind != "resume":
            continue
        given = answer(turn, in_path_order(before.interrupts))
        concerned = _asked_about(before)
        decided = decide(given)
        decisions = decided if isinstance(decided, list) else [decided] * len(concerned)
        for call, choice in zip(concerned, decisions, strict=False):
            if choice not in ("approve", "reject"):
                continue
            ran = call["id"] in ran_ids
            ok = ran if choice == "approve" else not ran
            rows.append(
                {"turn": n, "decision": choice, "call": dict(call), "executed": ran, "ok": ok}
            )
            if not ok:
                happened = "was executed" if ran else "was not executed"
                problems.append(
                    f"Turn {n + 1}: answered {show(given)} ({choice}), but "
                    f"{describe_call(call)} {happened} afterwards."
                )
    metadata = {**(verdict.metadata or {}), "calls_after_answer": rows}
    if not problems:
        return verdict.model_copy(update={"metadata": metadata})
    more = f" ({len(problems) - 1} more call(s) differ.)" if len(problems) > 1 else ""
    comment = " ".join(part for part in (verdict.comment, problems[0] + more) if part)
    return verdict.model_copy(update={"score": False, "comment": comment, "metadata": metadata})


def _messages(turn: Turn) -> list[dict[str, Any]] | None:
    """The turn's state messages in OpenAI form; None when it holds none lg_eval can read."""
    messages = state_messages(turn.state)
    if messages is None:
        return None
    try:
        return to_openai_messages(messages, argument="state['messages']")
    except TrajectoryFormatError:
        return None


def _asked_about(turn: Turn) -> list[ToolCall]:
    """The proposed calls not yet run when ``turn`` paused: those its questions name (by
    call id or tool name), else all of them."""
    messages = _messages(turn)
    if messages is None:
        return []
    pending = [
        call
        for call, ran in zip(
            tool_calls_from_openai(messages), executed_calls(messages), strict=True
        )
        if not ran and call["id"]
    ]
    words: set[str] = set()
    for record in in_path_order(turn.interrupts):
        _strings(record.value, words, _MAX_DEPTH)
    named = [call for call in pending if call["id"] in words or call["name"] in words]
    return named or pending


def _strings(value: Any, into: set[str], depth: int) -> None:
    if depth <= 0:
        return
    if isinstance(value, str):
        into.add(value)
    elif isinstance(value, Mapping):
        for item in value.values():
            _strings(item, into, depth - 1)
    elif isinstance(value, list | tuple):
        for item in value:
            _strings(item, into, depth - 1)


__all__ = ["APPROVALS", "REJECTIONS", "Decide", "Decision", "check_calls", "decision_of"]
