from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from langgraph.checkpoint.sqlite import SqliteSaver
from typer.testing import CliRunner

from lg_eval.cli import app
from tests.sweeps import helpers

runner = CliRunner()


def test_lg_eval_sweep_reports_and_is_incremental(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "cp.sqlite", check_same_thread=False)
    graph = helpers.build(SqliteSaver(conn))
    helpers.populate(graph, 6, 6)
    base = [
        "sweep", "--graph", "tests.sweeps.helpers:build",
        "--checkpointer", f"sqlite:///{tmp_path / 'cp.sqlite'}",
        "--store", f"sqlite:///{tmp_path / 'results.sqlite'}",
        "--evaluator", "redundancy", "--evaluator", "tests.sweeps.helpers:turns",
        "--since", "1h", "--metadata", "team=escalated",
    ]  # fmt: skip
    out = runner.invoke(app, [*base, "--json", str(tmp_path / "s.json"),
                              "--html", str(tmp_path / "s.html")])  # fmt: skip
    assert out.exit_code == 0, out.output
    document = json.loads((tmp_path / "s.json").read_text())
    threads = {t["thread_id"]: t for t in document["threads"]}
    assert sorted(threads) == ["new-00", "new-03", "old-00", "old-03"]
    assert all(t["checkpoint_id"] and set(t["scores"]) == {"redundancy", "turns"}
               for t in threads.values())  # fmt: skip
    assert document["info"]["dataset"] == "sweep:tests.sweeps.helpers:build"
    assert "new-03" in (tmp_path / "s.html").read_text()

    helpers.resume(graph, "old-03")
    again = runner.invoke(app, [*base, "--quiet", "--json", str(tmp_path / "t.json")])
    assert again.exit_code == 0, again.output
    second = json.loads((tmp_path / "t.json").read_text())
    assert [t["thread_id"] for t in second["threads"]] == ["old-03"]
    conn.close()


def test_bad_input_exits_2(tmp_path: Path) -> None:
    graph = ["sweep", "--graph", "tests.sweeps.helpers:build", "--store", str(tmp_path / "r.db")]
    out = runner.invoke(app, [*graph, "--checkpointer", "memory://"])
    assert out.exit_code == 2
    assert "cannot list its threads" in out.output
    cp = f"sqlite:///{tmp_path / 'c.sqlite'}"
    bad = runner.invoke(app, [*graph, "--checkpointer", cp, "--evaluator", "nope"])
    assert bad.exit_code == 2


def test_a_sweep_whose_threads_all_error_exits_3_and_progress_agrees(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "cp.sqlite", check_same_thread=False)
    helpers.populate(helpers.build(SqliteSaver(conn)), 2, 0)
    conn.close()
    out = runner.invoke(
        app,
        [
            "sweep", "--graph", "tests.sweeps.helpers:build",
            "--checkpointer", f"sqlite:///{tmp_path / 'cp.sqlite'}",
            "--store", f"sqlite:///{tmp_path / 'results.sqlite'}",
            "--evaluator", "step_efficiency",
        ],
    )  # fmt: skip
    assert out.exit_code == 3, out.output
    assert "[2 threads] passed 0, not passed 2" in out.output
    assert "2 of 2 threads errored" in out.output
