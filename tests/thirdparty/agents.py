"""Real third-party agents, driven by scripted chat models: the corpus extraction is held
to (and that other tests may reuse).

Each builder compiles an agent from the package that users install — langchain's
``create_agent`` with its middleware, ``langgraph-supervisor``, ``langgraph-swarm``,
``deepagents``, a prebuilt ``ToolNode`` inside a subgraph — on a fresh
:class:`ToolCallingModel` per agent, so every build replays the same conversation. A model
binds its tools as a provider's chat model does (``bind_tools`` returns a binding that
carries the tools' JSON schemas to every call) and refuses a scripted tool call to a tool
it was not given, so a script cannot call what a real model could not see.

:data:`AGENTS` scripts one thread per agent as a :class:`graphs.scenarios.Scenario`: the
human's turns (inputs, answers, ``update_state`` edits, time travel) in order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from deepagents import create_deep_agent
from langchain.agents import create_agent
from langchain.agents.middleware import (
    HumanInTheLoopMiddleware,
    ModelCallLimitMiddleware,
    TodoListMiddleware,
)
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import tool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.types import Command, StateSnapshot, interrupt
from langgraph_supervisor import create_supervisor
from langgraph_swarm import create_handoff_tool, create_swarm

from graphs._scripted import ScriptedChatModel, ai, tool_call
from graphs.scenarios import Edit, Scenario, Turn


class UnboundToolError(AssertionError):
    """A scripted reply called a tool the agent did not bind to its model."""


class ToolCallingModel(ScriptedChatModel):
    """A scripted chat model that binds tools the way provider chat models do."""

    def bind_tools(  # type: ignore[override]
        self,
        tools: Sequence[Any],
        *,
        tool_choice: Any = None,
        parallel_tool_calls: bool | None = None,
        **kwargs: Any,
    ) -> Runnable[Any, BaseMessage]:
        """A binding that passes the tools' OpenAI schemas with every call."""
        kwargs["tools"] = [convert_to_openai_tool(t) for t in tools]
        if tool_choice is not None:
            kwargs["tool_choice"] = tool_choice
        if parallel_tool_calls is not None:
            kwargs["parallel_tool_calls"] = parallel_tool_calls
        return self.bind(**kwargs)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        result = super()._generate(messages, stop, run_manager, **kwargs)
        bound = {t["function"]["name"] for t in kwargs.get("tools", ())}
        reply = result.generations[0].message
        for call in getattr(reply, "tool_calls", ()):
            if call["name"] not in bound:
                raise UnboundToolError(
                    f"{self.name}: the script calls {call['name']!r}, but the agent bound "
                    f"only {sorted(bound)}"
                )
        return result


def model(name: str, *replies: AIMessage) -> ToolCallingModel:
    """A fresh :class:`ToolCallingModel` replaying ``replies`` in order."""
    return ToolCallingModel.from_messages(name, replies)


def user(content: str) -> dict[str, Any]:
    """An input with one user message (a fresh dict per turn)."""
    return {"messages": [{"role": "user", "content": content}]}


APPROVE = {"decisions": [{"type": "approve"}]}


# --- tools ------------------------------------------------------------------------------------


@tool
def search(query: str) -> str:
    """Search the web."""
    return f"3 results for {query}"


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@tool
def book_flight(flight: str) -> str:
    """Book a flight, once the traveller confirms it."""
    answer = interrupt({"question": f"Book {flight}?", "flight": flight})
    return f"{flight}: {answer}"


@tool
def delete_file(path: str) -> str:
    """Delete a file."""
    return f"deleted {path}"


@tool
def send_email(to: str, body: str) -> str:
    """Send an email."""
    return f"sent to {to}"


# --- langgraph-supervisor -------------------------------------------------------------------


