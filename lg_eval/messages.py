"""Read chat messages in any shape a user has at hand, and the tool calls inside them.

Agents leave their work as messages: LangChain ``BaseMessage`` objects, OpenAI
chat dicts (``tool_calls[].function.arguments`` as a JSON string), LangChain
dicts (``tool_calls[].args`` as a dict), a graph state holding ``"messages"``,
or a checkpointed thread. :func:`to_openai_messages` turns all of them into one
shape (OpenAI-style dicts) so every evaluator reads a single format, and the
helpers below pull out what evaluations need: the ordered tool calls, and the
ReAct steps (thought, action, observation) with the final answer.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from contextvars import ContextVar
from typing import Any, TypedDict

from langchain_core.messages import BaseMessage, convert_to_openai_messages
from pydantic import BaseModel, Field

from lg_eval._effects import Core, Effect, adrive, drive
from lg_eval._reviews import any_edit, edits, reviews
from lg_eval._tool_results import (
    HARNESS_SOURCE,
    as_run,
    executed_calls,
    harness_source,
    tool_results,
)
from lg_eval._trajectory import GraphTrajectory, ThreadTrajectory
from lg_eval._usage import token_usage
from lg_eval.errors import (
    CheckpointNotFoundError,
    InvalidConfigError,
    MissingCheckpointerError,
    ThreadNotFoundError,
    TrajectoryFormatError,
)

_EXPECTED = (
    "a list of messages (LangChain messages, OpenAI-style dicts or LangChain-style dicts), "
    "a state dict with a 'messages' key, or a ThreadTrajectory"
)


class ToolCall(TypedDict):
    """One tool call an agent made: the tool's name, its decoded arguments, the call id."""

    name: str
    args: dict[str, Any]
    id: str | None


class CallOutcome(TypedDict):
    """A tool call the model proposed, and the call its tool ran (``None``: it did not run).

    The two differ when a reviewer edited the call: the AI message keeps the proposal, the
    tool ran the reviewer's call."""

    proposed: ToolCall
    executed: ToolCall | None


class ReactStep(BaseModel):
    """One (thought, action, observation) step of a ReAct loop."""

    index: int = Field(description="Position of the step among all steps, from 0.")
    message_index: int = Field(description="Index of the AI message that made the call.")
    thought: str = Field(default="", description="Text content of that AI message.")
    action: str = Field(description="The tool called.")
    args: dict[str, Any] = Field(default_factory=dict)
    tool_call_id: str | None = None
    observation: str | None = Field(
        default=None, description="Content of the tool message answering the call, if any."
    )


class ReactTrace(BaseModel):
    """What an agent did, as ReAct steps, and what it answered in the end."""

    query: str | None = Field(default=None, description="Text of the first user message.")
    steps: list[ReactStep] = Field(default_factory=list)
    final_answer: str | None = Field(
        default=None, description="Text of the last AI message that made no tool call."
    )

    @property
    def tools_used(self) -> list[str]:
        """Tool names in call order, repeats included."""
        return [step.action for step in self.steps]


# --------------------------------------------------------------------------- normalizing


def to_openai_messages(value: Any, *, argument: str = "outputs") -> list[dict[str, Any]]:
    """Normalize any supported message container to a list of OpenAI-style message dicts.

    Accepts LangChain messages, OpenAI-format dicts, LangChain-format dicts, a
    state dict (or ``StateSnapshot``) holding ``"messages"``, an ``{"outputs": ...}``
    envelope, or a :class:`ThreadTrajectory` (its latest state's messages).
    Assistant messages keep ``id`` and gain ``usage_metadata`` when token usage
    is known, so budget evaluators can read it. ``argument`` names the caller's
    parameter in error messages.

    Raises:
        TrajectoryFormatError: the value, or one of its messages, has another shape.
    """
    items = _message_items(value, argument)
    shared, key = _SHARED.get(), tuple(map(id, items))  # kept with the items: ids stay theirs
    if shared is not None and key in shared:
        return list(map(_copied, shared[key][1]))
    together = _converted_together(items)
    if together is None:
        converted = [_to_openai(item, index, argument) for index, item in enumerate(items)]
    else:
        converted = [
            _finish(item, message, f"{argument}[{index}]")
            for index, (item, message) in enumerate(zip(items, together, strict=True))
        ]
    if shared is not None:  # kept as a copy: the caller may change what it is given
        shared[key] = (items, list(map(_copied, converted)))
    return converted


