"""Feedback without a verdict is shown as "no verdict" with its reason in every rendering.

The user's case: ``evaluators: [hitl_match]`` on a case whose graph never interrupts and
whose expectations name no interrupt, so ``hitl_match`` gives no score and says why.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from lg_eval._trajectory import GraphTrajectory
from lg_eval.cli import app
from lg_eval.datasets import Expected
from lg_eval.evaluators import get_evaluator
from lg_eval.experiments import (
    CaseResult,
    ExperimentRun,
    RunInfo,
    ScoreRow,
    reference_gap,
    status_of,
)
from lg_eval.reports import build_report, render_html, render_junit, render_markdown

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def outputs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    data = write_dataset(tmp_path, monkeypatch)
    result = CliRunner().invoke(
        app,
        [
            "run", str(data),
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


def write_dataset(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user's dataset file, in ``tmp_path`` (also the working directory)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(ROOT))
    data = tmp_path / "d.yaml"
    data.write_text(
        "name: echo\ngraph: tests.experiments.graphs:slow_echo\nevaluators: [hitl_match]\n"
        "cases:\n  - id: no-interrupt\n    turns: [{input: {text: hi}}]\n"
        "    expected: {trajectory: {steps: [[__start__, echo]]}}\n"
    )
    return data


def reason() -> str:
    """What a run says of hitl_match when the case's expectations name no interrupt and no
    resume (the dataset rule, which gives no verdict as hitl_match itself does)."""
    steps = [["__start__", "echo"]]
    feedback = get_evaluator("hitl_match")(
        outputs=GraphTrajectory(steps=steps), reference_outputs={"trajectory": {"steps": steps}}
    )
    assert feedback["score"] is None
    gap = reference_gap("hitl_match", {}, Expected(trajectory=GraphTrajectory(steps=steps)))
    assert gap is not None and gap.outcome == "no verdict"
    return f"{gap.reason}."


def test_the_terminal_prints_the_reason(outputs: dict[str, str]) -> None:
    assert f"hitl_match: no verdict: {reason()}" in outputs["terminal"]


def test_no_verdict_alone_does_not_fail_the_case(outputs: dict[str, str]) -> None:
    assert "✓ no-interrupt passed" in outputs["terminal"]
    case = ET.fromstring(outputs["xml"]).find(".//testcase")
    assert case is not None and case.find("failure") is None
    assert case.findtext("system-out") == (
        f"hitl_match: no verdict: {reason()}\ngraph_trajectory_strict_match = true"
    )


def failed_run() -> Any:
    """A failed case: one check failed, another gave no verdict (with its reason)."""
    rows = [
        ScoreRow(evaluator="exact_match", key="exact_match", score=False, passed=False),
        ScoreRow(evaluator="hitl_match", key="hitl_match", comment="Not <scored>.", passed=None),
    ]
    info = RunInfo(
        run_id="r", dataset="d", dataset_hash="h", target="t", checkpointer="c",
        started_at=datetime(2026, 1, 1, tzinfo=UTC),
    )  # fmt: skip
    result = CaseResult(run_id="r", case_id="c1", status=status_of(rows), scores=rows)
    return build_report(ExperimentRun(info=info, results=[result]))


def test_a_failed_case_lists_its_no_verdicts_in_every_format() -> None:
    report = failed_run()
    assert report.cases[0].result.status == "failed"
    assert "| hitl\\_match | no verdict | Not &lt;scored&gt;. |" in render_markdown(report)
    html = render_html(report)
    assert (
        '<code>hitl_match</code>: no verdict: <span class="text">Not &lt;scored&gt;.</span>' in html
    )
    failure = ET.fromstring(render_junit(report)).find(".//failure")
    assert failure is not None
    assert failure.get("message") == "exact_match=false; hitl_match: no verdict: Not <scored>."


def test_a_case_with_no_verdict_at_all_is_not_passed() -> None:
    rows = [ScoreRow(evaluator="hitl_match", key="hitl_match", comment="why", passed=None)]
    assert status_of(rows) == "failed"
    assert status_of([*rows, ScoreRow(evaluator="e", key="e", score=True, passed=True)]) == (
        "passed"
    )
