"""No raw Python warning on the terminal: what extraction could not tell becomes a note of
the run (one line in the report, kept in the results), an ambiguity lg_eval caused itself
by sending one resume is no note at all, any other warning is one readable line, and
``--quiet`` is quiet."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from graphs import approval
from lg_eval import run_experiment
from lg_eval.cli import app
from lg_eval.datasets import load_dataset
from lg_eval.experiments import open_store

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()
AMBIGUOUS = (
    "Turn 2 resumes 2 interrupts at once; the number of resumes is ambiguous: checkpoints "
    "store answers given one at a time (Command(resume={id: value}) per interrupt) exactly "
    "like one resume answering all of them, so this may have been up to 2 invocations. "
    "lg_eval reports the fewest turns consistent with storage."
)
ONE_BY_ONE = """name: one-by-one
graph: graphs.approval:build
cases:
  - id: reviews
    turns:
      - input: {request: laptops}
      - resume_by_node: {legal_review: {approved: true}}
      - resume_by_node: {finance_review: {approved: true}}
    expected: {max_steps: 9}
"""
"""Parallel interrupts answered one at a time: storage cannot tell it from one resume
answering both, and lg_eval did not send one, so the ambiguity is real."""


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(ROOT))
    (tmp_path / "one.yaml").write_text(ONE_BY_ONE)
    return tmp_path


def lg_eval(*args: str) -> Any:
    return runner.invoke(app, list(args), catch_exceptions=False)


def stored_notes(run_id: str) -> list[list[str]]:
    with open_store(".lg_eval/results.sqlite") as store:
        return [r.notes for r in store.load_run(run_id).results]


def test_a_real_ambiguity_is_a_note_of_the_run_not_a_python_warning(folder: Path) -> None:
    result = lg_eval("run", "one.yaml", "--run-id", "r1", "--json", "r.json")
    assert result.exit_code == 0
    assert result.stderr.splitlines() == ["[1/1] passed 1, not passed 0"]  # progress only
    assert f"note: {AMBIGUOUS} (1 case: reviews)" in " ".join(result.stdout.split())
    assert stored_notes("r1") == [[AMBIGUOUS]]
    summary = json.loads((folder / "r.json").read_text())["summary"]
    assert summary["notes"] == [{"text": AMBIGUOUS, "cases": 1, "case_ids": ["reviews"]}]


def test_quiet_is_quiet(folder: Path) -> None:
    result = lg_eval("run", "one.yaml", "--run-id", "r1", "--quiet")
    assert (result.exit_code, result.stdout, result.stderr) == (0, "", "")
    assert stored_notes("r1") == [[AMBIGUOUS]]


def test_one_resume_lg_eval_sent_for_two_interrupts_is_no_note(folder: Path) -> None:
    dataset = ROOT / "examples" / "golden" / "approval.yaml"
    result = lg_eval("run", str(dataset), "--run-id", "a1")
    assert result.exit_code == 0
    assert result.stderr.splitlines() == [f"[{n}/3] passed {n}, not passed 0" for n in (1, 2, 3)]
    assert "note:" not in result.stdout
    assert stored_notes("a1") == [[], [], []]


def test_the_python_api_warns_only_for_the_real_ambiguity(folder: Path) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run_experiment(None, ROOT / "examples" / "golden" / "approval.yaml", run_id="a")
        own = [str(w.message) for w in caught]
        run_experiment(approval.build, load_dataset(folder / "one.yaml"), run_id="b")
    assert own == []
    assert [str(w.message) for w in caught] == [AMBIGUOUS]


def test_another_warning_is_one_readable_line(folder: Path) -> None:
    (folder / "dep.yaml").write_text(
        ONE_BY_ONE.replace("name: one-by-one", "name: dep").replace(
            "cases:", "evaluators: [{name: tool_sequence, options: {mode: superset}}]\ncases:"
        )
    )
    result = lg_eval("run", "dep.yaml", "--run-id", "d1")
    (line,) = [line for line in result.stderr.splitlines() if not line.startswith("[")]
    assert line.startswith("lg-eval: warning: DeprecationWarning: ")
    assert "use trajectory_match_mode=" in line
    assert "warnings.warn" not in result.stderr and ".py:" not in result.stderr
    assert lg_eval("run", "dep.yaml", "--run-id", "d2", "--quiet").stderr == ""