_Shared = dict[tuple[int, ...], tuple[list[Any], list[dict[str, Any]]]]
_SHARED: ContextVar[_Shared | None] = ContextVar("lg_eval_shared_conversions", default=None)


@contextmanager
def _shared_conversions() -> Iterator[None]:
    """Inside, :func:`to_openai_messages` converts a list of the same message objects once
    and gives each caller its own copy (a thread's scoring reads them several times). For a
    scope whose messages are not changed in place."""
    token = _SHARED.set({})
    try:
        yield
    finally:
        with suppress(ValueError):  # a generator closed from another context
            _SHARED.reset(token)


def _copied(value: Any) -> Any:
    """``value`` with its dicts and lists copied, as a conversion makes them anew."""
    if type(value) is dict:
        return {k: _copied(v) if type(v) in (dict, list) else v for k, v in value.items()}
    if type(value) is list:
        return [_copied(v) if type(v) in (dict, list) else v for v in value]
    return value


def _converted_together(items: list[Any]) -> list[dict[str, Any]] | None:
    """LangChain messages with text content converted in one call (what one call per
    message gives, without its per-call overhead); ``None`` where that is not certain (a
    message with content blocks may convert to several, or none) or the call raised (then
    each message is converted alone, for an error naming the message)."""
    if len(items) < 2 or not all(
        isinstance(item, BaseMessage) and isinstance(item.content, str) for item in items
    ):
        return None
    try:
        converted = convert_to_openai_messages(items)
    except Exception:
        return None
    return converted if len(converted) == len(items) else None


def _message_items(value: Any, argument: str) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, ThreadTrajectory):
        return _message_items(_latest_state(value, argument), argument)
    if isinstance(value, GraphTrajectory):
        raise TrajectoryFormatError(
            f"{argument} is a GraphTrajectory, which records node names but no messages; "
            f"pass {_EXPECTED}."
        )
    if isinstance(value, BaseMessage):
        return [value]
    if isinstance(value, Mapping):
        if "role" in value or ("type" in value and "content" in value):
            return [value]
        for key in ("messages", "outputs", "thread"):  # "thread": what lg_eval hands over
            if key in value:
                return _message_items(value[key], f"{argument}[{key!r}]")
        raise TrajectoryFormatError(
            f"{argument} is a dict with keys {sorted(map(str, value))} but no 'messages' "
            f"or 'role'; expected {_EXPECTED}."
        )
    if isinstance(value, list | tuple):
        return list(value)
    state = getattr(value, "values", None)  # a LangGraph StateSnapshot
    if isinstance(state, Mapping):
        return _message_items(state, argument)
    if hasattr(value, "messages"):
        return _message_items(value.messages, argument)
    raise TrajectoryFormatError(f"{argument} is a {type(value).__name__}; expected {_EXPECTED}.")


def _latest_state(thread: ThreadTrajectory, argument: str) -> Any:
    for turn in reversed(thread.turns):
        state = turn.state
        if isinstance(state, Mapping) and "messages" in state:
            return state
        if hasattr(state, "messages"):
            return state
    raise TrajectoryFormatError(
        f"{argument} is a ThreadTrajectory whose turns hold no state with 'messages' (its "
        "graph keeps none, or it was extracted without its state); pass the messages directly."
    )


