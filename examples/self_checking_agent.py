"""A weather agent that checks its own tool use before answering (EvalNode + route_on_score).

Graph (``MessagesState`` plus ``evaluations`` and ``answer``)::

    __start__ -> agent -> tools -> agent ...          (while the model calls tools)
                 agent -> check                        (the model answered)
                 check -> respond | revise | escalate  (route_on_score)
                 revise -> agent

``check`` is an :class:`~lg_eval.nodes.EvalNode`: it scores the tool calls in the
conversation so far against the calls the run expects (given in the run
config) and appends the feedback, tagged with turn and checkpoint, to
``state["evaluations"]``. A failed check sends the agent back with the
evaluators' comments; two failures in a row escalate instead.

The scripted model first guesses without calling ``get_weather`` (the check
fails), then calls the tool, which pauses the thread to ask a human; the
script resumes it with the human's answer and the checked answer goes out.

    .venv/bin/python examples/self_checking_agent.py [path/to/checkpoints.sqlite]
"""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.prebuilt import ToolNode
from langgraph.types import Command

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from graphs import weather  # noqa: E402
from graphs._scripted import ScriptedChatModel, ai, scripted_model, tool_call  # noqa: E402
from lg_eval import extract_thread  # noqa: E402
from lg_eval.evaluators import create_argument_precision_evaluator, create_tool_selection_evaluator  # noqa: E402
from lg_eval.nodes import (  # noqa: E402
    EvalMessagesState,
    EvalNode,
    EvalSpec,
    from_config,
    latest_evaluation,
    route_on_score,
)

DEFAULT_DB = ROOT / ".lg_eval" / "self_checking_agent.sqlite"
GUESS = "It's probably sunny in sf."
EXPECTED = {"tool_calls": [{"name": "get_weather", "args": {"city": "sf"}}]}
ESCALATED = "I could not check my answer; a colleague will follow up."


class State(EvalMessagesState, total=False):
    answer: str


def default_model() -> ScriptedChatModel:
    """Guess first (no tool call), then call get_weather, then answer from the tool result."""
    return scripted_model(
        "self-checking-model",
        ai("self-check-ai-1", GUESS),
        ai("self-check-ai-2", "", tool_call("get_weather", {"city": "sf"}, "call_weather_sf")),
        ai("self-check-ai-3", weather.FINAL_ANSWER),
    )


def build(checkpointer: BaseCheckpointSaver | None = None, model: Any = None) -> CompiledStateGraph:
    """Compile the self-checking agent."""
    llm = (model or default_model()).bind_tools(weather.TOOLS)

    def agent(state: State) -> dict[str, Any]:
        return {"messages": [llm.invoke(state["messages"])]}

    def after_agent(state: State) -> str:
        last = state["messages"][-1]
        return "tools" if isinstance(last, AIMessage) and last.tool_calls else "check"

    def revise(state: State) -> dict[str, Any]:
        problems = [r.comment for r in latest_evaluation(state) if r.comment]
        advice = " ".join(problems) + " Use the tools before you answer."
        return {"messages": [HumanMessage(advice.strip(), id=f"revise-{len(state['messages'])}")]}

    def respond(state: State) -> dict[str, Any]:
        return {"answer": state["messages"][-1].text}

    def escalate(state: State) -> dict[str, Any]:
        return {"answer": ESCALATED}

    check = EvalNode(
        [
            EvalSpec(create_tool_selection_evaluator(), threshold=1.0),
            EvalSpec(create_argument_precision_evaluator(), threshold=1.0),
        ],
        reference=from_config("expected_calls"),
        graph=lambda: app,  # lets every feedback carry its turn index
    )
    builder = StateGraph(State)
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode(weather.TOOLS))
    builder.add_node("check", check)
    builder.add_node("revise", revise)
    builder.add_node("respond", respond)
    builder.add_node("escalate", escalate)
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", after_agent, ["tools", "check"])
    builder.add_edge("tools", "agent")
    builder.add_conditional_edges(
        "check",
        route_on_score(passed="respond", failed="revise", max_failures=1, exhausted="escalate"),
    )
    builder.add_edge("revise", "agent")
    builder.add_edge("respond", END)
    builder.add_edge("escalate", END)
    app = builder.compile(checkpointer=checkpointer)
    return app


def describe(record: dict[str, Any]) -> str:
    verdict = {True: "passed", False: "FAILED", None: "no verdict"}[record["passed"]]
    comment = f" - {record['comment']}" if record["comment"] else ""
    return (
        f"  [turn {record['turn'] + 1}, step {record['step']}] {record['key']} = "
        f"{record['score']} ({verdict}){comment}"
    )


def main(db_path: Path = DEFAULT_DB) -> dict[str, Any]:
    """Run the two turns on a SQLite checkpointer and print what the agent checked."""
    db_path.parent.mkdir(parents=True, exist_ok=True)
    db_path.unlink(missing_ok=True)
    config = {"configurable": {"thread_id": "self-check-1", "expected_calls": EXPECTED}}
    with sqlite3.connect(db_path, check_same_thread=False) as connection:
        agent = build(SqliteSaver(connection))
        question = {"messages": [{"role": "user", "content": weather.QUESTION, "id": "h-1"}]}
        seen = 0
        for turn, payload in enumerate([question, Command(resume=weather.HUMAN_ANSWER)], start=1):
            agent.invoke(payload, config)
            state = agent.get_state(config)
            records = state.values["evaluations"]
            print(f"Turn {turn}: {len(records) - seen} evaluation result(s)")
            print("\n".join(describe(r) for r in records[seen:]))
            seen = len(records)
            for pending in state.interrupts:
                print(f"  paused for a human: {pending.value!r}")
        steps = extract_thread(agent, config).to_graph_trajectory().steps
        print(f"Answer: {state.values['answer']}")
        print("Trajectory:")
        for turn, names in enumerate(steps, start=1):
            print(f"  turn {turn}: {' -> '.join(names)}")
        return state.values


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_DB)
