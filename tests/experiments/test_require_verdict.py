"""``require_verdict``: the user asks that a no-verdict fail the case.

The user's case: ``evaluators: [hitl_match]`` on a graph that never interrupts, with a
trajectory expectation, so ``hitl_match`` gives no score (and says why) while the built-in
trajectory check passes. By default the case passes; asked to, the run fails it, and so
does ``lg-eval run --require-verdict``.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from lg_eval.cli import app
from lg_eval.cli._common import GATE_FAILED, PASSED
from lg_eval.errors import InvalidOptionError
from lg_eval.experiments import open_store, run_experiment
from tests.experiments.conftest import ask, dataset
from tests.experiments.graphs import build_echo
from tests.reports.test_no_verdict import reason, write_dataset

STEPS = [["__start__", "echo"]]
CASE = {"id": "no-interrupt", "turns": ask("a"), "expected": {"trajectory": {"steps": STEPS}}}


def scores(run: Any) -> list[tuple[str, Any, Any]]:
    return [(s.key, s.score, s.passed) for s in run.results[0].scores]


def test_a_no_verdict_fails_the_case_only_when_asked(where):
    data = dataset("echo", [CASE], evaluators=["hitl_match"])
    runs = {
        asked: run_experiment(
            build_echo(), data, run_id=f"r-{asked}", require_verdict=asked, **where
        )
        for asked in (False, True)
    }  # fmt: skip
    expected = [("hitl_match", None, None), ("graph_trajectory_strict_match", True, True)]
    assert scores(runs[False]) == scores(runs[True]) == expected
    assert runs[True].results[0].scores[0].comment == reason()
    assert [r.status for r in runs[False].results] == ["passed"]
    assert [r.status for r in runs[True].results] == ["failed"]
    assert runs[True].info.config["require_verdict"] is True
    with open_store(where["store"]) as store:
        assert [r.status for r in store.load_run("r-True").results] == ["failed"]


def test_the_cli_flag_fails_the_case_and_says_why(tmp_path: Path, monkeypatch) -> None:
    data = write_dataset(tmp_path, monkeypatch)

    def run(*extra: str) -> Any:
        return CliRunner().invoke(
            app,
            [
                "run", str(data), "--junit", "r.xml",
                "--store", f"sqlite:///{tmp_path / 'r.sqlite'}",
                "--checkpointer", f"sqlite:///{tmp_path / 'c.sqlite'}", *extra,
            ],
            catch_exceptions=False,
        )  # fmt: skip

    assert run("--fail-under", "1").exit_code == PASSED
    asked = run("--require-verdict", "--fail-under", "1")
    assert asked.exit_code == GATE_FAILED
    terminal = " ".join(asked.output.split())
    assert "✗ no-interrupt failed" in terminal
    assert f"hitl_match: no verdict: {reason()}" in terminal
    failure = ET.fromstring((tmp_path / "r.xml").read_text()).find(".//failure")
    assert failure is not None
    assert failure.get("message") == f"hitl_match: no verdict: {reason()}"


@given(st.one_of(st.integers(), st.text(), st.none(), st.floats()))
def test_require_verdict_takes_only_a_bool(value: Any) -> None:
    refused = r"^require_verdict=.*: input should be a valid boolean"
    with pytest.raises(InvalidOptionError, match=refused):
        run_experiment(None, "d.yaml", require_verdict=value)