def _to_openai(item: Any, index: int, argument: str) -> dict[str, Any]:
    where = f"{argument}[{index}]"
    if isinstance(item, Mapping):
        prepared: Any = _prepare_dict(item, where)
    elif isinstance(item, BaseMessage | str | tuple):
        prepared = item
    else:
        raise TrajectoryFormatError(
            f"{where} is a {type(item).__name__}; expected a message "
            "(LangChain message, OpenAI-style dict or LangChain-style dict)."
        )
    try:
        converted = convert_to_openai_messages([prepared])[0]
    except Exception as exc:  # LangChain raises ValueError, KeyError, ValidationError...
        raise TrajectoryFormatError(
            f"{where} could not be read as a chat message ({exc}). Expected an OpenAI-style "
            "dict such as {'role': 'assistant', 'content': '...', 'tool_calls': [...]}."
        ) from exc
    return _finish(item, converted, where)


def _finish(item: Any, converted: dict[str, Any], where: str) -> dict[str, Any]:
    """``converted`` (LangChain's conversion of ``item``) with the message's id and token
    usage, which the conversion leaves out."""
    message_id = item.get("id") if isinstance(item, Mapping) else getattr(item, "id", None)
    if message_id is not None and converted.get("id") is None:
        converted["id"] = message_id
    usage = token_usage(item, where)
    if usage is not None and converted.get("role") == "assistant":
        converted["usage_metadata"] = usage
    if converted.get("role") == "tool":
        source = harness_source(item)
        if source is not None:  # answered in the tool's place: see lg_eval._tool_results
            converted[HARNESS_SOURCE] = source
    return converted


def _prepare_dict(item: Mapping[str, Any], where: str) -> dict[str, Any]:
    """Fill the gaps LangChain's converter would choke on, and check tool-call arguments."""
    message = dict(item)
    if message.get("content") is None:
        message["content"] = ""
    role = message.get("role", message.get("type"))
    if role == "tool" and message.get("tool_call_id") is None:
        message["tool_call_id"] = ""
    calls = message.get("tool_calls")
    if calls is not None and not isinstance(calls, list | tuple):
        raise TrajectoryFormatError(
            f"{where}.tool_calls is a {type(calls).__name__}; expected a list of tool calls."
        )
    if role in ("ai", "assistant") and calls:
        message["tool_calls"] = [
            _prepare_tool_call(call, f"{where}.tool_calls[{n}]")
            for n, call in enumerate(message["tool_calls"])
        ]
    return message


def _prepare_tool_call(call: Any, where: str) -> dict[str, Any]:
    if not isinstance(call, Mapping):
        raise TrajectoryFormatError(f"{where} is a {type(call).__name__}; expected a dict.")
    prepared = {**call, "id": call.get("id") or ""}
    function = call.get("function")
    if isinstance(function, Mapping):
        args = function.get("arguments")
        if isinstance(args, Mapping):
            check_depth(args, f"{where}: tool-call arguments")
            try:
                args = json.dumps(args)
            except (TypeError, ValueError) as exc:  # bytes, sets, circular references...
                raise TrajectoryFormatError(
                    f"{where}: tool-call arguments are not JSON-serializable ({exc})."
                ) from exc
        parse_arguments(args, where)
        prepared["function"] = {**function, "arguments": args}
    elif not isinstance(call.get("args", {}), Mapping):
        raise TrajectoryFormatError(f"{where}.args must be a dict of arguments.")
    else:
        check_depth(call.get("args", {}), f"{where}: tool-call arguments")
    return prepared


