"""Labels a team has already paid for: the decisions people made inside checkpointed threads.

Two kinds of answer in a thread are a person's label:

* an ``interrupt`` asking about tool calls in one of ``HumanInTheLoopMiddleware``'s shapes
  (batched ``action_requests``, or ``per_call`` ``tool_approval``): each action request's
  decision labels "should this action happen" (key :data:`ACTION_KEY`): ``approve`` is
  True, ``edit`` and ``reject`` are False (the action should not happen as proposed); the
  label's ``item`` is the call's id, its ``metadata`` the decision, the call, the edited call
  and whether the call ran (:func:`lg_eval.messages.call_outcomes`);
* the evaluation graph's ``review`` (:func:`lg_eval.nodes.create_evaluation_graph`): the
  reviewer's ``pass``/``fail`` and note on the evaluated thread (key :data:`REVIEW_KEY`).

The questions are paired with the calls they asked about by :func:`lg_eval._reviews.reviews`,
the one reading of who decided what. A thread is read from any checkpointer
(:func:`harvest_labels`) or from a LangGraph Server (:func:`harvest_server_labels`); both
give the same :class:`~lg_eval._trajectory.ThreadTrajectory`, and :func:`labels_from_thread`
reads it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import ExitStack
from datetime import UTC, datetime
from typing import Any

from pydantic import ValidationError

from lg_eval._reviews import Review, reviews
from lg_eval._tool_results import tool_results
from lg_eval._trajectory import ThreadTrajectory
from lg_eval.errors import InvalidOptionError, TrajectoryFormatError
from lg_eval.extract import extract_thread
from lg_eval.labels._models import Label
from lg_eval.messages import call_outcomes, iter_tool_calls, to_openai_messages
from lg_eval.nodes._evaluation_graph import REVIEW_QUESTION
from lg_eval.nodes._evaluation_state import ReviewDecision
from lg_eval.play import open_checkpointer, resolve_target, thread_config
from lg_eval.server import ServerConnection, extract_server_thread, list_server_threads

ACTION_KEY = "approved_actions"
"""The key of an interrupt decision's label: should this action happen (as proposed)."""
REVIEW_KEY = "review"
"""The key of the evaluation graph's review verdict."""
REVIEWER = "reviewer"
"""Who decided, when the thread does not say (an interrupt's answer names no one)."""
_VERDICTS = {"approve": True, "edit": False, "reject": False}


def labels_from_thread(
    thread: ThreadTrajectory,
    *,
    key: str = ACTION_KEY,
    review_key: str = REVIEW_KEY,
    labeler: str = REVIEWER,
) -> list[Label]:
    """The labels the people who answered ``thread``'s interrupts gave, turn by turn: one
    per action request decided (``approve``, ``edit``, ``reject``; a ``respond`` or an
    answer of another shape is no label) and one per review verdict."""
    try:
        messages = to_openai_messages(thread, argument="the thread's messages")
    except TrajectoryFormatError:  # no messages in its state (an evaluation graph's thread)
        messages = []
    made = list(iter_tool_calls(messages))
    found = reviews(thread, messages, made, tool_results(messages))
    ran = _executed(thread, messages) if any(r.shaped for r in found) else []
    labels: list[Label] = []
    for review in found:
        when = _when(thread, review.turn)
        if review.shaped:
            calls = [dict(call) for _, call in made]
            labels.extend(_actions(thread, review, calls, ran, key, labeler, when))
        elif isinstance(review.question.value, Mapping):
            label = _review(thread, review, review_key, labeler, when)
            if label is not None:
                labels.append(label)
    return labels


def _executed(thread: ThreadTrajectory, messages: list[Any]) -> list[bool]:
    """Per proposed call (in call order), whether its tool ran."""
    if not messages:
        return []
    return [outcome["executed"] is not None for outcome in call_outcomes(thread)]


def _actions(
    thread: ThreadTrajectory,
    review: Review,
    calls: Sequence[Mapping[str, Any]],
    ran: Sequence[bool],
    key: str,
    labeler: str,
    when: datetime,
) -> Iterator[Label]:
    value = review.question.value
    per_call = value.get("type") == "tool_approval"
    requests: list[Any] = [value] if per_call else list(value["action_requests"])
    shares = review.decisions if review.decisions is not None else _shares(review, len(requests))
    for index, (request, share) in enumerate(zip(requests, shares, strict=False)):
        decision = share.get("type") if isinstance(share, Mapping) else None
        if decision not in _VERDICTS:
            continue
        position = review.calls[index] if index < len(review.calls) else None
        call_id = calls[position].get("id") if position is not None else None
        call_id = call_id or (value.get("tool_call_id") if per_call else None)
        metadata: dict[str, Any] = {
            "decision": decision,
            "call": {"name": request.get("name"), "args": request.get("args")},
            "interrupt_id": review.question.id,
            "path": review.question.path,
        }
        if decision == "edit" and isinstance(share.get("edited_action"), Mapping):
            metadata["edited_action"] = dict(share["edited_action"])
        if position is not None and position < len(ran):
            metadata["executed"] = ran[position]
        message = share.get("message")
        yield Label(
            key=key,
            thread_id=thread.thread_id,
            turn=review.turn,
            item=str(call_id or f"{review.question.id or review.question.path}:{index}"),
            verdict=_VERDICTS[decision],
            note=message if isinstance(message, str) and message else None,
            labeler=labeler,
            labeled_at=when,
            source="interrupt",
            metadata=metadata,
        )