def build_supervisor(checkpointer: BaseCheckpointSaver | None = None) -> CompiledStateGraph:
    """A supervisor that hands off to a research agent, then to a math agent whose ``add``
    the human confirms (an ``interrupt()`` inside an agent the supervisor invokes)."""

    @tool
    def confirmed_add(a: int, b: int) -> int:
        """Add two numbers once the human confirms."""
        return a + b if interrupt({"question": f"Add {a} and {b}?"}) == "yes" else 0

    research = create_agent(
        model(
            "research",
            ai("r1", "", tool_call("search", {"query": "GDP of France"}, "call-search")),
            ai("r2", "France's GDP is 3 trillion dollars."),
        ),
        tools=[search],
        name="research_expert",
        system_prompt="You research facts.",
    )
    math = create_agent(
        model(
            "math",
            ai("m1", "", tool_call("confirmed_add", {"a": 3, "b": 4}, "call-add")),
            ai("m2", "3 + 4 = 7."),
            ai("m3", "", tool_call("confirmed_add", {"a": 1, "b": 1}, "call-add-2")),
            ai("m4", "1 + 1 = 2."),
        ),
        tools=[confirmed_add],
        name="math_expert",
        system_prompt="You do math.",
    )
    supervisor = model(
        "supervisor",
        ai("s1", "", tool_call("transfer_to_research_expert", {}, "call-to-research")),
        ai("s2", "", tool_call("transfer_to_math_expert", {}, "call-to-math")),
        ai("s3", "France's GDP is 3 trillion dollars, and 3 + 4 = 7."),
        ai("s4", "", tool_call("transfer_to_math_expert", {}, "call-to-math-2")),
        ai("s5", "1 + 1 = 2."),
    )
    workflow = create_supervisor(
        [research, math], model=supervisor, prompt="You route work to your experts."
    )
    return workflow.compile(checkpointer=checkpointer)


SUPERVISOR_TURNS = [
    Turn(user("What is France's GDP, and what is 3 + 4?")),
    Turn(Command(resume="yes")),
    Turn(user("And 1 + 1?")),
    Turn(Command(resume="yes")),
]


# --- langgraph-swarm ----------------------------------------------------------------------------


def build_swarm(
    checkpointer: BaseCheckpointSaver | None = None, rerun: bool = False
) -> CompiledStateGraph:
    """``alice`` hands off to ``bob``, whose ``book_flight`` asks the traveller; the second
    request goes to ``bob`` directly (the swarm routes to the active agent). With ``rerun``,
    ``bob`` runs its second request twice (an ``update_state`` made while it waited
    re-plans it), so its model answers that request twice."""
    again = [ai("b3-again", "", tool_call("book_flight", {"flight": "BA456"}, "call-ba"))]
    alice = create_agent(
        model("alice", ai("a1", "", tool_call("transfer_to_bob", {}, "call-to-bob"))),
        tools=[create_handoff_tool(agent_name="bob")],
        name="alice",
        system_prompt="You are Alice; Bob books flights.",
    )
    bob = create_agent(
        model(
            "bob",
            ai("b1", "", tool_call("book_flight", {"flight": "AF123"}, "call-af")),
            ai("b2", "Booked AF123."),
            ai("b3", "", tool_call("book_flight", {"flight": "BA456"}, "call-ba")),
            *(again if rerun else []),
            ai("b4", "Booked BA456."),
        ),
        tools=[book_flight, create_handoff_tool(agent_name="alice")],
        name="bob",
        system_prompt="You are Bob; you book flights.",
    )
    return create_swarm([alice, bob], default_active_agent="alice").compile(
        checkpointer=checkpointer
    )


def build_swarm_rerun(checkpointer: BaseCheckpointSaver | None = None) -> CompiledStateGraph:
    return build_swarm(checkpointer, rerun=True)


SWARM_TURNS = [
    Turn(user("Book AF123 for me.")),
    Turn(Command(resume="yes")),
    Turn(user("And BA456.")),
    Turn(Command(resume="yes")),
]
SWARM_EDIT_TURNS = [
    *SWARM_TURNS[:3],
    Turn(Command(resume="yes"), edits=[Edit(user("A window seat, please."))]),
]


# --- deepagents ---------------------------------------------------------------------------------


