"""``lg-eval run`` reports a stored run: the terminal lists its worst results and says how
many more did not pass; the report files list every result, read back from the store."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

from typer.testing import CliRunner

from lg_eval.cli import app

RIGHT = [["__start__", "add", "double"]]
WRONG = [["__start__", "double", "add"]]


def test_the_terminal_lists_the_worst_twenty_and_the_files_every_result(folder: Path) -> None:
    rows = [{"dataset": {"name": "counter", "evaluators": ["graph_trajectory_strict_match"]}}]
    rows += [
        {
            "id": f"case-{n:02d}",
            "turns": [{"input": {"x": n}}],
            "expected": {"trajectory": {"steps": RIGHT if n < 2 else WRONG}},
        }
        for n in range(25)
    ]
    (folder / "cases.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    result = CliRunner().invoke(
        app,
        ["run", "cases.jsonl", "--graph", "graphs.counter:build", "--run-id", "r1",
         "--concurrency", "1", "--json", "r.json", "--junit", "r.xml"],
        catch_exceptions=False,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    shown = re.findall(r"✗ (case-\d\d)\s+failed", result.output)
    assert shown == [f"case-{n:02d}" for n in range(2, 22)]  # failed alike: in run order
    assert "… and 3 more that did not pass: lg-eval report r1 lists every result" in (
        " ".join(result.output.split())
    )
    listed = json.loads((folder / "r.json").read_text())
    assert [c["result"]["case_id"] for c in listed["cases"]] == [f"case-{n:02d}" for n in range(25)]
    assert (listed["cases_total"], listed["summary"]["counts"]["failed"]) == (None, 23)
    suite = ET.parse(folder / "r.xml").getroot()
    suite = suite if suite.tag == "testsuite" else suite[0]
    assert (suite.get("tests"), suite.get("failures")) == ("25", "23")
