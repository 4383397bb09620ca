"""``lg-eval labels import|harvest``, ``lg-eval calibrate`` and ``--min-judge-kappa``.

Over real runs of the weather dataset (its ``graph_trajectory_strict_match`` verdicts:
``sunny-sf`` and ``sunny-sf-from-table`` pass, ``weather-regression-demo`` fails) and a
person's labels of the first run (pass, fail, fail): two of three agree, and kappa is
(2/3 − 4/9) / (1 − 4/9) = 0.4, computed here by hand.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.sqlite import SqliteSaver
from typer.testing import CliRunner

from lg_eval.cli import app
from tests import travel
from tests.calibration.labelled import play_bookings
from tests.cli.newcomer import ROOT

WEATHER = ROOT / "examples" / "golden" / "weather.yaml"
KEY = "graph_trajectory_strict_match"
runner = CliRunner()


def invoke(*args: str) -> Any:
    return runner.invoke(app, list(args), catch_exceptions=False)


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """A store holding run ``r1`` of the weather dataset and a person's labels of it."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(ROOT))
    found = {
        "store": f"sqlite:///{tmp_path / 'results.sqlite'}",
        "checkpointer": f"sqlite:///{tmp_path / 'checkpoints.sqlite'}",
    }
    assert run(found, "r1").exit_code == 0
    (tmp_path / "labels.csv").write_text(
        "key,run_id,case_id,verdict,note,labeler\n"
        f"{KEY},r1,sunny-sf,pass,,alice\n"
        f"{KEY},r1,sunny-sf-from-table,fail,The table's answer is not the tool's.,alice\n"
        f"{KEY},r1,weather-regression-demo,fail,,alice\n",
        encoding="utf-8",
    )
    imported = invoke("labels", "import", str(tmp_path / "labels.csv"), "--store", found["store"])
    assert (
        imported.exit_code == 0
        and imported.stdout == f"{tmp_path / 'labels.csv'}: 3 labels stored\n"
    )
    return found


def run(here: dict[str, str], run_id: str, *extra: str) -> Any:
    return invoke(
        "run", str(WEATHER), "--run-id", run_id, "--store", here["store"],
        "--checkpointer", here["checkpointer"], "--quiet", *extra,
    )  # fmt: skip


def test_calibrate_prints_the_agreement_and_each_disagreement(here: dict[str, str]) -> None:
    shown = invoke("calibrate", KEY, "--store", here["store"])
    assert shown.exit_code == 0
    first = shown.stdout.splitlines()[0]
    assert first.startswith(f"{KEY}: κ 0.40 [") and first.endswith("] on 3 labelled cases")
    assert "3 labels of 'graph_trajectory_strict_match' (all), 3 cases paired" in shown.stderr
    assert "sunny-sf-from-table (r1): judge pass:" in shown.stdout
    assert "| person fail (alice): The table's answer is not the tool's." in shown.stdout
    data = json.loads(invoke("calibrate", KEY, "--store", here["store"], "-f", "json").stdout)
    assert data["agreement"]["confusion"] == [[1, 1], [0, 1]]
    assert data["agreement"]["kappa"]["value"] == pytest.approx((2 / 3 - 4 / 9) / (1 - 4 / 9))
    assert [d["case_id"] for d in data["disagreements"]] == ["sunny-sf-from-table"]


def test_calibrate_writes_few_shot_examples_and_measures_the_held_out_cases(
    here: dict[str, str], tmp_path: Path
) -> None:
    from lg_eval.labels import label_split

    case = "sunny-sf-from-table"
    salt = next(s for s in map(str, range(100))
                if label_split(case, fraction=0.5, salt=s) == "examples")  # fmt: skip
    out = tmp_path / "examples.json"
    shown = invoke(
        "calibrate", KEY, "--store", here["store"], "--examples", str(out),
        "--fraction", "0.5", "--salt", salt, "--held-out", "-f", "json",
    )  # fmt: skip
    assert shown.exit_code == 0
    [example] = json.loads(out.read_text())
    assert example["score"] is False
    assert example["reasoning"] == (
        "A person judged this case: fail. The table's answer is not the tool's."
    )
    assert example["inputs"] == {
        "messages": [{"role": "user", "content": "what's the weather in sf?"}]
    }
    assert "1 examples from 1 disagreements on the examples side" in shown.stderr
    held = json.loads(shown.stdout.split("\nwrote")[0])
    assert held["split"] == "held_out"
    assert "sunny-sf-from-table" not in {d["case_id"] for d in held["disagreements"]}