def build_deep_agent(
    checkpointer: BaseCheckpointSaver | None = None, rerun: bool = False, gated: bool = True
) -> CompiledStateGraph:
    """A deep agent that plans with todos, delegates a deletion to the ``janitor`` subagent
    through ``task`` (the subagent's ``delete_file`` is gated by ``interrupt_on``), then
    sends a report the human approves (the main agent's own ``interrupt_on``; without
    ``gated``, the main agent has no human-in-the-loop node and sends nothing). With
    ``rerun``, the subagent runs twice (an ``update_state`` re-plans the ``task`` call)."""
    todos = [{"content": "delete tmp.txt", "status": "in_progress"}]
    janitor = [ai("j1", "", tool_call("delete_file", {"path": "tmp.txt"}, "call-delete"))]
    main = model(
        "main",
        ai("d1", "", tool_call("write_todos", {"todos": todos}, "call-todos")),
        ai(
            "d2",
            "",
            tool_call(
                "task",
                {"description": "Delete tmp.txt", "subagent_type": "janitor"},
                "call-task",
            ),
        ),
        *[
            ai(
                "d3",
                "",
                tool_call("send_email", {"to": "ops@example.com", "body": "done"}, "c-mail"),
            )
        ]
        * gated,
        ai("d4", "tmp.txt is deleted and ops know." if gated else "tmp.txt is deleted."),
    )
    subagent = {
        "name": "janitor",
        "description": "Deletes files.",
        "system_prompt": "You delete files.",
        "model": model("janitor", *janitor, *(janitor if rerun else []), ai("j2", "Deleted.")),
        "tools": [delete_file],
        "interrupt_on": {"delete_file": True},
    }
    return create_deep_agent(
        model=main,
        tools=[send_email],
        subagents=[subagent],  # type: ignore[list-item]
        middleware=[TodoListMiddleware()],
        interrupt_on={"send_email": True} if gated else None,
        checkpointer=checkpointer,
    )


def build_deep_agent_gated_subagent(
    checkpointer: BaseCheckpointSaver | None = None,
) -> CompiledStateGraph:
    return build_deep_agent(checkpointer, gated=False)


def build_deep_agent_rerun(checkpointer: BaseCheckpointSaver | None = None) -> CompiledStateGraph:
    return build_deep_agent(checkpointer, rerun=True)


DEEP_AGENT_TURNS = [
    Turn(user("Delete tmp.txt and tell ops.")),
    Turn(Command(resume=APPROVE)),
    Turn(Command(resume=APPROVE)),
]
DEEP_AGENT_EDIT_TURNS = [
    DEEP_AGENT_TURNS[0],
    Turn(Command(resume=APPROVE), edits=[Edit({"todos": []})]),
    DEEP_AGENT_TURNS[2],
]


# --- create_agent with middleware ---------------------------------------------------------------


def build_middleware_agent(checkpointer: BaseCheckpointSaver | None = None) -> CompiledStateGraph:
    """``create_agent`` with ``HumanInTheLoopMiddleware`` on ``send_email`` and
    ``delete_file``, next to middleware that adds nodes of its own (a model-call limit
    before and after the model, a todo list after it). The first request proposes two gated
    calls at once (one batched question); the human approves, then edits, then rejects."""
    email = {"to": "bob@example.com", "body": "Lunch on Friday?"}
    agent_model = model(
        "assistant",
        ai("h1", "", tool_call("search", {"query": "lunch spots"}, "call-search")),
        ai(
            "h2",
            "",
            tool_call("send_email", email, "call-mail"),
            tool_call("delete_file", {"path": "draft.txt"}, "call-delete"),
        ),
        ai("h3", "Sent, and the draft is gone."),
        ai("h4", "", tool_call("send_email", {"to": "all@example.com", "body": "Hi"}, "c-all")),
        ai("h5", "I asked the whole company."),
        ai("h6", "", tool_call("delete_file", {"path": "report.txt"}, "call-report")),
        ai("h7", "I kept report.txt."),
    )
    gated = {"allowed_decisions": ["approve", "edit", "reject"]}
    return create_agent(
        agent_model,
        tools=[search, send_email, delete_file],
        system_prompt="You are an assistant.",
        middleware=[
            ModelCallLimitMiddleware(run_limit=10),
            TodoListMiddleware(),
            HumanInTheLoopMiddleware(interrupt_on={"send_email": gated, "delete_file": gated}),
        ],
        checkpointer=checkpointer,
    )


