"""Feedback without a verdict is shown as "no verdict" with its reason in every rendering.

The user's case: ``evaluators: [hitl_match]`` on a case whose graph never interrupts and
whose expectations name no interrupt, so ``hitl_match`` gives no score and says why.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lg_eval.cli import app
from lg_eval.evaluators import get_evaluator
from lg_eval.trajectory import GraphTrajectory

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def outputs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(ROOT))
    data = tmp_path / "d.yaml"
    data.write_text(
        "name: echo\ngraph: tests.experiments.graphs:slow_echo\nevaluators: [hitl_match]\n"
        "cases:\n  - id: no-interrupt\n    turns: [{input: {text: hi}}]\n"
        "    expected: {trajectory: {steps: [[__start__, echo]]}}\n"
    )
    result = CliRunner().invoke(
        app,
        [
            "run", str(data), "--scoring", "inline",
            "--store", f"sqlite:///{tmp_path / 'r.sqlite'}",
            "--checkpointer", f"sqlite:///{tmp_path / 'c.sqlite'}",
            "--junit", "r.xml", "--md", "r.md", "--html", "r.html",
        ],
        catch_exceptions=False,
    )  # fmt: skip
    return {
        "terminal": " ".join(result.output.split()),
        **{name: (tmp_path / f"r.{name}").read_text() for name in ("xml", "md", "html")},
    }


def reason() -> str:
    """What hitl_match itself says when the reference names no interrupt and no resume."""
    steps = [["__start__", "echo"]]
    feedback = get_evaluator("hitl_match")(
        outputs=GraphTrajectory(steps=steps), reference_outputs={"trajectory": {"steps": steps}}
    )
    assert feedback["score"] is None
    return str(feedback["comment"])


def test_the_terminal_prints_the_reason(outputs: dict[str, str]) -> None:
    assert f"hitl_match: no verdict: {reason()}" in outputs["terminal"]


def test_junit_names_the_feedback_not_just_the_case(outputs: dict[str, str]) -> None:
    case = ET.fromstring(outputs["xml"]).find(".//testcase")
    assert case is not None
    problem = case.find("failure")
    assert problem is not None
    assert problem.get("message") == f"hitl_match: no verdict: {reason()}"


def test_markdown_and_html_show_the_reason(outputs: dict[str, str]) -> None:
    assert "| hitl\\_match | no verdict |" in outputs["md"]
    assert "<h4>No verdict</h4>" in outputs["html"]
    assert "<code>hitl_match</code>: no verdict:" in outputs["html"]
