"""``lg-eval run`` on a dataset file whose cases give a simulated user: the conversations
are played, judged and reported (who wrote each turn, the agent's replies, why each
conversation ended), and the gate reads them as any case."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from lg_eval.cli import app

ROOT = Path(__file__).resolve().parents[2]
DATASET = """\
name: support
graph: tests.play.support:build
evaluators: [tests.play.support:frustration]
cases:
  - id: served
    user:
      persona: a customer whose blender arrived broken
      goal: a refund for order 42
      model: tests.play.support:customer_model
      stop: {state: "tests.play.support:refunded"}
  - id: refused
    graph: tests.play.support:stubborn
    user:
      persona: a customer whose blender arrived broken
      goal: a refund for order 42
      model: tests.play.support:quitter_model
"""


def invoke(*args: str) -> Any:
    return CliRunner().invoke(app, list(args), catch_exceptions=False)


@pytest.fixture
def dataset(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(ROOT))
    path = tmp_path / "support.yaml"
    path.write_text(DATASET)
    return path


def test_validate_imports_the_users_model_and_stop_predicate(dataset: Path) -> None:
    assert invoke("dataset", "validate", str(dataset)).exit_code == 0
    broken = dataset.read_text().replace("support:refunded", "support:no_such_check")
    dataset.write_text(broken)
    result = invoke("dataset", "validate", str(dataset))
    assert result.exit_code != 0
    assert "user.stop.state 'tests.play.support:no_such_check'" in result.output


def test_run_plays_judges_and_reports_the_conversations(dataset: Path, tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    result = invoke(
        "run", str(dataset), "--run-id", "sim", "--checkpointer", "memory://",
        "--store", str(tmp_path / "results.sqlite"), "--json", str(report),
        "--md", str(tmp_path / "report.md"), "--fail-under", "0.9", "--quiet",
    )  # fmt: skip
    assert result.exit_code == 1  # one conversation of two passed
    listed = [case["result"] for case in json.loads(report.read_text())["cases"]]
    cases = {case["case_id"]: case for case in listed}
    served, refused = cases["served"], cases["refused"]
    assert [(t["by"], t["reply"]) for t in served["turns"]] == [
        ("user", "I can help with that. What is your order number?"),
        ("user", "Why would you like a refund for order 42?"),
        ("user", "Your refund for order 42 is on its way."),
    ]
    assert (served["simulation"]["stop"], served["simulation"]["detail"]) == (
        "state",
        "tests.play.support:refunded",
    )
    assert (served["status"], refused["status"]) == ("passed", "failed")
    assert refused["simulation"]["detail"] == "This is useless, I give up."
    assert [s["score"] for s in refused["scores"] if s["key"] == "user_frustration"] == [0.0]
    markdown = (tmp_path / "report.md").read_text()
    assert "| input (simulated user) |" in markdown