def parse_arguments(arguments: Any, where: str) -> dict[str, Any]:
    """Decode an OpenAI ``function.arguments`` JSON string into a dict.

    Raises:
        TrajectoryFormatError: the string is not JSON, or not a JSON object.
    """
    if arguments is None or arguments == "" or arguments == b"":
        return {}
    try:
        decoded = json.loads(arguments) if isinstance(arguments, str | bytes) else arguments
    except json.JSONDecodeError as exc:
        raise TrajectoryFormatError(
            f"{where}: tool-call arguments are not valid JSON ({exc.msg} at position "
            f"{exc.pos}): {str(arguments)[:80]!r}. Arguments must be a JSON object string."
        ) from exc
    except UnicodeDecodeError as exc:
        raise TrajectoryFormatError(
            f"{where}: tool-call arguments are bytes that are not UTF-8 text ({exc.reason} at "
            f"byte {exc.start}). Arguments must be a JSON object string."
        ) from exc
    except (ValueError, RecursionError) as exc:  # a number past int's digit limit; deep nesting
        raise TrajectoryFormatError(
            f"{where}: tool-call arguments could not be decoded ({type(exc).__name__}: "
            f"{str(exc)[:80]}). Arguments must be a JSON object string."
        ) from exc
    if not isinstance(decoded, dict):
        raise TrajectoryFormatError(
            f"{where}: tool-call arguments decode to a {type(decoded).__name__}, "
            "expected a JSON object."
        )
    check_depth(decoded, f"{where}: tool-call arguments")
    return decoded


MAX_ARGS_DEPTH = 100
"""How deeply tool-call arguments may nest (dicts and lists); deeper ones are refused."""