def _edit(snapshot: StateSnapshot) -> Command:
    """Edit the pending ``send_email`` call: the whole team, not everyone."""
    request = snapshot.interrupts[0].value["action_requests"][0]
    edited = {"name": request["name"], "args": {**request["args"], "to": "team@example.com"}}
    return Command(resume={"decisions": [{"type": "edit", "edited_action": edited}]})


MIDDLEWARE_TURNS = [
    Turn(user("Find a lunch spot, email Bob, delete the draft.")),
    Turn(Command(resume={"decisions": [{"type": "approve"}, {"type": "approve"}]})),
    Turn(user("Tell everyone.")),
    Turn(from_state=_edit),
    Turn(user("Delete report.txt.")),
    Turn(Command(resume={"decisions": [{"type": "reject", "message": "Keep it."}]})),
]


def build_per_call_agent(checkpointer: BaseCheckpointSaver | None = None) -> CompiledStateGraph:
    """``create_agent`` with ``HumanInTheLoopMiddleware(interrupt_mode="per_call")``: each
    gated call asks its own question as its tool task starts (two parallel interrupts)."""
    agent_model = model(
        "assistant",
        ai(
            "c1",
            "",
            tool_call("send_email", {"to": "bob@example.com", "body": "Hi"}, "call-mail"),
            tool_call("delete_file", {"path": "tmp.txt"}, "call-delete"),
        ),
        ai("c2", "Emailed Bob; tmp.txt stays."),
    )
    return create_agent(
        agent_model,
        tools=[send_email, delete_file],
        system_prompt="You are an assistant.",
        middleware=[
            HumanInTheLoopMiddleware(
                interrupt_on={"send_email": True, "delete_file": True}, interrupt_mode="per_call"
            )
        ],
        checkpointer=checkpointer,
    )


def _decide_each(snapshot: StateSnapshot) -> Command:
    """Approve the email, reject the deletion: one answer per pending question, by id."""
    decisions = {}
    for pending in snapshot.interrupts:
        name = pending.value["name"]
        approve = name == "send_email"
        decisions[pending.id] = {"type": "approve"} if approve else {"type": "reject"}
    return Command(resume=decisions)


PER_CALL_TURNS = [Turn(user("Email Bob and delete tmp.txt.")), Turn(from_state=_decide_each)]


# --- static breakpoints and time travel ---------------------------------------------------------


def build_breakpoint_agent(checkpointer: BaseCheckpointSaver | None = None) -> CompiledStateGraph:
    """``create_agent`` compiled with ``interrupt_before=["tools"]``: every tool call waits
    for an ``invoke(None)``. The search runs twice (the continuation, then a replay from
    the stop), so the model answers after each."""
    return create_agent(
        model(
            "planner",
            ai("p1", "", tool_call("search", {"query": "flights to Rome"}, "call-search")),
            ai("p2", "Three flights to Rome."),
            ai("p3", "Still three flights to Rome."),
        ),
        tools=[search],
        system_prompt="You plan trips.",
        interrupt_before=["tools"],
        checkpointer=checkpointer,
    )


def _stopped_before_tools(history: list[StateSnapshot]) -> StateSnapshot:
    """The checkpoint where the first run stopped at the breakpoint (time travel target)."""
    return [s for s in history if s.next == ("tools",) and s.metadata["source"] == "loop"][-1]


BREAKPOINT_TURNS = [
    Turn(user("Find flights to Rome.")),
    Turn(None),
    Turn(None, at=_stopped_before_tools),
]


# --- a prebuilt ToolNode inside a subgraph ---------------------------------------------------