def _shares(review: Review, count: int) -> tuple[Any, ...]:
    """Per action request, its decision, when the calls asked about were not found among
    the thread's messages (a subagent's, which never reach the root's)."""
    if count == 1 and review.question.value.get("type") == "tool_approval":
        return (review.answer,)
    decisions = review.answer.get("decisions") if isinstance(review.answer, Mapping) else None
    return tuple(decisions) if isinstance(decisions, list) and len(decisions) == count else ()


def _review(
    thread: ThreadTrajectory, review: Review, key: str, labeler: str, when: datetime
) -> Label | None:
    """The evaluation graph's review, when ``review`` answers one with a valid decision."""
    payload = review.question.value
    if payload.get("question") != REVIEW_QUESTION:
        return None
    try:
        decision = ReviewDecision.model_validate(review.answer)
    except ValidationError:  # the graph asked again; the valid answer is another review
        return None
    evaluated = payload.get("thread_id")
    return Label(
        key=key,
        thread_id=evaluated if isinstance(evaluated, str) and evaluated else thread.thread_id,
        verdict=decision.verdict == "pass",
        note=decision.note or None,
        labeler=decision.reviewer or labeler,
        labeled_at=when,
        source="review",
        metadata={
            "evaluation_thread": thread.thread_id,
            "score": payload.get("score"),
            "reasons": payload.get("reasons"),
        },
    )


def _when(thread: ThreadTrajectory, turn: int) -> datetime:
    """When the answer was given: the start of the turn it resumed (else now)."""
    started = thread.turns[turn].started_at if turn < len(thread.turns) else None
    try:
        found = datetime.fromisoformat(started) if started else None
    except ValueError:
        found = None
    if found is None:
        return datetime.now(UTC)
    return found if found.tzinfo is not None else found.replace(tzinfo=UTC)


def harvest_labels(
    graph: Any,
    threads: Iterable[str] | None = None,
    *,
    checkpointer: Any = None,
    key: str = ACTION_KEY,
    review_key: str = REVIEW_KEY,
    labeler: str = REVIEWER,
) -> list[Label]:
    """The labels of ``threads`` (every thread of the checkpointer when None) of a
    checkpointer: ``graph`` (compiled, a builder, a factory or ``module:attr``) bound to
    ``checkpointer`` (a saver or a URL; None: the graph's own).

    Raises:
        InvalidOptionError: no checkpointer, or ``graph`` cannot be bound to it.
        CheckpointerError: the checkpointer cannot be read.
    """
    with ExitStack() as stack:
        saver: Any
        if isinstance(checkpointer, str):
            saver = stack.enter_context(open_checkpointer(checkpointer))
        else:
            saver = (
                checkpointer if checkpointer is not None else getattr(graph, "checkpointer", None)
            )
        if saver is None:
            raise InvalidOptionError(
                "checkpointer=None and the graph has none: pass checkpointer= (a saver or a "
                "URL), or a graph compiled with one."
            )
        bound = resolve_target(graph, saver)
        ids = threads if threads is not None else _every_thread(saver)
        labels = []
        for thread_id in ids:
            thread = extract_thread(bound, thread_config(thread_id))
            labels.extend(
                labels_from_thread(thread, key=key, review_key=review_key, labeler=labeler)
            )
        return labels


def _every_thread(saver: Any) -> list[str]:
    """Every thread id of ``saver``, in id order (its own listing: any saver)."""
    return sorted({str(item.config["configurable"]["thread_id"]) for item in saver.list(None)})


def harvest_server_labels(
    server: ServerConnection | str,
    threads: Iterable[str] | None = None,
    *,
    graph: Any = None,
    assistant_id: str | None = None,
    key: str = ACTION_KEY,
    review_key: str = REVIEW_KEY,
    labeler: str = REVIEWER,
) -> list[Label]:
    """The labels of ``threads`` of a LangGraph Server (every thread, or those of
    ``assistant_id``, when None), read through its threads API; ``graph`` as
    :func:`lg_eval.server.extract_server_thread` takes it.

    Raises:
        ServerError: the server cannot be reached or refuses.
    """
    connection = server if isinstance(server, ServerConnection) else ServerConnection(server)
    if threads is None:
        pages = list_server_threads(connection, assistant_id=assistant_id)
        threads = [str(found.thread_id) for page in pages for found in page]
    labels = []
    for thread_id in threads:
        thread = extract_server_thread(connection, thread_id, graph=graph)
        labels.extend(labels_from_thread(thread, key=key, review_key=review_key, labeler=labeler))
    return labels
