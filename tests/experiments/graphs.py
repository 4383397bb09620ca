"""Small deterministic graphs for the runner tests (the example graphs cover the rest)."""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Annotated, Any, TypedDict

from langchain_core.messages import AIMessage, AnyMessage, ToolMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.graph.state import CompiledStateGraph

LOOKUP = {"name": "lookup", "args": {"query": "answer", "limit": 3}, "id": "call_1"}
USAGE = {"input_tokens": 30, "output_tokens": 12, "total_tokens": 42}


class AgentState(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]


def build_agent(checkpointer: BaseCheckpointSaver | None = None) -> CompiledStateGraph:
    """``agent -> tools -> answer``: one tool call, then the answer (with token usage)."""

    def agent(state: AgentState) -> dict[str, Any]:
        return {"messages": [AIMessage("", tool_calls=[LOOKUP], usage_metadata=USAGE)]}

    def tools(state: AgentState) -> dict[str, Any]:
        return {"messages": [ToolMessage("42 (contact bob@example.com)", tool_call_id="call_1")]}

    def answer(state: AgentState) -> dict[str, Any]:
        text = "The answer is 42; ask bob@example.com."
        return {"messages": [AIMessage(text, usage_metadata=USAGE)]}

    builder = StateGraph(AgentState)
    builder.add_node("agent", agent)
    builder.add_node("tools", tools)
    builder.add_node("answer", answer)
    builder.add_edge(START, "agent")
    builder.add_edge("agent", "tools")
    builder.add_edge("tools", "answer")
    builder.add_edge("answer", END)
    return builder.compile(checkpointer=checkpointer)


class EchoState(TypedDict, total=False):
    text: str
    answer: str
    delay: float
    fail: str
    log: str
    hold: str


class Calls:
    """Counts node runs per input text (thread-safe), shared by a test and its graph."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.lock = threading.Lock()

    def hit(self, text: str) -> int:
        with self.lock:
            self.counts[text] += 1
            return self.counts[text]


def build_echo(calls: Calls | None = None) -> Any:
    """A factory for ``echo``: answers ``text`` after sleeping ``delay`` seconds.

    ``fail="operational-once"`` raises ``sqlite3.OperationalError`` on the first run for a
    text, ``"value"`` raises ``ValueError`` always; ``text`` ending in ``?`` alternates
    between ``yes`` and ``no`` from one run to the next. With ``log`` (a file path) each run
    first appends ``text`` to that file durably (see :func:`record_start`). With ``hold`` (a
    file path) each run then waits, up to a minute, until that file exists: a test keeps a
    run alive for exactly as long as it needs, whatever the machine's load.
    """
    calls = calls or Calls()

    def factory(checkpointer: BaseCheckpointSaver | None = None) -> CompiledStateGraph:
        def echo(state: EchoState) -> dict[str, Any]:
            if "log" in state:
                record_start(Path(state["log"]), state["text"])
            count = calls.hit(state["text"])
            time.sleep(state.get("delay", 0.0))
            if "hold" in state:
                wait_for(Path(state["hold"]))
            fail = state.get("fail")
            if fail == "operational-once" and count == 1:
                raise sqlite3.OperationalError("database is locked")
            if fail == "value":
                raise ValueError("bad input")
            if state["text"].endswith("?"):
                return {"answer": "yes" if count % 2 else "no"}
            return {"answer": state["text"].upper()}

        builder = StateGraph(EchoState)
        builder.add_node("echo", echo)
        builder.add_edge(START, "echo")
        builder.add_edge("echo", END)
        return builder.compile(checkpointer=checkpointer)

    factory.calls = calls  # type: ignore[attr-defined]
    return factory


def wait_for(path: Path, timeout: float = 60.0) -> None:
    """Return once ``path`` exists, or after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(0.02)


def record_start(log: Path, text: str) -> None:
    """Append ``text`` as one line to ``log`` and fsync it: a ``kill -9`` right after still
    leaves the line on disk, so a crash test can count every start of every case."""
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        os.write(fd, f"{text}\n".encode())
        os.fsync(fd)
    finally:
        os.close(fd)


def starts(log: Path) -> Counter[str]:
    """How many times each text was started, from a :func:`record_start` log."""
    return Counter(log.read_text().splitlines()) if log.exists() else Counter()


slow_echo = build_echo()
"""A module-level factory the crash test's subprocess names as ``module:attr``."""
