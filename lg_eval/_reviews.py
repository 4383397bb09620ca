"""Which tool calls a human was asked to review, and what they decided, question by question.

A graph that pauses for a review asks with ``interrupt(payload)`` and gets the answer back
from ``Command(resume=...)``. LangChain's ``HumanInTheLoopMiddleware`` asks in one of two
documented shapes:

* ``batched`` (its default): one interrupt per model turn,
  ``{"action_requests": [{"name", "args", "description"}, ...], "review_configs": [...]}``,
  listing the gated calls of the model's last AI message in their order, answered by
  ``{"decisions": [...]}`` in the same order;
* ``per_call``: one interrupt per gated call, ``{"type": "tool_approval", "tool_call_id",
  "name", "args", "description"}``, answered by one decision, keyed by the interrupt's id.

A decision is ``{"type": "approve" | "edit" | "reject" | "respond", ...}``; an edit carries
``edited_action: {"name", "args"}``, the call its tool runs instead, while the AI message
keeps the model's own call.

:func:`reviews` pairs each answered question with the calls it asked about among the calls
of a thread's messages, at the depth where it was asked. A per-call question names its call
by id. A batched one's action requests are calls of one AI message, in order, matched by
name and arguments; where several messages fit, a question a root node asked is about the
last of them the root's state held when it asked (the one the middleware reviews), one asked
inside a subgraph about the first the root's state did not hold yet (a subagent's messages
reach the root's when it returns, if they ever do). A payload of another shape asked by a
root node asks about the calls its state held unanswered when it asked: those the payload
names (by call id or tool name), else all of them; one asked inside a subgraph is paired
with none, since the parent's calls are not what it asked about. A call is paired with one
question at most, the first that asked about it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache, partial
from typing import Any

from lg_eval._trajectory import InterruptRecord, ThreadTrajectory, Turn

Call = Mapping[str, Any]
"""A proposed tool call: ``{"name", "args", "id"}``."""

_MAX_DEPTH = 8  # how deep a payload of another shape is searched for the calls it names


@dataclass(frozen=True)
class Review:
    """One answered question and the calls it asked about."""

    turn: int
    """Index of the turn whose resume answered it."""
    question: InterruptRecord
    answer: Any
    """The resume value this question got."""
    calls: tuple[int, ...] = ()
    """Positions, among all the messages' calls, of the calls it asked about, in its order
    (empty when they are not among the messages)."""
    decisions: tuple[Any, ...] | None = None
    """Per call, its share of the answer (a LangChain decision); ``None`` when the answer is
    not split by call (a payload of another shape)."""
    shaped: bool = False
    """Whether the question has one of the middleware's shapes."""


def reviews(
    thread: ThreadTrajectory,
    messages: Sequence[Mapping[str, Any]],
    calls: Sequence[tuple[int, Call]],
    results: Mapping[int, Mapping[str, Any]],
) -> list[Review]:
    """Every answered question of ``thread`` with its calls, turn by turn; the questions one
    turn answered, in the order of their calls (parallel questions have no order of their
    own).

    ``messages`` are the thread's final messages, normalized; ``calls`` their tool calls
    with the index of the message that made each; ``results`` the tool message answering
    each call, by position (:func:`lg_eval._tool_results.tool_results`).
    """
    where = {id(message): n for n, message in enumerate(messages)}
    finder = _Finder(calls, {p: where.get(id(m)) for p, m in results.items()})
    found: list[Review] = []
    for n in range(1, len(thread.turns)):
        turn, before = thread.turns[n], thread.turns[n - 1]
        if turn.kind != "resume":
            continue
        pending = sorted(before.interrupts, key=lambda record: record.path)
        held = cache(partial(_held, before, messages))  # decodes the state only if needed
        answered = []
        for record in pending:
            given, answer = _answer_to(turn, record, pending)
            if given:
                answered.append(finder.review(n, record, answer, held))
        found.extend(sorted(answered, key=lambda r: r.calls[:1] or (len(calls),)))
    return found


def edits(found: Sequence[Review]) -> dict[int, dict[str, Any]]:
    """The reviewer's call for each edited call, ``{"name", "args"}``, by position."""
    edited: dict[int, dict[str, Any]] = {}
    for review in found:
        for position, share in zip(review.calls, review.decisions or (), strict=False):
            action = share.get("edited_action") if _decision(share) == "edit" else None
            if (
                isinstance(action, Mapping)
                and isinstance(action.get("name"), str)
                and isinstance(action.get("args"), Mapping)
            ):
                edited.setdefault(position, {"name": action["name"], "args": dict(action["args"])})
    return edited


def any_edit(thread: ThreadTrajectory) -> bool:
    """Whether any resume of ``thread`` carries an ``edit`` decision (else :func:`edits` is
    empty, and the questions need not be paired for it)."""
    for turn in thread.turns:
        for answer in (turn.resume or {}).values():
            shares = answer.get("decisions") if isinstance(answer, Mapping) else None
            if _decision(answer) == "edit" or (
                isinstance(shares, list) and any(_decision(share) == "edit" for share in shares)
            ):
                return True
    return False


def _decision(share: Any) -> Any:
    return share.get("type") if isinstance(share, Mapping) else None


# --------------------------------------------------------------------------- answers


def _answer_to(
    turn: Turn, record: InterruptRecord, pending: list[InterruptRecord]
) -> tuple[bool, Any]:
    """Whether ``turn`` answered ``record``, and with what: by interrupt id, else by the
    node's path, else the turn's one answer to its one pending question."""
    given = turn.resume or {}
    if record.id is not None and record.id in given:
        return True, given[record.id]
    if record.path in given:
        return True, given[record.path]
    by_node = turn.resume_by_node or {}
    if record.path in by_node and sum(r.path == record.path for r in pending) == 1:
        return True, by_node[record.path]
    if len(pending) == 1 and len(given) == 1:
        return True, next(iter(given.values()))
    return False, None


