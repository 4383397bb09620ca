"""``lg-eval run`` exit codes: errors exit 3 by default, failing scores only through a gate."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from lg_eval.cli import app
from lg_eval.cli._common import CASES_ERRORED, GATE_FAILED, PASSED

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()


def echo_dataset(path: Path, *cases: tuple[str, dict[str, Any], str]) -> Path:
    """A dataset on the echo graph: ``(case id, input, expected answer)`` per case."""
    lines = ["name: echo", "graph: tests.experiments.graphs:slow_echo", "cases:"]
    for case_id, given, answer in cases:
        lines += [
            f"  - id: {case_id}",
            f"    turns: [{{input: {given!r}}}]".replace("'", '"'),
            f"    expected: {{output: {answer}}}",
        ]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(ROOT))
    return [
        "--store", f"sqlite:///{tmp_path / 'results.sqlite'}",
        "--checkpointer", f"sqlite:///{tmp_path / 'checkpoints.sqlite'}",
        "--quiet",
    ]  # fmt: skip


def run(dataset: Path, here: list[str], *extra: str) -> Any:
    return runner.invoke(app, ["run", str(dataset), *here, *extra], catch_exceptions=False)


def test_every_case_raising_exits_3_and_says_how_many(here: list[str], tmp_path: Path) -> None:
    data = echo_dataset(
        tmp_path / "d.yaml",
        ("a", {"text": "a", "fail": "value"}, "A"),
        ("b", {"text": "b", "fail": "value"}, "B"),
    )
    result = run(data, here)
    assert result.exit_code == CASES_ERRORED == 3
    assert "2 of 2 results errored or timed out" in result.output


def test_one_error_among_passes_exits_3_even_when_the_gate_passes(
    here: list[str], tmp_path: Path
) -> None:
    data = echo_dataset(
        tmp_path / "d.yaml",
        ("ok1", {"text": "x"}, "X"),
        ("ok2", {"text": "y"}, "Y"),
        ("bad", {"text": "z", "fail": "value"}, "Z"),
    )
    assert run(data, here, "--fail-under", "0.5").exit_code == CASES_ERRORED


def test_failing_scores_exit_0_without_a_gate_and_1_with_one(
    here: list[str], tmp_path: Path
) -> None:
    data = echo_dataset(
        tmp_path / "d.yaml", ("ok", {"text": "x"}, "X"), ("wrong", {"text": "y"}, "NOT-Y")
    )
    assert run(data, here, "--run-id", "r1").exit_code == PASSED
    gated = run(data, here, "--run-id", "r2", "--fail-under", "0.9")
    assert gated.exit_code == GATE_FAILED == 1
    assert "pass rate 50.0% is below --fail-under 90.0%" in gated.output


def test_a_failed_gate_outranks_errors(here: list[str], tmp_path: Path) -> None:
    data = echo_dataset(
        tmp_path / "d.yaml",
        ("bad", {"text": "z", "fail": "value"}, "Z"),
        ("ok", {"text": "x"}, "X"),
    )
    assert run(data, here, "--fail-under", "0.9").exit_code == GATE_FAILED