def check_depth(value: Any, what: str, limit: int = MAX_ARGS_DEPTH) -> None:
    """Refuse ``value`` when its dicts and lists nest deeper than ``limit`` (checked without
    recursion, so any depth is reported, never a ``RecursionError``)."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, Mapping):
            children: Any = item.values()
        elif isinstance(item, list | tuple):
            children = item
        else:
            continue
        if depth >= limit:
            raise TrajectoryFormatError(
                f"{what} nest more than {limit} levels deep; lg_eval compares arguments up to "
                f"{limit} levels of dicts and lists."
            )
        stack.extend((child, depth + 1) for child in children)


def message_text(message: Mapping[str, Any] | BaseMessage) -> str:
    """The text of an OpenAI-style message (text blocks joined, other blocks skipped).

    Raises:
        TrajectoryFormatError: ``message`` is neither a message dict nor a LangChain message.
    """
    if isinstance(message, BaseMessage):
        return message.text
    if not isinstance(message, Mapping):
        raise TrajectoryFormatError(
            f"message is a {type(message).__name__}; message_text expects a message dict such "
            "as {'role': 'assistant', 'content': '...'} or a LangChain message."
        )
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            block if isinstance(block, str) else str(block.get("text", ""))
            for block in content
            if isinstance(block, str) or (isinstance(block, Mapping) and "text" in block)
        ]
        return "".join(parts)
    return "" if content is None else str(content)


# --------------------------------------------------------------------------- tool calls


def tool_calls_from_messages(messages: Any) -> list[ToolCall]:
    """The tool calls in a message history, in call order, as plain dicts.

    Accepts every shape :func:`to_openai_messages` does. System messages and
    AI messages with an empty ``tool_calls`` list contribute nothing.

    Raises:
        TrajectoryFormatError: a message is malformed; for a tool call whose
            arguments are not a JSON object, the message names its index.
    """
    return tool_calls_from_openai(to_openai_messages(messages, argument="messages"))


def tool_calls_from_openai(messages: list[dict[str, Any]]) -> list[ToolCall]:
    """The tool calls of already-normalized OpenAI-style messages."""
    return [call for _, call in iter_tool_calls(messages)]


def iter_tool_calls(messages: list[dict[str, Any]]) -> Iterator[tuple[int, ToolCall]]:
    """Each tool call with the index of the message that made it.

    Raises:
        TrajectoryFormatError: ``messages`` is not a list of normalized message dicts
            (:func:`to_openai_messages` makes one), or a tool call is malformed.
    """
    if not isinstance(messages, list | tuple):
        raise TrajectoryFormatError(
            f"messages is a {type(messages).__name__}; expected a list of OpenAI-style message "
            "dicts (normalize other shapes with to_openai_messages)."
        )
    for index, message in enumerate(messages):
        if not isinstance(message, Mapping):
            raise TrajectoryFormatError(
                f"messages[{index}] is a {type(message).__name__}; expected an OpenAI-style "
                "message dict (normalize other shapes with to_openai_messages)."
            )
        calls = message.get("tool_calls") or []
        if not isinstance(calls, list | tuple):
            raise TrajectoryFormatError(
                f"messages[{index}]['tool_calls'] is a {type(calls).__name__}; expected a list."
            )
        for n, call in enumerate(calls):
            where = f"message {index} (tool call {n})"
            function = call.get("function") if isinstance(call, Mapping) else None
            if not isinstance(function, Mapping):
                raise TrajectoryFormatError(
                    f"{where} is not an OpenAI-style tool call "
                    "{'id': ..., 'function': {'name': ..., 'arguments': '...'}}."
                )
            name = function.get("name")
            if not isinstance(name, str) or not name:
                raise TrajectoryFormatError(f"{where} has no tool name (a non-empty string).")
            args = parse_arguments(function.get("arguments"), where)
            call_id = call.get("id")
            yield (
                index,
                ToolCall(name=name, args=args, id=call_id if isinstance(call_id, str) else None),
            )


def call_outcomes(value: Any, *, argument: str = "messages") -> list[CallOutcome]:
    """Each tool call the model proposed, in call order, with the call its tool ran.

    A call ran when a tool message answers it that the harness did not write in the tool's
    place (:func:`executed_calls`). It ran as proposed unless a reviewer edited it, which
    ``HumanInTheLoopMiddleware`` records in two places lg_eval reads: the note at the head
    of the call's result (``... Executed instead: <name> with arguments <JSON>.``, on by
    default), and, when ``value`` is a :class:`ThreadTrajectory`, the ``edit`` decision its
    resume turns answered the call's question with (which holds with the note turned off,
    ``edit_notice=None``). The note wins where both are found: it says what ran.
    ``argument`` names ``value`` in error messages.

    Raises:
        TrajectoryFormatError: ``value`` is no message shape :func:`to_openai_messages`
            reads, or a call or an edited call is malformed.
    """
    messages = to_openai_messages(value, argument=argument)
    made = list(iter_tool_calls(messages))
    calls = [call for _, call in made]
    results = tool_results(messages)
    decided = {}
    if isinstance(value, ThreadTrajectory) and any_edit(value):
        decided = edits(reviews(value, messages, made, results))
    outcomes: list[CallOutcome] = []
    for position, (call, done) in enumerate(
        zip(calls, as_run(calls, results, decided), strict=True)
    ):
        executed = (
            None if done is None else ToolCall(name=done["name"], args=done["args"], id=call["id"])
        )
        if executed is not None and executed != call:  # a reviewer's, or a note's, arguments
            check_depth(executed["args"], f"tool call {position} as edited: its arguments")
        outcomes.append(CallOutcome(proposed=call, executed=executed))
    return outcomes


# --------------------------------------------------------------------------- ReAct steps


def react_steps_from_messages(messages: Any) -> ReactTrace:
    """Split a message history into ReAct steps and the final answer.

    Each tool call becomes a step whose thought is its AI message's text and
    whose observation is the content of the tool message answering it (paired by
    ``tool_call_id``; a tool message without a known id answers the earliest
    unanswered call of the latest AI message that made calls). Parallel calls
    share a thought; an unanswered call keeps ``observation=None``; system
    messages are skipped.
    """
    normalized = to_openai_messages(messages, argument="messages")
    answers = tool_results(normalized)
    steps: list[ReactStep] = []
    query: str | None = None
    final_answer: str | None = None
    for index, message in enumerate(normalized):
        role = message.get("role")
        if role == "user" and query is None:
            query = message_text(message)
        elif role == "assistant":
            calls = [call for _, call in iter_tool_calls([message])]
            if not calls:
                final_answer = message_text(message)
            for call in calls:
                answer = answers.get(len(steps))
                steps.append(
                    ReactStep(
                        index=len(steps),
                        message_index=index,
                        thought=message_text(message),
                        action=call["name"],
                        args=call["args"],
                        tool_call_id=call["id"] or None,
                        observation=None if answer is None else message_text(answer),
                    )
                )
    return ReactTrace(query=query, steps=steps, final_answer=final_answer)


# --------------------------------------------------------------------------- threads


def tool_calls_from_thread(
    graph: Any, config: Mapping[str, Any], *, messages_key: str = "messages"
) -> list[ToolCall]:
    """The tool calls in a checkpointed thread's current state (or the checkpoint named
    by ``config["configurable"]["checkpoint_id"]``).

    Raises:
        MissingCheckpointerError: the graph was compiled without a checkpointer.
        InvalidConfigError: ``config`` has no ``configurable.thread_id``.
        ThreadNotFoundError: the checkpointer holds nothing for the thread.
        CheckpointNotFoundError: the requested checkpoint is not in the thread.
    """
    return tool_calls_from_messages(drive(_thread_messages(graph, config, messages_key)))


async def atool_calls_from_thread(
    graph: Any, config: Mapping[str, Any], *, messages_key: str = "messages"
) -> list[ToolCall]:
    """Async twin of :func:`tool_calls_from_thread` (reads with ``graph.aget_state``)."""
    return tool_calls_from_messages(await adrive(_thread_messages(graph, config, messages_key)))


def _thread_messages(graph: Any, config: Mapping[str, Any], messages_key: str) -> Core[Any]:
    if getattr(graph, "checkpointer", None) in (None, False):
        raise MissingCheckpointerError(
            "The graph has no checkpointer, so there is no thread to read. Compile it with "
            "one, e.g. builder.compile(checkpointer=InMemorySaver())."
        )
    configurable = config.get("configurable") if isinstance(config, Mapping) else None
    if not isinstance(configurable, Mapping) or not configurable.get("thread_id"):
        raise InvalidConfigError(
            "config has no thread_id; pass {'configurable': {'thread_id': '<your thread>'}}, "
            "the same config you invoked the graph with."
        )
    snapshot = yield Effect(lambda: graph.get_state(config), lambda: graph.aget_state(config))
    if not snapshot.values and snapshot.created_at is None:
        thread_id = configurable["thread_id"]
        if configurable.get("checkpoint_id"):
            raise CheckpointNotFoundError(
                f"Thread {thread_id!r} has no checkpoint {configurable['checkpoint_id']!r}; "
                "list valid ids with graph.get_state_history(config)."
            )
        raise ThreadNotFoundError(
            f"The checkpointer holds no checkpoints for thread {thread_id!r}; invoke the graph "
            "with this thread_id first, or check it for typos."
        )
    values = snapshot.values
    if not isinstance(values, Mapping) or messages_key not in values:
        keys = sorted(values) if isinstance(values, Mapping) else type(values).__name__
        raise TrajectoryFormatError(
            f"The thread's state has no {messages_key!r} key (it has {keys}); "
            "pass messages_key= naming the key that holds the messages."
        )
    return values[messages_key]


__all__ = [
    "HARNESS_SOURCE",
    "MAX_ARGS_DEPTH",
    "CallOutcome",
    "ReactStep",
    "ReactTrace",
    "ToolCall",
    "atool_calls_from_thread",
    "call_outcomes",
    "check_depth",
    "executed_calls",
    "message_text",
    "parse_arguments",
    "react_steps_from_messages",
    "to_openai_messages",
    "tool_calls_from_messages",
    "tool_calls_from_openai",
    "tool_calls_from_thread",
    "tool_results",
]
