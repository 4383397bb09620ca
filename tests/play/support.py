"""A support agent and scripted simulated users for the simulated-conversation tests.

The agent is a real LangGraph graph whose "model" is plain Python, so every test can
state exactly what it answers: it asks for the order number, then for the reason, then
calls ``refund`` (a tool node) and confirms. With ``approval=True`` an ``approve`` node
asks a human (``interrupt()``) before the refund runs. ``stubborn`` never helps.

The simulated users are scripted chat models (:class:`tests.judges.fake_judge.
ScriptedJudge`, which binds tools as a real model does) whose reply is a function of the
prompt they are shown: what they say next depends only on the conversation, so they give
the same turns in any order, in any process, after any kill. Each call can be logged to
``LOG`` (fsynced) for the crash tests.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypedDict

from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import interrupt

from lg_eval.judges import create_user_frustration_judge
from lg_eval.messages import message_text
from tests.experiments.graphs import record_start
from tests.judges.fake_judge import ScriptedJudge, verdict

AGENT_USAGE = {"input_tokens": 20, "output_tokens": 10, "total_tokens": 30}
USER_USAGE = {"input_tokens": 50, "output_tokens": 8, "total_tokens": 58}
ASK_ORDER = "I can help with that. What is your order number?"
DONE = "Your refund for order {order} is on its way."
DECLINED = "I'm sorry, the refund for order {order} was declined."
REFUSAL = "I'm sorry, I cannot help with refunds."

Hook = Callable[[str, dict[str, Any], RunnableConfig], None]
"""Called as ``hook(node, state, config)`` when a node starts (the crash tests kill there)."""

LOG: list[Path] = []
"""Where every node start and user call is logged, when a test sets it."""


def log(text: str) -> None:
    for path in LOG:
        record_start(path, text)


class SupportState(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    order_id: str
    reason: str
    approval: str
    refunded: bool


def _said(state: SupportState) -> str:
    humans = [m for m in state["messages"] if isinstance(m, HumanMessage)]
    return message_text(humans[-1]) if humans else ""


def build(
    checkpointer: BaseCheckpointSaver[Any] | None = None,
    *,
    approval: bool = False,
    stubborn: bool = False,
    hook: Hook | None = None,
) -> CompiledStateGraph:
    """The support agent (see the module text)."""

    def started(node: str, state: SupportState, config: RunnableConfig) -> None:
        thread = str((config.get("configurable") or {}).get("thread_id", ""))
        case = thread.split(":")[1] if thread.count(":") >= 3 else thread
        log(f"{node}:{case}:{_said(state)}")
        if hook is not None:
            hook(node, dict(state), config)

    def agent(state: SupportState, config: RunnableConfig) -> dict[str, Any]:
        started("agent", state, config)
        last = state["messages"][-1]
        order = state.get("order_id", "")
        if stubborn:
            return {"messages": [AIMessage(REFUSAL, usage_metadata=AGENT_USAGE)]}
        if isinstance(last, ToolMessage):
            text = (DONE if last.content == "refunded" else DECLINED).format(order=order)
            return {
                "messages": [AIMessage(text, usage_metadata=AGENT_USAGE)],
                "refunded": last.content == "refunded",
            }
        said = _said(state)
        if not order:
            found = re.search(r"\d+", said)
            if found is None:
                return {"messages": [AIMessage(ASK_ORDER, usage_metadata=AGENT_USAGE)]}
            ask = f"Why would you like a refund for order {found.group()}?"
            return {
                "order_id": found.group(),
                "messages": [AIMessage(ask, usage_metadata=AGENT_USAGE)],
            }
        call = {
            "name": "refund",
            "args": {"order_id": order, "reason": said},
            "id": f"call_refund_{order}",
        }
        return {
            "reason": said,
            "messages": [AIMessage("", tool_calls=[call], usage_metadata=AGENT_USAGE)],
        }

    def approve(state: SupportState, config: RunnableConfig) -> dict[str, Any]:
        started("approve", state, config)
        answer = interrupt({"question": f"Approve a refund for order {state['order_id']}?"})
        return {"approval": str(answer)}

    def tools(state: SupportState, config: RunnableConfig) -> dict[str, Any]:
        started("tools", state, config)
        call = state["messages"][-1].tool_calls[0]  # type: ignore[union-attr]
        granted = not approval or state.get("approval", "").lower().startswith("yes")
        result = "refunded" if granted else "declined"
        return {"messages": [ToolMessage(result, tool_call_id=call["id"], name="refund")]}

    def route(state: SupportState) -> str:
        last = state["messages"][-1]
        if isinstance(last, AIMessage) and last.tool_calls:
            return "approve" if approval else "tools"
        return END

    builder = StateGraph(SupportState)
    builder.add_node("agent", agent)
    builder.add_node("tools", tools)
    builder.add_edge(START, "agent")
    builder.add_conditional_edges(
        "agent", route, ["approve", "tools", END] if approval else ["tools", END]
    )
    if approval:
        builder.add_node("approve", approve)
        builder.add_edge("approve", "tools")
    builder.add_edge("tools", "agent")
    return builder.compile(checkpointer=checkpointer)


def approving(checkpointer: BaseCheckpointSaver[Any] | None = None) -> CompiledStateGraph:
    """The support agent whose refunds a human approves first."""
    return build(checkpointer, approval=True)


def stubborn(checkpointer: BaseCheckpointSaver[Any] | None = None) -> CompiledStateGraph:
    """An agent that never helps."""
    return build(checkpointer, stubborn=True)


def refunded(values: Any) -> bool:
    """The stop predicate: the refund went through."""
    return bool(values.get("refunded"))


def served(config: RunnableConfig | None = None) -> CompiledStateGraph:
    """What ``langgraph dev`` serves (the server brings its own checkpointer)."""
    return build()


# --- simulated users ---------------------------------------------------------------------

_ids = itertools.count(1)


def turn(message: str, *, done: bool = False) -> AIMessage:
    """A ``user_turn`` tool call, with the simulator's token usage."""
    args = {"message": message, "done": done}
    call = {"name": "user_turn", "args": args, "id": f"user_{next(_ids)}"}
    return AIMessage("", tool_calls=[call], usage_metadata=USER_USAGE)


