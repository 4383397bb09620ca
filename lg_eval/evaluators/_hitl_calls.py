"""What the run did after the human's answer: an approved call runs, a rejected one does not.

When the graph asks a human about tool calls the model proposed (a refund to
approve), the answer decides whether they run. Questions and answers can
match a reference while a regressed graph executes a rejected call anyway;
this check reads the thread's messages to catch that. Each answer is checked
against the calls its own question asked about, at the depth where it was asked
(:mod:`lg_eval._reviews`); a call is executed when its tool ran, with the
arguments it ran with (:func:`lg_eval.messages.call_outcomes`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from lg_eval._feedback import Feedback
from lg_eval._inputs import describe_call
from lg_eval._reviews import Review, edits, reviews
from lg_eval._tool_results import as_run, tool_results
from lg_eval._trajectory import ThreadTrajectory
from lg_eval.errors import TrajectoryFormatError
from lg_eval.evaluators._hitl_values import show
from lg_eval.messages import iter_tool_calls, to_openai_messages

Decision = Literal["approve", "edit", "reject", "respond"]
Decide = Callable[[Any], Decision | list[Decision | None] | None]
"""``decision(answer)``: what a resume value decided, per named call when it is a list."""

APPROVALS = frozenset(
    {"approve", "approved", "accept", "accepted", "allow", "yes", "y", "ok", "confirm"}
)
REJECTIONS = frozenset({"reject", "rejected", "deny", "denied", "decline", "declined", "no", "n"})
EDITS = frozenset({"edit", "edited"})
RESPONSES = frozenset({"respond"})
RUNS: frozenset[str] = frozenset({"approve", "edit"})
"""The decisions after which the call must run (after the others, it must not)."""
_DECISION_KEYS = ("type", "decision", "action", "approved", "approve")


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
        for words, decision in _WORDS:
            if word in words:
                return decision
        return None
    if isinstance(value, Mapping):
        for key in _DECISION_KEYS:
            if key in value:
                return _one(value[key])
    return None


_WORDS: tuple[tuple[frozenset[str], Decision], ...] = (
    (APPROVALS, "approve"),
    (REJECTIONS, "reject"),
    (EDITS, "edit"),
    (RESPONSES, "respond"),
)


@dataclass(frozen=True)
class ReviewedCalls:
    """A thread's tool calls (in call order, over its final messages) with the questions
    that asked about them and the call each tool ran as."""

    messages: list[dict[str, Any]]
    """The thread's final messages, normalized."""
    calls: list[dict[str, Any]]
    """Every proposed call, ``{"name", "args", "id"}``."""
    results: dict[int, dict[str, Any]]
    """The tool message answering each call, by position."""
    reviews: list[Review]
    edited: dict[int, dict[str, Any]]
    """The reviewer's ``{"name", "args"}`` of each edited call, by position."""
    executed: list[dict[str, Any] | None]
    """Per call, the call its tool ran (an edit as edited), or None when it did not run."""


def reviewed_calls(thread: ThreadTrajectory) -> ReviewedCalls | None:
    """The calls of ``thread`` paired with the questions about them
    (:func:`lg_eval._reviews.reviews`); None when its state holds no messages."""
    try:
        final = to_openai_messages(thread, argument="the thread's messages")
    except TrajectoryFormatError:
        return None
    made = list(iter_tool_calls(final))
    calls = [dict(call) for _, call in made]
    results = tool_results(final)
    found = reviews(thread, final, made, results)
    edited = edits(found)
    return ReviewedCalls(final, calls, results, found, edited, as_run(calls, results, edited))


def check_calls(verdict: Feedback, thread: ThreadTrajectory, decide: Decide) -> Feedback:
    """``verdict`` with the calls each answer decided checked against what ran afterwards.

    Nothing changes for a thread without messages in its state (there are no calls
    to check); ``metadata["calls_after_answer"]`` lists each checked call.
    """
    read = reviewed_calls(thread)
    if read is None:
        return verdict
    calls, edited, executed = read.calls, read.edited, read.executed
    rows: list[dict[str, Any]] = []
    problems: list[str] = []
    for review in read.reviews:
        for position, choice in zip(review.calls, call_decisions(review, decide), strict=True):
            if choice not in ("approve", "edit", "reject", "respond"):
                continue
            call, ran = calls[position], executed[position]
            row: dict[str, Any] = {
                "turn": review.turn,
                "decision": choice,
                "call": dict(call),
                "executed": ran is not None,
                "ok": (ran is not None) == (choice in RUNS),
            }
            happened = "was executed" if ran is not None else "was not executed"
            wanted = edited.get(position) if choice == "edit" else None
            if ran is not None and choice == "edit":
                row["executed_as"] = {"name": ran["name"], "args": ran["args"]}
                if wanted is not None and row["executed_as"] != wanted:
                    row["ok"] = False
                    happened = f"ran as {describe_call(ran)}, not as edited"
            rows.append(row)
            if not row["ok"]:
                problems.append(
                    f"Turn {review.turn + 1}: answered {show(review.answer)} ({choice}), but "
                    f"{describe_call(call)} {happened} afterwards."
                )
    metadata = {**(verdict.metadata or {}), "calls_after_answer": rows}
    if not problems:
        return verdict.model_copy(update={"metadata": metadata})
    more = f" ({len(problems) - 1} more call(s) differ.)" if len(problems) > 1 else ""
    comment = " ".join(part for part in (verdict.comment, problems[0] + more) if part)
    return verdict.model_copy(update={"score": False, "comment": comment, "metadata": metadata})


def call_decisions(review: Review, decide: Decide) -> list[Decision | None]:
    """Per call the question asked about, what its answer decided: ``decide`` reads the
    whole answer, and returns one decision per call, in the question's order (a list), or
    one for all of them."""
    decided = decide(review.answer)
    if isinstance(decided, list):
        return [*decided[: len(review.calls)], *[None] * (len(review.calls) - len(decided))]
    return [decided] * len(review.calls)
