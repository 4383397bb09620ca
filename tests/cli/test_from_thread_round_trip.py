"""`lg-eval dataset from-thread` turns a production thread into a golden case that passes.

A support thread is played on a SqliteSaver file as production would; the command
writes its human turns and what it did (steps, executed tool calls, final answer),
and `lg-eval run` plays the written case against the same graph (it passes) and
against a regressed graph (it fails).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import ToolMessage
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.types import Command
from typer.testing import CliRunner

from graphs import support
from lg_eval.cli import app
from lg_eval.cli._common import GATE_FAILED, PASSED
from lg_eval.datasets import load_dataset

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(ROOT))
    return tmp_path


def invoke(*args: str) -> Any:
    return runner.invoke(app, list(args), catch_exceptions=False)


def production_thread(
    path: Path, thread_id: str, decision: str
) -> list[tuple[str, dict[str, Any]]]:
    """Play the support agent on ``path`` as production would; the calls whose tool ran,
    read from LangGraph's own final state (a tool message the tool itself wrote)."""
    config = {"configurable": {"thread_id": thread_id}}
    with SqliteSaver.from_conn_string(str(path)) as saver:
        graph = support.build(checkpointer=saver)
        graph.invoke({"messages": [("user", support.REQUEST)]}, config)
        graph.invoke(Command(resume=decision), config)
        messages = graph.get_state(config).values["messages"]
    ran = {m.tool_call_id for m in messages if isinstance(m, ToolMessage) and m.status != "error"}
    return [
        (call["name"], call["args"])
        for m in messages
        for call in getattr(m, "tool_calls", [])
        if call["id"] in ran
    ]


def grow(thread_id: str) -> Path:
    written = invoke(
        "dataset", "from-thread", "--graph", "graphs.support:build", "--thread", thread_id,
        "--checkpointer", "sqlite:///prod.sqlite", "--case-id", thread_id,
        "-o", f"{thread_id}.yaml",
    )  # fmt: skip
    assert written.exit_code == PASSED, written.output
    return Path(f"{thread_id}.yaml")


def run(dataset: Path, run_id: str) -> tuple[int, dict[str, Any]]:
    result = invoke(
        "run", str(dataset), "--run-id", run_id, "--store", "sqlite:///results.sqlite",
        "--checkpointer", "sqlite:///replay.sqlite", "--quiet", "--fail-under", "1",
        "--json", f"{run_id}.json",
    )  # fmt: skip
    report = json.loads(Path(f"{run_id}.json").read_text())
    (case,) = report["cases"]
    return result.exit_code, case["result"]


def scores(case: dict[str, Any]) -> dict[str, Any]:
    return {row["key"]: row["score"] for row in case["scores"]}


def test_an_approved_refund_thread_becomes_a_case_with_its_calls_and_answer(here: Path) -> None:
    ran = production_thread(here / "prod.sqlite", "approved", "approve")
    assert ran == [("lookup_order", {"order_id": "42"}), ("refund", support.REFUND_ARGS)]
    case = load_dataset(grow("approved")).cases[0]
    assert [t.model_dump(by_alias=True, exclude_none=True) for t in case.turns] == [
        {"input": {"messages": [["user", support.REQUEST]]}},
        {"resume": "approve"},
    ]
    expected = case.expected
    assert expected.trajectory is not None
    assert expected.trajectory.steps == [
        ["__start__", "agent", "tools", "agent", "approval", "__interrupt__"],
        ["tools", "agent"],
    ]
    assert [(c.name, c.args) for c in expected.tool_calls or []] == ran
    assert expected.output == support.FINAL_ANSWER
    code, result = run(here / "approved.yaml", "same")
    assert code == PASSED
    assert scores(result) == {
        "graph_trajectory_strict_match": True,
        "tool_sequence_in_order_match": True,
        "exact_match": True,
    }
    assert result["status"] == "passed"


def test_a_rejected_refund_case_expects_no_refund_and_catches_a_graph_that_runs_it(
    here: Path,
) -> None:
    ran = production_thread(here / "prod.sqlite", "rejected", "reject")
    assert ran == [("lookup_order", {"order_id": "42"})]
    path = grow("rejected")
    case = load_dataset(path).cases[0]
    assert case.turns[1].model_dump(by_alias=True, exclude_none=True) == {"resume": "reject"}
    assert case.expected.trajectory is not None
    assert case.expected.trajectory.steps == [
        ["__start__", "agent", "tools", "agent", "approval", "__interrupt__"],
        ["agent"],
    ]
    assert [(c.name, c.args) for c in case.expected.tool_calls or []] == ran
    assert case.expected.output == support.FINAL_ANSWER
    code, result = run(path, "same")
    assert (code, result["status"]) == (PASSED, "passed")
    regressed = here / "regressed.yaml"
    text = path.read_text(encoding="utf-8")
    assert "graph: graphs.support:build\n" in text
    regressed.write_text(text.replace("graphs.support:build", "graphs.support:build_regressed"))
    code, result = run(regressed, "regressed")
    assert (code, result["status"]) == (GATE_FAILED, "failed")
    # the executed refund puts `tools` where the case expects `agent`; in_order tool matching
    # allows extra calls, so it records the refund as unexpected without failing on it
    assert scores(result) == {
        "graph_trajectory_strict_match": False,
        "tool_sequence_in_order_match": True,
        "exact_match": True,
    }
    (sequence,) = [row for row in result["scores"] if row["evaluator"] == "tool_sequence"]
    assert sequence["metadata"]["unexpected"] == [
        {"index": 1, "name": "refund", "args": support.REFUND_ARGS}
    ]