def prompt(messages: list[BaseMessage]) -> str:
    """The user's prompt: its first human message (a model without tool calling is sent
    one more, asking for JSON)."""
    return message_text(next(m for m in messages if isinstance(m, HumanMessage)))


def agent_lines(messages: list[BaseMessage]) -> list[str]:
    """What the agent said, as the user's prompt shows it (``<agent>`` elements)."""
    return re.findall(r"<agent>\n(.*?)\n</agent>", prompt(messages), re.S)


def asked(messages: list[BaseMessage]) -> bool:
    """Whether the agent waits for the user's answer to a question."""
    return prompt(messages).endswith("answer them.")


def customer(messages: list[BaseMessage]) -> AIMessage:
    """A customer with a broken blender: order 42; done once the refund is on its way."""
    said = agent_lines(messages)
    last = said[-1] if said else ""
    log(f"user:{last}")
    if asked(messages):
        return turn("Yes, please refund it.")
    if not said:
        return turn("Hi, I want a refund for my blender.")
    if "order number" in last:
        return turn("It's order 42.")
    if last.startswith("Why"):
        return turn("It arrived broken.")
    if "on its way" in last or "declined" in last:
        return turn("Thanks, that's all I needed.", done=True)
    return turn("Sorry, what do you mean?")


def quitter(messages: list[BaseMessage]) -> AIMessage:
    """A customer who gives up after the agent refuses twice."""
    said = agent_lines(messages)
    log(f"user:{said[-1] if said else ''}")
    if sum(line == REFUSAL for line in said) >= 2:
        return turn("This is useless, I give up.", done=True)
    if said:
        return turn("Please, I really need a refund for order 42.")
    return turn("Hi, I want a refund for order 42.")


def insistent(messages: list[BaseMessage]) -> AIMessage:
    """A customer who never says the conversation is over (only a stop condition ends it)."""
    said = agent_lines(messages)
    if said and "on its way" in said[-1]:
        return turn("Great, and when will it arrive?")
    return customer(messages)


def scripted(reply: Callable[[list[BaseMessage]], AIMessage]) -> ScriptedJudge:
    """A tool-calling chat model answering every call with ``reply(messages)``."""
    return ScriptedJudge.of(reply, repeat_last=True)


def customer_model() -> ScriptedJudge:
    return scripted(customer)


def quitter_model() -> ScriptedJudge:
    return scripted(quitter)


def insistent_model() -> ScriptedJudge:
    return scripted(insistent)


# --- a frustration judge ----------------------------------------------------------------


def _frustration(messages: list[BaseMessage]) -> AIMessage:
    """Calm 5 unless the user gave up (``give up`` in the conversation it reads): then 1."""
    gave_up = "give up" in message_text(messages[-1])
    reasoning = "The user gave up." if gave_up else "The user stayed calm."
    return verdict(calm={"reasoning": reasoning, "score": 1 if gave_up else 5})


FRUSTRATION_MODEL = scripted(_frustration)
frustration = create_user_frustration_judge(judge=FRUSTRATION_MODEL)
"""The ``user_frustration`` judge on a scripted model (``tests.play.support:frustration``)."""


# --- a simulated user over HTTP -----------------------------------------------------------

USER_URL_ENV = "LG_EVAL_TEST_USER_URL"
"""The base URL of the chat-completions server :func:`openai_user` talks to."""


def openai_user() -> Any:
    """``langchain-openai``'s ``ChatOpenAI`` pointed at the test's loopback server."""
    import os

    from langchain_openai import ChatOpenAI

    return ChatOpenAI(
        model="gpt-4o-mini",
        base_url=os.environ[USER_URL_ENV],
        api_key="sk-test-not-a-real-key",  # type: ignore[arg-type]
        max_retries=0,
    )


def served_approving(config: RunnableConfig | None = None) -> CompiledStateGraph:
    """What ``langgraph dev`` serves as the approving agent."""
    return build(approval=True)
