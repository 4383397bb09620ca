"""Terminal tables at 80 columns (a CI log's width) and on a wide terminal: nothing cut with
``…``, keys and run ids whole, the columns that did not fit named, compare's verdict in words.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console
from typer.testing import CliRunner

from lg_eval import run_experiment
from lg_eval.cli import app
from lg_eval.experiments import ExperimentRun, compare_runs
from lg_eval.reports import build_report, render_comparison, render_terminal
from lg_eval.reports._text import Column, fitted_table

ROOT = Path(__file__).resolve().parents[2]
WEATHER = ROOT / "examples" / "golden" / "weather.yaml"
runner = CliRunner()


def printed(render: Any, report: Any, width: int) -> str:
    console = Console(record=True, width=width, file=io.StringIO(), color_system=None)
    render(report, console=console)
    return console.export_text()


def test_the_report_fits_80_columns_and_cuts_nothing(support_run: ExperimentRun) -> None:
    text = printed(render_terminal, build_report(support_run), 80)
    assert max(len(line) for line in text.splitlines()) <= 80
    assert "…" not in text
    for e in build_report(support_run).evaluators:
        assert any(e.key in line for line in text.splitlines()), e.key  # a key is never split
    assert "not shown at 80 columns: " in text


def test_a_wide_terminal_shows_every_column(support_run: ExperimentRun) -> None:
    text = printed(render_terminal, build_report(support_run), 200)
    header = next(line for line in text.splitlines() if "no verdict" in line)
    for column in ("pass", "passed", "failed", "errors", "mean", "min–max", "pass 95% CI",
                   "mean 95% CI"):  # fmt: skip
        assert column in header
    assert "not shown" not in text


@pytest.fixture
def runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Any]:
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(ROOT))
    text = WEATHER.read_text()
    worse = tmp_path / "worse.yaml"
    worse.write_text(text.replace('contains: [sunny, "75"]', 'contains: [sunny, "76"]'))
    where = {"store": tmp_path / ".lg_eval" / "results.sqlite", "checkpointer": "memory://"}
    a = run_experiment(None, WEATHER, run_id="nightly-2026-01-01", repetitions=2, **where)
    b = run_experiment(None, worse, run_id="nightly-2026-01-02", repetitions=2, **where)
    return a, b


def test_compare_at_80_columns_names_what_moved_and_spells_out_its_verdict(runs) -> None:
    a, b = runs
    text = printed(render_comparison, build_report(b, comparison=compare_runs(a, b)), 80)
    assert max(len(line) for line in text.splitlines()) <= 80
    assert "…" not in text
    assert "│ sunny-sf#1 │ regressed │ passed → failed │ keywords -0.5" in text
    assert "mean score change (B − A): keywords -0.25; 5 other keys unchanged" in text
    result = runner.invoke(app, ["compare", "nightly-2026-01-01", "nightly-2026-01-02"])
    assert result.exit_code == 1
    assert result.stdout.splitlines()[-1] == (
        "verdict: regression: 2 of 6 case repetitions regressed (passed in "
        "nightly-2026-01-01, not in nightly-2026-01-02, or a score dropped by more than "
        "--tolerance 0); exit 1"
    )
    significant = runner.invoke(app, ["compare", "nightly-2026-01-01", "nightly-2026-01-02",
                                      "--fail-on", "significant-regression"])  # fmt: skip
    assert significant.exit_code == 0
    assert significant.stdout.splitlines()[-1] == (
        "verdict: no significant regression at alpha 0.05 (2 of 6 case repetitions "
        "regressed); exit 0"
    )


def test_run_ids_never_wrap_in_lg_eval_runs(runs) -> None:
    run_experiment(None, WEATHER, store=".lg_eval/results.sqlite", checkpointer="memory://")
    result = runner.invoke(app, ["runs"])
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80
    ids = ["nightly-2026-01-01", "nightly-2026-01-02"]
    default = [line.split("│")[1].strip() for line in lines if "weather-golden-" in line]
    assert len(default) == 1 and default[0].startswith("weather-golden-2")  # whole, one line
    assert all(any(f"│ {run_id} " in line for line in lines) for run_id in ids)


@given(
    st.lists(st.text("abcdefghij_ ", min_size=1, max_size=40), min_size=1, max_size=6),
    st.integers(40, 200),
)
def test_a_fitted_table_keeps_whole_columns_whole_and_fits(cells: list[str], width: int) -> None:
    columns = [Column("id"), Column("text", wrap=True), *(Column(f"n{i}", "right", priority=i)
                                                         for i in range(1, 5))]  # fmt: skip
    rows = [[f"run-{n:04d}", cell, *(str(10**i) for i in range(4))] for n, cell in
            enumerate(cells)]  # fmt: skip
    console = Console(record=True, width=width, file=io.StringIO(), color_system=None)
    console.print(fitted_table(columns, rows, width))
    text = console.export_text()
    assert "…" not in text
    assert all(any(f"run-{n:04d}" in line for line in text.splitlines()) for n in range(len(rows)))
    if width >= 60:  # room for the kept-whole id and the folded text at their narrowest
        assert max(len(line) for line in text.splitlines()) <= width
