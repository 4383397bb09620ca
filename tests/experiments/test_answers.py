"""What the agent said is kept with each case result, beside what the case expected.

The expected values come from LangGraph itself: the same turns are played by hand with
``invoke`` on a thread of their own, and each completed turn's answer is the last message
``invoke`` returned (a turn that stopped for a human returns ``__interrupt__`` instead).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypedDict

from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.types import Command, interrupt

from lg_eval.experiments import open_store, run_experiment
from tests.experiments.conftest import dataset

REFUND = {"messages": [{"role": "user", "content": "Refund order 7, it arrived broken."}]}
HELLO = {"messages": [{"role": "user", "content": "hi"}]}


def _desk(state: MessagesState) -> dict[str, Any]:
    """Greets, or asks a human before answering a refund request."""
    asked = str(state["messages"][-1].content)
    if "Refund" not in asked:
        return {"messages": [AIMessage("Hi there.")]}
    verdict = interrupt({"question": "Approve the refund of order 7?"})
    word = "approved" if verdict == "yes" else "declined"
    return {"messages": [AIMessage(f"Your refund of order 7 was {word}.")]}


def build_desk(checkpointer: Any = None) -> Any:
    builder = StateGraph(MessagesState)
    builder.add_node("desk", _desk)
    builder.add_edge(START, "desk")
    return builder.compile(checkpointer=checkpointer)


class Quiz(TypedDict, total=False):
    question: str
    answer: str


def build_quiz(checkpointer: Any = None) -> Any:
    """A state without messages: its answer is the ``answer`` key."""
    builder = StateGraph(Quiz)
    builder.add_node("solve", lambda state: {"answer": f"{state['question']} = 4"})
    builder.add_edge(START, "solve")
    return builder.compile(checkpointer=checkpointer)


def by_hand(build: Any, *payloads: Any) -> list[str | None]:
    """Each payload sent with ``invoke`` on a fresh thread; per call, the answer it returned
    (the last message's text, or the ``answer`` key), None when it stopped for a human."""
    graph = build(InMemorySaver())
    config: Any = {"configurable": {"thread_id": "by-hand"}}
    said: list[str | None] = []
    for payload in payloads:
        out = graph.invoke(payload, config)
        if "__interrupt__" in out:
            said.append(None)
        else:
            said.append(out["messages"][-1].content if "messages" in out else out["answer"])
    return said


def test_a_failed_keyword_check_keeps_what_was_expected_and_what_was_said(
    where: dict[str, Any],
) -> None:
    cases = [
        {"id": "refund", "turns": [{"input": REFUND}, {"resume": "no"}],
         "expected": {"output": {"contains": ["refund", "approved"]}}},
        {"id": "hello", "turns": [{"input": HELLO}],
         "expected": {"output": "Hello! How can I help?"}},
        {"id": "quiet", "turns": [{"input": HELLO}]},
    ]  # fmt: skip
    run = run_experiment(build_desk, dataset("desk", cases), **where)
    refund, hello, quiet = run.results
    declined = by_hand(build_desk, REFUND, Command(resume="no"))
    assert declined == [None, "Your refund of order 7 was declined."]
    assert (refund.status, refund.output, refund.answers) == ("failed", declined[-1], declined)
    assert refund.expected_output == {"contains": ["refund", "approved"]}
    [keywords] = refund.scores
    assert (keywords.key, keywords.score, keywords.comment) == (
        "keywords",
        0.5,
        "Keywords not found: approved.",
    )
    greeting = by_hand(build_desk, HELLO)
    assert (hello.status, hello.output, hello.answers) == ("failed", greeting[-1], greeting)
    assert hello.expected_output == "Hello! How can I help?"
    assert (quiet.output, quiet.expected_output, quiet.answers) == (greeting[-1], None, greeting)
    with open_store(where["store"]) as store:
        assert store.load_run(run.info.run_id).results == run.results


def test_a_state_without_messages_gives_its_answer_key(where: dict[str, Any]) -> None:
    cases = [{"id": "sum", "turns": [{"input": {"question": "2 + 2"}}],
              "expected": {"output": {"equals": "2 + 2 = 4"}}}]  # fmt: skip
    (result,) = run_experiment(build_quiz, dataset("quiz", cases), **where).results
    assert by_hand(build_quiz, {"question": "2 + 2"}) == ["2 + 2 = 4"]
    assert (result.status, result.output, result.answers) == ("passed", "2 + 2 = 4", ["2 + 2 = 4"])
    assert result.expected_output == {"equals": "2 + 2 = 4"}


def test_the_answers_are_redacted_before_they_are_stored(
    where: dict[str, Any], tmp_path: Path
) -> None:
    redact = [r"order \d+"]
    cases = [{"id": "refund", "turns": [{"input": REFUND}, {"resume": "yes"}],
              "expected": {"output": {"contains": ["order 7"]}}}]  # fmt: skip
    (result,) = run_experiment(build_desk, dataset("desk", cases), redact=redact, **where).results
    assert result.output == "Your refund of [REDACTED] was approved."
    assert result.answers == [None, "Your refund of [REDACTED] was approved."]
    assert result.expected_output == {"contains": ["[REDACTED]"]}
    assert "order 7" not in (tmp_path / "results.sqlite").read_bytes().decode("utf-8", "replace")
