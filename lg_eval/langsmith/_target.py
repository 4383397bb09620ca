"""``graph_target``: play an example's turns on a fresh thread, return what evaluators read.

An example's ``inputs`` hold a case's ``turns`` in the dataset format
(``input``, ``resume``, ``resume_by_node``, ``resume_fn``, ``continue``,
``update``), and, for a simulated conversation, its ``user`` (a persona, a goal, stop
conditions; the model writing its turns is the example's or ``user_model=``). The target
plays them with :func:`lg_eval.play.play_case` (the one
turn player; nothing here builds a ``Command``), extracts the thread and returns

``{"trajectory": GraphTrajectory dict, "thread": ThreadTrajectory dict,
"messages": [OpenAI-style dicts], "output": final answer text}``

so graph, HITL, tool-call, text and judge evaluators each find their field
(:data:`lg_eval._inputs.FIELD_KEYS`) without a wrapper.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager, nullcontext
from typing import TYPE_CHECKING, Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langsmith.run_helpers import tracing_context

from lg_eval._arguments import validated
from lg_eval._importing import import_reference
from lg_eval._inputs import text_arg
from lg_eval._offline import tracing_is_local
from lg_eval._trajectory import ThreadTrajectory
from lg_eval.errors import TrajectoryFormatError
from lg_eval.messages import to_openai_messages

if TYPE_CHECKING:
    from lg_eval.play import ScriptOptions

TargetOutputs = dict[str, Any]
"""What a graph target returns: ``trajectory``, ``thread``, ``messages``, ``output``."""

Checkpointer = str | BaseCheckpointSaver[Any] | None
"""A checkpointer URL (``memory://``, ``sqlite:///...``, ``postgresql://...``), a saver, or
``None`` for the embedded SQLite default."""


@validated
def outputs_of(thread: ThreadTrajectory, values: Any) -> TargetOutputs:
    """The target outputs of an extracted thread whose final state values are ``values``."""
    return _outputs(thread, values)


def _outputs(thread: ThreadTrajectory, values: Any) -> TargetOutputs:
    messages = _messages(values)
    output = text_arg(messages, "outputs") if messages else _answer(thread)
    return {
        "trajectory": thread.to_graph_trajectory().model_dump(mode="json"),
        "thread": thread.model_dump(mode="json"),
        "messages": messages,
        "output": output,
    }


def _messages(values: Any) -> list[dict[str, Any]]:
    if not (isinstance(values, Mapping) and values.get("messages")):
        return []
    try:
        return to_openai_messages(values["messages"], argument="state['messages']")
    except TrajectoryFormatError:
        return []


def _answer(thread: ThreadTrajectory) -> str | None:
    last = thread.turns[-1] if thread.turns else None
    if last is None or last.status != "completed":
        return None
    return text_arg(last.result, "outputs") if last.result else None


def case_from_inputs(inputs: Mapping[str, Any]) -> Any:
    """The :class:`lg_eval.datasets.Case` an example's ``inputs`` script."""
    from lg_eval.datasets import Case

    if not isinstance(inputs, Mapping) or not ("turns" in inputs or "user" in inputs):
        keys = ", ".join(repr(k) for k in inputs) if isinstance(inputs, Mapping) else "none"
        raise TrajectoryFormatError(
            "A graph target's example inputs hold the case's turns under 'turns' "
            f"(e.g. {{'turns': [{{'input': ...}}, {{'resume': ...}}]}}) or a simulated user "
            f"under 'user' ({{'user': {{'persona': ..., 'goal': ...}}}}); its keys: {keys}."
        )
    case_id = str(inputs.get("case_id") or "langsmith-example")
    data = {"id": case_id, "turns": inputs.get("turns") or []}
    if inputs.get("user") is not None:
        data["user"] = inputs["user"]
    return Case.model_validate(data)


def _options(reviewer: Any, allow_code: bool, user_model: Any) -> ScriptOptions:
    """How the player plays an example's case (the answer sources' options)."""
    return {"reviewer": reviewer, "allow_code": allow_code, "user_model": user_model}


def _thread_id(case: Any) -> str:
    return f"lg_eval:{case.id}:{uuid.uuid4().hex}"


def _quiet() -> Any:
    """Tracing off for the graph when the caller traces ``"local"`` (not uploading).

    ``evaluate(..., upload_results=False)`` marks its runs local, but LangChain's
    tracer takes ``"local"`` as on and would post every node and model run through
    the target run's client; the graph's runs are not needed locally.
    """
    return tracing_context(enabled=False) if tracing_is_local() else nullcontext()


@contextmanager
def _saver(checkpointer: Checkpointer) -> Iterator[Any]:
    if isinstance(checkpointer, BaseCheckpointSaver):
        yield checkpointer
        return
    from lg_eval.play import open_checkpointer

    with open_checkpointer(checkpointer) as saver:
        yield saver


@asynccontextmanager
async def _asaver(checkpointer: Checkpointer) -> AsyncIterator[Any]:
    if isinstance(checkpointer, BaseCheckpointSaver):
        yield checkpointer
        return
    from lg_eval.play import aopen_checkpointer

    async with aopen_checkpointer(checkpointer) as saver:
        yield saver


def play_outputs(
    target: Any,
    case: Any,
    *,
    checkpointer: Checkpointer = None,
    allow_code: bool = False,
    reviewer: Any = None,
    user_model: Any = None,
) -> TargetOutputs:
    """Play ``case`` on a fresh thread of ``target`` and return the target outputs."""
    from lg_eval.extract import extract_thread
    from lg_eval.play import play_case, resolve_target

    with _saver(checkpointer) as saver:
        graph = resolve_target(target, saver)
        with _quiet():
            options = _options(reviewer, allow_code, user_model)
            played = play_case(graph, case, thread_id=_thread_id(case), **options)
        config = played.config
        thread = extract_thread(graph, config)  # type: ignore[arg-type]
        values = graph.get_state(config).values  # type: ignore[arg-type]
    return _outputs(thread, values)


async def aplay_outputs(
    target: Any,
    case: Any,
    *,
    checkpointer: Checkpointer = None,
    allow_code: bool = False,
    reviewer: Any = None,
    user_model: Any = None,
) -> TargetOutputs:
    """Async twin of :func:`play_outputs`."""
    from lg_eval.extract import aextract_thread
    from lg_eval.play import aplay_case, resolve_target

    async with _asaver(checkpointer) as saver:
        graph = resolve_target(target, saver)
        with _quiet():
            options = _options(reviewer, allow_code, user_model)
            played = await aplay_case(graph, case, thread_id=_thread_id(case), **options)
        config = played.config
        thread = await aextract_thread(graph, config)  # type: ignore[arg-type]
        values = (await graph.aget_state(config)).values  # type: ignore[arg-type]
    return _outputs(thread, values)


def graph_target(
    target: Any,
    *,
    checkpointer: Checkpointer = None,
    allow_code: bool = False,
    reviewer: Any = None,
    user_model: Any = None,
) -> Callable[[dict[str, Any]], TargetOutputs]:
    """A ``langsmith.evaluate`` target playing each example's ``turns`` on a fresh thread.

    Args:
        target: the graph: ``"module:attr"`` naming a compiled graph, a ``StateGraph``
            builder or a factory called as ``attr(checkpointer=saver)``, or the object itself.
        checkpointer: where the threads are kept: a URL, a saver, or ``None`` for the
            embedded SQLite file ``.lg_eval/checkpoints.sqlite``.
        allow_code: whether ``resume_fn`` references in the examples' turns may be
            imported. Examples are remote data, so the default is ``False``.
        reviewer: the simulated reviewer answering ``resume: {reviewer: true}`` turns.
        user_model: the chat model (or ``"provider:model"``) writing the simulated user's
            turns of an example whose ``user`` names no model.

    Returns a function of the example's ``inputs`` returning the target outputs
    (``trajectory``, ``thread``, ``messages``, ``output``).

    Raises:
        InvalidOptionError: a ``"module:attr"`` target that does not import (raised here,
            not as an error on every row of the experiment).
    """
    graph = _imported(target)

    def run_graph_target(inputs: dict[str, Any]) -> TargetOutputs:
        return play_outputs(
            graph,
            case_from_inputs(inputs),
            checkpointer=checkpointer,
            allow_code=allow_code,
            reviewer=reviewer,
            user_model=user_model,
        )

    run_graph_target.__name__ = _name(target)
    return run_graph_target


def agraph_target(
    target: Any,
    *,
    checkpointer: Checkpointer = None,
    allow_code: bool = False,
    reviewer: Any = None,
    user_model: Any = None,
) -> Callable[[dict[str, Any]], Awaitable[TargetOutputs]]:
    """:func:`graph_target` for ``langsmith.aevaluate``: awaited, on an async checkpointer."""
    graph = _imported(target)

    async def run_graph_target(inputs: dict[str, Any]) -> TargetOutputs:
        return await aplay_outputs(
            graph,
            case_from_inputs(inputs),
            checkpointer=checkpointer,
            allow_code=allow_code,
            reviewer=reviewer,
            user_model=user_model,
        )

    run_graph_target.__name__ = _name(target)
    return run_graph_target


def _imported(target: Any) -> Any:
    """A ``"module:attr"`` target imported now (the caller named it: it is code it trusts),
    so a typo fails when the target is made; anything else as it is."""
    return import_reference(target, what="target") if isinstance(target, str) else target


def _name(target: Any) -> str:
    if isinstance(target, str):
        return target.rpartition(":")[2] or "graph_target"
    return str(getattr(target, "name", None) or getattr(target, "__name__", "graph_target"))
