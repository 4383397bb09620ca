"""Real prebuilt agents whose tool calls a human reviews, for the HITL and tool-call tests.

LangChain's ``create_agent`` with ``HumanInTheLoopMiddleware`` (``batched`` or
``per_call``), the same agent as a subagent node of a parent graph, and a ``deepagents``
subagent run by the ``task`` tool, each driven by a scripted chat model (``bind_tools``
and all, see ``graphs._scripted``). The tools write what they were really called with
into a log, so a test knows what ran without asking lg_eval or the messages.

A reviewer's answers are a :data:`Policy`: the decision for each proposed call, keyed by
the file it names (``"report.txt"``), turned into the ``Command(resume=...)`` the
middleware's documented shapes take (:func:`answers`). :func:`streamed_thread` builds a
thread from LangGraph's own ``stream(..., subgraphs=True)`` task events, independent of
lg_eval's extraction.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from deepagents import create_deep_agent
from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_core.messages import AIMessage
from langchain_core.tools import BaseTool, tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.pregel import Pregel
from langgraph.types import Command, StateSnapshot

from graphs._scripted import ai, scripted_model, tool_call
from graphs.scenarios import Turn as Step
from graphs.scenarios import thread_config
from lg_eval._trajectory import InterruptRecord, ThreadTrajectory, Turn

Mode = Literal["batched", "per_call"]
MODES: tuple[Mode, ...] = ("batched", "per_call")
Log = list[tuple[str, dict[str, Any]]]
"""What the tools were really called with, in the order they ran."""
Policy = Mapping[str, Mapping[str, Any]]
"""The reviewer's decision for each proposed call, by the ``path`` it names."""

REQUEST = "Tidy the folder: note 'hi' in a.txt, then delete report.txt and tmp.txt."
APPROVE: dict[str, Any] = {"type": "approve"}
REJECT: dict[str, Any] = {"type": "reject", "message": "Keep the report."}
RESPOND: dict[str, Any] = {"type": "respond", "message": "I deleted it by hand."}


def edit(name: str, **args: Any) -> dict[str, Any]:
    """An ``edit`` decision: the tool runs ``name(**args)`` instead of the model's call."""
    return {"type": "edit", "edited_action": {"name": name, "args": args}}


def file_tools(log: Log) -> list[BaseTool]:
    """``write_file`` and ``delete_file``, recording each real call in ``log``."""

    @tool
    def write_file(path: str, text: str) -> str:
        """Write text to a file."""
        log.append(("write_file", {"path": path, "text": text}))
        return f"Wrote {len(text)} characters to {path}."

    @tool
    def delete_file(path: str) -> str:
        """Delete a file."""
        log.append(("delete_file", {"path": path}))
        return f"Deleted {path}."

    return [write_file, delete_file]


def tidy_script(prefix: str = "") -> list[AIMessage]:
    """The model's turns: write a.txt and delete report.txt together, then delete
    tmp.txt, then answer (call ids start with ``prefix``)."""
    return [
        ai(
            f"{prefix}ai-1",
            "",
            tool_call("write_file", {"path": "a.txt", "text": "hi"}, f"{prefix}c-write"),
            tool_call("delete_file", {"path": "report.txt"}, f"{prefix}c-report"),
        ),
        ai(f"{prefix}ai-2", "", tool_call("delete_file", {"path": "tmp.txt"}, f"{prefix}c-tmp")),
        ai(f"{prefix}ai-3", "The folder is tidy."),
    ]


TIDY: Policy = {
    "a.txt": edit("write_file", path="b.txt", text="hello"),
    "report.txt": REJECT,
    "tmp.txt": APPROVE,
}
"""The issue's reviewer: edit the write, reject report.txt, then approve tmp.txt."""


def middleware(mode: Mode, *, notice: bool = True) -> HumanInTheLoopMiddleware:
    """Review every call of both tools, in ``mode``; ``notice=False`` passes
    ``edit_notice=None`` (no note in an edited call's result)."""
    kwargs: dict[str, Any] = {} if notice else {"edit_notice": None}
    return HumanInTheLoopMiddleware(
        {"write_file": True, "delete_file": True}, interrupt_mode=mode, **kwargs
    )


def agent(
    log: Log,
    *,
    mode: Mode = "batched",
    notice: bool = True,
    script: Sequence[AIMessage] | None = None,
    checkpointer: Any = None,
    review: HumanInTheLoopMiddleware | None = None,
) -> Pregel:
    """``create_agent`` with the file tools, every call reviewed."""
    return create_agent(
        scripted_model("tidy-agent", *(script or tidy_script())),
        tools=file_tools(log),
        middleware=[review or middleware(mode, notice=notice)],
        checkpointer=checkpointer,
    )


def nested(
    log: Log, *, mode: Mode = "batched", notice: bool = True, checkpointer: Any = None
) -> Pregel:
    """The agent as the ``cleaner`` node of a parent graph sharing its ``messages``: its
    questions are asked at ``cleaner:...``, its messages reach the parent when it ends."""
    builder = StateGraph(MessagesState)
    builder.add_node("cleaner", agent(log, mode=mode, notice=notice))
    builder.add_edge(START, "cleaner")
    builder.add_edge("cleaner", END)
    return builder.compile(checkpointer=checkpointer)