def test_min_judge_kappa_lets_a_calibrated_judge_gate(here: dict[str, str]) -> None:
    result = run(here, "r2", "--fail-under", "0.5", "--min-judge-kappa", f"{KEY}=0.3")
    assert result.exit_code == 0, result.stderr


def test_min_judge_kappa_refuses_a_judge_below_it_or_never_calibrated(
    here: dict[str, str],
) -> None:
    short = run(here, "r2", "--min-judge-kappa", f"{KEY}=0.5")
    assert short.exit_code == 1
    assert f"judge {KEY!r} agrees with people at κ 0.40 [" in short.stderr
    assert f"below --min-judge-kappa {KEY}=0.5." in short.stderr
    never = run(here, "r3", "--min-judge-kappa", "graph_trajectory_superset_match=0.2")
    assert never.exit_code == 1
    assert "judge 'graph_trajectory_superset_match' has not been calibrated" in never.stderr
    compared = invoke("compare", "r1", "r2", "--store", here["store"],
                      "--min-judge-kappa", f"{KEY}=0.5")  # fmt: skip
    assert compared.exit_code == 1 and "below --min-judge-kappa" in compared.stderr
    trusted = invoke("compare", "r1", "r2", "--store", here["store"],
                     "--min-judge-kappa", f"{KEY}=0.4")  # fmt: skip
    assert trusted.exit_code == 0


@pytest.mark.parametrize(
    ("option", "message"),
    [
        (f"{KEY}=2", f"--min-judge-kappa {KEY}=2: kappa is between -1 and 1"),
        ("nokey", "--min-judge-kappa takes KEY=VALUE, got 'nokey'"),
        ("tone=0.5", "--min-judge-kappa tone: the run has no feedback key 'tone'"),
    ],
)
def test_a_bad_min_judge_kappa_is_exit_2(here: dict[str, str], option: str, message: str) -> None:
    result = run(here, "r2", "--min-judge-kappa", option)
    assert result.exit_code == 2 and message in result.stderr


def test_the_report_shows_the_agreement_beside_the_judges_score(here: dict[str, str]) -> None:
    shown = invoke("report", "r1", "--store", here["store"])
    assert f"calibration: {KEY} κ 0.40 [" in " ".join(shown.stdout.split())
    data = json.loads(invoke("report", "r1", "--store", here["store"], "-f", "json").stdout)
    assert [c["key"] for c in data["calibration"]] == [KEY]
    markdown = invoke("report", "r1", "--store", here["store"], "-f", "md").stdout
    assert "## Calibration" in markdown and "The table's answer is not the tool's." in markdown


def test_labels_harvest_stores_the_decisions_of_a_checkpointers_threads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(ROOT))
    conn = sqlite3.connect(tmp_path / "checkpoints.sqlite", check_same_thread=False)
    saver = SqliteSaver(conn)
    saver.setup()
    play_bookings(travel.agent([], checkpointer=saver), {"t01": "approve", "t02": "reject"})
    conn.close()
    store = f"sqlite:///{tmp_path / 'results.sqlite'}"
    harvested = invoke(
        "labels", "harvest", "--graph", "tests.travel:graph", "--checkpointer",
        f"sqlite:///{tmp_path / 'checkpoints.sqlite'}", "--store", store, "--key", "booking",
    )  # fmt: skip
    assert harvested.exit_code == 0, harvested.stderr
    assert harvested.stdout == "2 labels stored (interrupt)\n"
    with sqlite3.connect(tmp_path / "results.sqlite") as db:
        rows = db.execute("SELECT key, thread_id, turn, item, verdict FROM lg_eval_labels"
                          " ORDER BY thread_id").fetchall()  # fmt: skip
    assert rows == [
        ("booking", "t01", 1, "c-book", "true"),
        ("booking", "t02", 1, "c-book", "false"),
    ]
    missing = invoke("labels", "harvest", "--checkpointer", "sqlite:///nope.sqlite", "--graph",
                     "tests.travel:graph", "--store", store)  # fmt: skip
    assert missing.exit_code == 2 and "no checkpointer file at nope.sqlite" in missing.stderr


def test_labels_import_refuses_a_bad_file_naming_its_line(
    here: dict[str, str], tmp_path: Path
) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"key": "k", "verdict": true, "labeler": "a"}\n', encoding="utf-8")
    result = invoke("labels", "import", str(bad), "--store", here["store"])
    assert result.exit_code == 2
    assert f"{bad}:1: label=" in result.stderr and "run_id and case_id" in result.stderr