def build_toolnode_subgraph(
    checkpointer: BaseCheckpointSaver | None = None, rerun: bool = False
) -> CompiledStateGraph:
    """``intake -> assistant -> wrap_up``, where ``assistant`` is a subgraph of a model node
    and a prebuilt ``ToolNode`` whose ``book_flight`` asks the traveller. With ``rerun``,
    the subgraph runs twice (an ``update_state`` made while it waited re-plans it)."""
    booking = ai("t1", "", tool_call("book_flight", {"flight": "LH400"}, "call-lh"))
    chat = model("travel", booking, *([booking] if rerun else []), ai("t2", "Booked LH400."))
    bound = chat.bind_tools([book_flight])

    def call_model(state: MessagesState) -> dict[str, Any]:
        return {"messages": [bound.invoke(state["messages"])]}

    inner = StateGraph(MessagesState)
    inner.add_node("agent", call_model)
    inner.add_node("tools", ToolNode([book_flight]))
    inner.add_edge(START, "agent")
    inner.add_conditional_edges("agent", tools_condition)
    inner.add_edge("tools", "agent")

    outer = StateGraph(MessagesState)
    outer.add_node("intake", lambda state: {"messages": [("ai", "Let me look.")]})
    outer.add_node("assistant", inner.compile())
    outer.add_node("wrap_up", lambda state: {"messages": [("ai", "Anything else?")]})
    outer.add_edge(START, "intake")
    outer.add_edge("intake", "assistant")
    outer.add_edge("assistant", "wrap_up")
    return outer.compile(checkpointer=checkpointer)


def build_toolnode_subgraph_rerun(
    checkpointer: BaseCheckpointSaver | None = None,
) -> CompiledStateGraph:
    return build_toolnode_subgraph(checkpointer, rerun=True)


TOOLNODE_TURNS = [Turn(user("Book LH400.")), Turn(Command(resume="yes"))]
TOOLNODE_EDIT_TURNS = [
    TOOLNODE_TURNS[0],
    Turn(Command(resume="yes"), edits=[Edit(user("An aisle seat."))]),
]


def _scenario(
    name: str,
    description: str,
    build: Callable[..., CompiledStateGraph],
    turns: list[Turn],
    abandoned: tuple[int, ...] = (),
) -> Scenario:
    return Scenario(name, description, build, turns, abandoned=abandoned)


AGENTS: dict[str, Scenario] = {
    s.name: s
    for s in [
        _scenario(
            "supervisor",
            "langgraph-supervisor: handoffs to two experts; the math expert's tool asks.",
            build_supervisor,
            SUPERVISOR_TURNS,
        ),
        _scenario(
            "swarm",
            "langgraph-swarm: alice hands off to bob, whose booking tool asks the traveller.",
            build_swarm,
            SWARM_TURNS,
        ),
        _scenario(
            "swarm_edit_while_waiting",
            "langgraph-swarm: update_state on the root while bob's tool waits, then a resume.",
            build_swarm_rerun,
            SWARM_EDIT_TURNS,
        ),
        _scenario(
            "deep_agent",
            "deepagents: todos, a subagent behind task whose tool is gated, a gated tool.",
            build_deep_agent,
            DEEP_AGENT_TURNS,
        ),
        _scenario(
            "deep_agent_gated_subagent",
            "deepagents: only the subagent asks (its human-in-the-loop node is a node the "
            "main agent does not have).",
            build_deep_agent_gated_subagent,
            DEEP_AGENT_TURNS[:2],
        ),
        _scenario(
            "deep_agent_edit_while_waiting",
            "deepagents: update_state on the root while the subagent waits, then a resume.",
            build_deep_agent_rerun,
            DEEP_AGENT_EDIT_TURNS,
        ),
        _scenario(
            "middleware_agent",
            "create_agent with HumanInTheLoopMiddleware and middleware nodes: approve both "
            "calls of a batch, edit one, reject one.",
            build_middleware_agent,
            MIDDLEWARE_TURNS,
        ),
        _scenario(
            "per_call_agent",
            "create_agent with per-call HumanInTheLoopMiddleware: two gated calls, each "
            "answered by id in one resume.",
            build_per_call_agent,
            PER_CALL_TURNS,
        ),
        _scenario(
            "breakpoint_agent",
            "create_agent with interrupt_before=['tools']: continue, then replay from the stop.",
            build_breakpoint_agent,
            BREAKPOINT_TURNS,
            abandoned=(1,),
        ),
        _scenario(
            "toolnode_subgraph",
            "A prebuilt ToolNode inside a subgraph; its tool asks the traveller.",
            build_toolnode_subgraph,
            TOOLNODE_TURNS,
        ),
        _scenario(
            "toolnode_subgraph_edit_while_waiting",
            "update_state on the root while the subgraph's ToolNode waits, then a resume.",
            build_toolnode_subgraph_rerun,
            TOOLNODE_EDIT_TURNS,
        ),
    ]
}
"""One scripted thread per third-party agent."""