# --------------------------------------------------------------------------- depth


Held = Callable[[int], bool] | None
"""Whether the root's state held the message at an index when a question was asked
(``None``: the state is unknown)."""


def _held(turn: Turn, messages: Sequence[Mapping[str, Any]]) -> Held:
    """Whether the root's state when ``turn`` ended (and its questions were asked) held
    each of the final ``messages``: by message id, else by position (they are appended)."""
    state = turn.state
    then = state.get("messages") if isinstance(state, Mapping) else None
    if not isinstance(then, list | tuple):
        return None
    ids = {_message_id(m) for m in then} - {None}
    count = len(then)

    def held(index: int) -> bool:
        message_id = messages[index].get("id")
        return message_id in ids if isinstance(message_id, str) else index < count

    return held


def _message_id(message: Any) -> str | None:
    found = message.get("id") if isinstance(message, Mapping) else getattr(message, "id", None)
    return found if isinstance(found, str) else None


# --------------------------------------------------------------------------- finding calls


class _Finder:
    """Pairs questions with calls, each call with the first question that asks about it."""

    def __init__(
        self, calls: Sequence[tuple[int, Call]], answered_at: Mapping[int, int | None]
    ) -> None:
        self.calls = calls
        self.answered_at = answered_at
        self.claimed: set[int] = set()
        self.groups: dict[int, list[int]] = {}  # message index -> positions of its calls
        for position, (index, _) in enumerate(calls):
            self.groups.setdefault(index, []).append(position)

    def review(
        self, turn: int, record: InterruptRecord, answer: Any, held: Callable[[], Held]
    ) -> Review:
        root = ":" not in record.path
        value = record.value
        shares: tuple[Any, ...] | None = None
        if _per_call(value):
            found = self._by_id(value["tool_call_id"], root, held)
            shares = (answer,)
        elif _batched(value):
            requests = value["action_requests"]
            found = self._in_one_message(requests, root, held)
            decisions = answer.get("decisions") if isinstance(answer, Mapping) else None
            if isinstance(decisions, list) and len(decisions) == len(requests):
                shares = tuple(decisions)
        else:
            found = self._named(value, held()) if root else []
        self.claimed.update(found)
        shaped = _per_call(value) or _batched(value)
        return Review(turn, record, answer, tuple(found), shares if found else None, shaped)

    def _free(self, positions: Sequence[int]) -> list[int]:
        return [p for p in positions if p not in self.claimed]

    def _by_id(self, call_id: str, root: bool, held: Callable[[], Held]) -> list[int]:
        """The first free call with this id; of several, one at the question's depth."""
        same = self._free([p for p, (_, c) in enumerate(self.calls) if c.get("id") == call_id])
        if len(same) > 1 and (known := held()) is not None:
            same = [p for p in same if known(self.calls[p][0]) == root] or same
        return same[:1]

    def _in_one_message(
        self, requests: list[Any], root: bool, held: Callable[[], Held]
    ) -> list[int]:
        """The calls ``requests`` ask about, in order, all made by one AI message: the one
        message whose free calls fit, or, of several, the last the root's state held when
        asked (a root question: the middleware reviews the last AI message) or the first it
        did not hold (a subgraph's question). The state is read only to choose."""
        fits = []
        for index in sorted(self.groups):
            found = self._requested(requests, self._free(self.groups[index]))
            if found is not None:
                fits.append((index, found))
        if len(fits) > 1 and (known := held()) is not None:
            at_depth = [fit for fit in fits if known(fit[0]) == root]
            fits = (at_depth[-1:] if root else at_depth[:1]) or fits
        return fits[0][1] if fits else []

    def _requested(self, requests: list[Any], positions: list[int]) -> list[int] | None:
        """The positions that ``requests`` ask about, in order, or ``None``."""
        found: list[int] = []
        rest = iter(positions)
        for request in requests:
            name, args = request.get("name"), request.get("args")
            position = next((p for p in rest if _same_call(self.calls[p][1], name, args)), None)
            if position is None:
                return None
            found.append(position)
        return found

    def _named(self, value: Any, held: Held) -> list[int]:
        """The calls the root's state held unanswered: those ``value`` names, else all."""
        if held is None:
            return []
        pending = [
            p
            for p, (index, call) in enumerate(self.calls)
            if p not in self.claimed
            and held(index)
            and call.get("id")
            and not self._answered_then(p, held)
        ]
        words: set[str] = set()
        _strings(value, words, _MAX_DEPTH)
        named = [p for p in pending if _names(self.calls[p][1]) & words]
        return named or pending

    def _answered_then(self, position: int, held: Callable[[int], bool]) -> bool:
        answer = self.answered_at.get(position)
        return answer is not None and held(answer)


def _per_call(value: Any) -> bool:
    return (
        isinstance(value, Mapping)
        and value.get("type") == "tool_approval"
        and isinstance(value.get("tool_call_id"), str)
    )


def _batched(value: Any) -> bool:
    requests = value.get("action_requests") if isinstance(value, Mapping) else None
    return (
        isinstance(requests, list)
        and bool(requests)
        and all(isinstance(r, Mapping) and isinstance(r.get("name"), str) for r in requests)
    )


def _names(call: Call) -> set[Any]:
    """How a payload may name a call: its id or its tool."""
    return {call.get("id"), call["name"]}


def _same_call(call: Call, name: Any, args: Any) -> bool:
    return bool(call["name"] == name and (args is None or call.get("args") == args))


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
