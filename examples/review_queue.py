"""A review queue: the evaluation graph over several HITL threads, pausing for a human.

Three threads of the email agent (``graphs/hitl_agent.py``: a person approves
or rejects every ``send_email``) are run into one SQLite file. Then
:func:`~lg_eval.nodes.batch_evaluate` runs the checkpointed evaluation graph
over them, two at a time, on the same file:

    extract -> evaluate (one task per evaluator) -> aggregate -> review?

A thread whose weighted score falls below the review threshold pauses in
``review`` with ``interrupt()``; this script plays the reviewer and resumes it
with ``Command(resume={"verdict": ..., "note": ...})``. Running the batch again
skips the finished evaluations. Finally the evaluation thread itself is
extracted with lg_eval, like any other thread.

    .venv/bin/python examples/review_queue.py [path/to/checkpoints.sqlite]
"""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path
from typing import Any

from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.types import Command

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from graphs import hitl_agent  # noqa: E402
from graphs._scripted import ai, scripted_model, tool_call  # noqa: E402
from graphs.scenarios import HITL_AGENT_TURNS, drive  # noqa: E402
from lg_eval import extract_thread  # noqa: E402
from lg_eval.evaluators import create_tool_order_evaluator, create_tool_selection_evaluator  # noqa: E402
from lg_eval.nodes import (  # noqa: E402
    BatchItem,
    EvalSpec,
    EvaluationResult,
    batch_evaluate,
    create_evaluation_graph,
)

DEFAULT_DB = ROOT / ".lg_eval" / "review_queue.sqlite"
EXPECTED = {"tool_calls": ["read_inbox", "send_email"]}
REVIEWER = {"verdict": "fail", "note": "Replied to Bob without reading the inbox first."}


def careless_model() -> Any:
    """Answers Bob without reading the inbox."""
    return scripted_model(
        "careless-model",
        ai("careless-ai-1", "", tool_call("send_email", hitl_agent.REPLY_TO_BOB, "call_bob")),
        ai("careless-ai-2", hitl_agent.ANSWER_1),
    )


def record_threads(saver: SqliteSaver) -> list[str]:
    """Run the email agent on three threads; returns their ids."""
    first_request = HITL_AGENT_TURNS[:2]  # ask, approve the email to Bob
    drive(hitl_agent.build(checkpointer=saver), "inbox-careful", first_request)
    drive(hitl_agent.build(saver, careless_model()), "inbox-careless", first_request)
    drive(hitl_agent.build(checkpointer=saver), "inbox-two-requests", HITL_AGENT_TURNS)
    return ["inbox-careful", "inbox-careless", "inbox-two-requests"]


def evaluation_graph(saver: SqliteSaver) -> Any:
    """Tool order counts double; both must be perfect to pass; below 0.9 goes to a human."""
    return create_evaluation_graph(
        [
            EvalSpec(create_tool_order_evaluator(), weight=2.0, threshold=1.0),
            EvalSpec(create_tool_selection_evaluator(), threshold=1.0),
        ],
        review_threshold=0.9,
        checkpointer=saver,
        graphs={"email_agent": hitl_agent.build(checkpointer=saver)},
    )


def show(items: list[BatchItem]) -> None:
    for item in items:
        result = item.result
        score = "-" if result is None or result.score is None else f"{result.score:.2f}"
        passed = "-" if result is None else result.passed
        print(f"  {item.thread_id:<38} {item.status:<7} score={score:<5} passed={passed}")
        if item.status == "review":
            for reason in item.review["reasons"]:
                print(f"    needs review: {reason}")
        if result is not None and result.review is not None:
            print(f"    reviewed: {result.review.verdict} ({result.review.note})")


def main(db_path: Path = DEFAULT_DB) -> list[EvaluationResult]:
    """Record the threads, evaluate them, review the low score, and return the results."""
    db_path.parent.mkdir(parents=True, exist_ok=True)
    db_path.unlink(missing_ok=True)
    with sqlite3.connect(db_path, check_same_thread=False) as connection:
        saver = SqliteSaver(connection)
        threads = record_threads(saver)
        graph = evaluation_graph(saver)
        cases = [
            {"target": {"graph": "email_agent", "thread_id": t}, "reference": EXPECTED}
            for t in threads
        ]
        print("Evaluating (at most 2 threads at a time):")
        items = batch_evaluate(graph, cases, max_concurrency=2, thread_prefix="review")
        show(items)
        for item in items:
            if item.status == "review":
                print(f"Reviewer on {item.thread_id}: {REVIEWER}")
                graph.invoke(Command(resume=REVIEWER), item.config())
        print("Batch again (finished evaluations are not run twice):")
        items = batch_evaluate(graph, cases, max_concurrency=2, thread_prefix="review")
        show(items)
        reviewed = next(i for i in items if i.result and i.result.review)
        steps = extract_thread(graph, reviewed.config()).to_graph_trajectory().steps
        print(f"Evaluation thread {reviewed.thread_id}, as lg_eval extracts it:")
        for turn, names in enumerate(steps, start=1):
            print(f"  turn {turn}: {' -> '.join(names) or '(the resumed review only)'}")
        return [item.result for item in items if item.result is not None]


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_DB)