def deep(log: Log, *, mode: Mode = "batched", checkpointer: Any = None) -> Pregel:
    """A deep agent that hands the tidying to its ``cleaner`` subagent through the ``task``
    tool; the subagent's calls are reviewed (``interrupt_on``, which is batched, or the
    per-call middleware), and its messages never reach the parent's."""
    main = scripted_model(
        "deep-main",
        ai(
            "m-1",
            "",
            tool_call("task", {"description": REQUEST, "subagent_type": "cleaner"}, "t-1"),
        ),
        ai("m-2", "The cleaner tidied the folder."),
    )
    spec: dict[str, Any] = {
        "name": "cleaner",
        "description": "Tidies folders.",
        "system_prompt": "Tidy the folder you are given.",
        "tools": file_tools(log),
        "model": scripted_model("deep-cleaner", *tidy_script("sub-")),
    }
    if mode == "batched":
        spec["interrupt_on"] = {"write_file": True, "delete_file": True}
    else:
        spec["middleware"] = [middleware("per_call")]
    return create_deep_agent(main, subagents=[spec], checkpointer=checkpointer)  # type: ignore[list-item]


def tidy_dataset(*, expected: str = "") -> str:
    """A golden dataset of one case playing :data:`TIDY` (its answers by
    :func:`tidy_reviewer`), with ``expected`` (YAML, indented for the case) when given."""
    return f"""\
name: tidy
cases:
  - id: tidy
    turns:
      - input: {{messages: [{{role: user, content: "{REQUEST}"}}]}}
      - resume_fn: "tests.hitl_agents:tidy_reviewer"
      - resume_fn: "tests.hitl_agents:tidy_reviewer"
{expected}"""


# --------------------------------------------------------------------------- playing


def answer(question: Mapping[str, Any], policy: Policy) -> Any:
    """The reviewer's answer to one question: a decision for a per-call question,
    ``{"decisions": [...]}`` (one per action request, in order) for a batched one."""
    if question.get("type") == "tool_approval":
        return policy[question["args"]["path"]]
    return {"decisions": [policy[r["args"]["path"]] for r in question["action_requests"]]}


def answers(policy: Policy) -> Callable[[StateSnapshot], Command]:
    """The reviewer's resume for every pending question, keyed by interrupt id."""

    def resume(snapshot: StateSnapshot) -> Command:
        return Command(resume={i.id: answer(i.value, policy) for i in snapshot.interrupts})

    return resume


def tidy_reviewer(pending: Sequence[Any]) -> dict[str, Any]:
    """:data:`TIDY`'s answers as a dataset's ``resume_fn`` (pending interrupts in, an
    ``{id: answer}`` map out)."""
    return {item.id: answer(item.value, TIDY) for item in pending}


def steps(policy: Policy, resumes: int = 2) -> list[Step]:
    """The request, then ``resumes`` answers by ``policy``."""
    return [Step({"messages": [("user", REQUEST)]})] + [
        Step(from_state=answers(policy)) for _ in range(resumes)
    ]


def streamed_thread(graph: Pregel, thread_id: str, turns: Sequence[Step]) -> ThreadTrajectory:
    """Play ``turns`` with ``graph.stream(..., subgraphs=True, stream_mode="tasks")`` and
    record the thread as LangGraph's own events show it: per call, its kind, the answers
    sent, the questions pending at the deepest task that raised them (path: the node names
    of its namespace, then its own), and the state ``get_state`` gives afterwards."""
    config = thread_config(thread_id)
    recorded: list[Turn] = []
    pending: list[InterruptRecord] = []
    for index, step in enumerate(turns):
        payload = step.resolve(graph.get_state(config) if index else None)
        asked: dict[str, InterruptRecord] = {}
        for namespace, _, event in graph.stream(
            payload, config, subgraphs=True, stream_mode=["tasks"]
        ):
            for raised in event.get("interrupts") or ():
                path = ":".join([part.split(":")[0] for part in namespace] + [event["name"]])
                known = asked.get(raised["id"])
                if known is None or path.count(":") > known.path.count(":"):
                    asked[raised["id"]] = InterruptRecord(
                        id=raised["id"], value=raised["value"], path=path
                    )
        resume = payload.resume if isinstance(payload, Command) else None
        if resume is not None and not (
            isinstance(resume, dict) and set(resume) <= {record.id for record in pending}
        ):
            resume = {pending[0].id: resume}
        recorded.append(
            Turn(
                index=index,
                kind="resume" if isinstance(payload, Command) else "input",
                input=None if isinstance(payload, Command) else payload,
                resume=resume,
                status="interrupted" if asked else "completed",
                interrupts=list(asked.values()),
                state=graph.get_state(config).values,
            )
        )
        pending = list(asked.values())
    return ThreadTrajectory(thread_id=thread_id, turns=recorded)


__all__ = [
    "APPROVE",
    "MODES",
    "REJECT",
    "REQUEST",
    "RESPOND",
    "TIDY",
    "Log",
    "Mode",
    "Policy",
    "agent",
    "answer",
    "answers",
    "deep",
    "edit",
    "file_tools",
    "middleware",
    "nested",
    "steps",
    "streamed_thread",
    "tidy_dataset",
    "tidy_reviewer",
    "tidy_script",
]
