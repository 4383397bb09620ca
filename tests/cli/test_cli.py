"""The lg-eval command line: exit codes, report files, stored runs, datasets, threads."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from lg_eval.cli import app
from lg_eval.experiments import open_store
from tests.experiments.graphs import starts

ROOT = Path(__file__).resolve().parents[2]
WEATHER = ROOT / "examples" / "golden" / "weather.yaml"
runner = CliRunner()


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Store and checkpointer under tmp_path; imports resolve from the repository root."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(ROOT))
    return {
        "store": f"sqlite:///{tmp_path / 'results.sqlite'}",
        "checkpointer": f"sqlite:///{tmp_path / 'checkpoints.sqlite'}",
    }


def invoke(*args: str) -> Any:
    return runner.invoke(app, list(args), catch_exceptions=False)


def run_weather(here: dict[str, str], run_id: str, *extra: str) -> Any:
    return invoke(
        "run", str(WEATHER), "--run-id", run_id, "--store", here["store"],
        "--checkpointer", here["checkpointer"], "--quiet", *extra,
    )  # fmt: skip


def test_run_writes_every_report_and_exits_0_without_a_gate(
    here: dict[str, str], tmp_path: Path
) -> None:
    out = tmp_path / "out"
    result = run_weather(
        here, "r1", "--json", str(out / "r.json"), "--html", str(out / "r.html"),
        "--md", str(out / "r.md"), "--junit", str(out / "r.xml"),
    )  # fmt: skip
    assert result.exit_code == 0
    data = json.loads((out / "r.json").read_text())
    rows = {(c["result"]["case_id"], c["result"]["status"]) for c in data["cases"]}
    assert rows == {
        ("sunny-sf", "passed"),
        ("sunny-sf-from-table", "passed"),
        ("weather-regression-demo", "failed"),
    }
    assert all(c["result"]["run_id"] == "r1" for c in data["cases"])
    suite = ET.parse(out / "r.xml").getroot()
    suite = suite if suite.tag == "testsuite" else suite[0]
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("3", "1", "0")
    assert "Content-Security-Policy" in (out / "r.html").read_text()
    assert "weather-regression-demo" in (out / "r.md").read_text()


def test_the_gate_fails_with_exit_1(here: dict[str, str]) -> None:
    assert run_weather(here, "r1", "--fail-under", "0.9").exit_code == 1
    assert run_weather(here, "r2", "--fail-under", "0.5").exit_code == 0


def test_a_run_stores_every_case_with_its_status(here: dict[str, str]) -> None:
    assert run_weather(here, "r1").exit_code == 0
    with open_store(here["store"]) as store:
        run = store.load_run("r1")
    assert [r.status for r in run.results] == ["passed", "passed", "failed"]
    assert "scoring" not in run.info.config


def test_a_bad_dataset_is_exit_2_naming_file_and_case(here: dict[str, str], tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: bad\ncases:\n  - id: c1\n    turns:\n      - {input: {}, resume: x}\n")
    result = invoke("dataset", "validate", str(bad))
    assert result.exit_code == 2
    assert "bad.yaml" in result.output and "c1" in result.output and "turns[0]" in result.output
    assert invoke("run", str(bad), "--quiet").exit_code == 2


def test_a_python_yaml_tag_runs_nothing(here: dict[str, str], tmp_path: Path) -> None:
    flag = tmp_path / "pwned"
    evil = tmp_path / "evil.yaml"
    evil.write_text(f"name: !!python/object/apply:os.system ['touch {flag}']\ncases: []\n")
    result = invoke("dataset", "validate", str(evil))
    assert result.exit_code == 2
    assert "evil.yaml:1:" in " ".join(result.output.split())
    assert not flag.exists()


def test_validate_counts_the_cases_of_good_files(here: dict[str, str]) -> None:
    result = invoke("dataset", "validate", str(WEATHER))
    assert result.exit_code == 0
    assert "weather.yaml: 3 cases, valid" in result.output


def test_runs_report_and_compare_read_the_store(here: dict[str, str], tmp_path: Path) -> None:
    assert run_weather(here, "base").exit_code == 0
    regressed = tmp_path / "regressed.yaml"
    text = WEATHER.read_text()
    expectation = 'output: {contains: [sunny, "75"]}'
    assert expectation in text
    regressed.write_text(text.replace(expectation, "output: {contains: [rain]}", 1))
    result = invoke(
        "run", str(regressed), "--run-id", "worse", "--store", here["store"],
        "--checkpointer", here["checkpointer"], "--quiet",
    )  # fmt: skip
    assert result.exit_code == 0
    listed = invoke("runs", "--store", here["store"])
    assert "base" in listed.output and "worse" in listed.output
    report = invoke("report", "base", "--store", here["store"], "--format", "json")
    assert {c["result"]["case_id"] for c in json.loads(report.output)["cases"]} == {
        "sunny-sf",
        "sunny-sf-from-table",
        "weather-regression-demo",
    }
    assert invoke("compare", "base", "base", "--store", here["store"]).exit_code == 0
    compared = invoke("compare", "base", "worse", "--store", here["store"], "--format", "json")
    assert compared.exit_code == 1
    unknown = invoke("report", "nope", "--store", here["store"])
    assert unknown.exit_code == 2 and "no run 'nope'" in unknown.output


def test_extract_and_from_thread_read_a_stored_thread(here: dict[str, str]) -> None:
    assert run_weather(here, "r1").exit_code == 0
    thread = "r1:sunny-sf:0:1"  # run:case:repetition:attempt (attempts count from 1)
    extracted = invoke(
        "extract", "--graph", "graphs.weather:build", "--thread", thread,
        "--checkpointer", here["checkpointer"], "--format", "json",
    )  # fmt: skip
    assert extracted.exit_code == 0
    body = extracted.output[extracted.output.index("{") :]
    assert [len(t["supersteps"]) > 0 for t in json.loads(body)["turns"]] == [True, True]
    case = invoke(
        "dataset", "from-thread", "--graph", "graphs.weather:build", "--thread", thread,
        "--checkpointer", here["checkpointer"], "--case-id", "grown", "-o", "grown.yaml",
    )  # fmt: skip
    assert case.exit_code == 0
    grown = Path("grown.yaml").read_text()
    assert "id: grown" in grown and "It's sunny and 75 degrees" in grown
    replay = invoke(
        "run", "grown.yaml", "--run-id", "replay", "--store", here["store"],
        "--checkpointer", here["checkpointer"], "--quiet", "--fail-under", "1",
    )  # fmt: skip
    assert replay.exit_code == 0


def test_a_password_in_a_url_is_never_printed(here: dict[str, str], tmp_path: Path) -> None:
    url = "postgresql://user:PASSWORD@127.0.0.1:9/db"
    for option in ("--checkpointer", "--store"):
        result = runner.invoke(app, ["run", str(WEATHER), option, url, "--quiet"])
        assert result.exit_code != 0
        assert "PASSWORD" not in result.output
        assert "***" in result.output or "127.0.0.1" in result.output
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert b"PASSWORD" not in path.read_bytes(), path


def test_a_killed_cli_run_resumes_rerunning_at_most_the_cases_in_flight(tmp_path: Path) -> None:
    """kill -9 the CLI mid-run; the same --run-id stores each case once, equal to an
    uninterrupted run, and starts again only cases that were in flight: for these quick
    cases, at most a batch per worker (``--concurrency`` batches). The cases from the 20th
    on wait for a file until the kill, so the kill always lands mid-run."""
    log, cases, concurrency = tmp_path / "starts.log", 60, 2
    go, held_from = tmp_path / "go", 20
    data = tmp_path / "quick.yaml"
    data.write_text(
        json.dumps(
            {
                "name": "quick",
                "graph": "tests.experiments.graphs:slow_echo",
                "cases": [
                    {
                        "id": f"c{n:02d}",
                        "turns": [
                            {
                                "input": {"text": f"w{n}", "delay": 0.005, "log": str(log)}
                                | ({"hold": str(go)} if n >= held_from else {})
                            }
                        ],
                        "expected": {"output": f"W{n}" if n % 3 else "nope"},
                    }
                    for n in range(cases)
                ],
            }
        )
    )
    store = tmp_path / "results.sqlite"

    def command(run_id: str) -> list[str]:
        return [
            sys.executable, "-m", "lg_eval", "run", str(data), "--run-id", run_id, "--store",
            f"sqlite:///{store}", "--checkpointer", f"sqlite:///{tmp_path / 'cp.sqlite'}",
            "--concurrency", str(concurrency), "--quiet",
        ]  # fmt: skip

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(command("k1"), cwd=ROOT, env=env, start_new_session=True)
    deadline = time.monotonic() + 300  # a guard against a hang, not a measure of speed
    while _stored(store) < held_from or "w20" not in starts(log):
        assert process.poll() is None and time.monotonic() < deadline
        time.sleep(0.01)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    assert _stored(store) == held_from  # killed mid-run
    go.touch()
    resumed = subprocess.run(command("k1"), cwd=ROOT, env=env, capture_output=True, timeout=120)
    assert resumed.returncode == 0, resumed.stderr.decode()
    started = starts(log)
    clean = subprocess.run(command("clean"), cwd=ROOT, env=env, capture_output=True, timeout=120)
    assert clean.returncode == 0, clean.stderr.decode()
    with sqlite3.connect(store) as connection:
        stored = {
            run_id: connection.execute(
                "SELECT case_id, status, result FROM lg_eval_cases WHERE run_id = ?"
                " ORDER BY ordinal",
                (run_id,),
            ).fetchall()
            for run_id in ("k1", "clean")
        }
    assert [row[0] for row in stored["k1"]] == [f"c{n:02d}" for n in range(cases)]  # each once
    assert [_essentials(row) for row in stored["k1"]] == [
        _essentials(row) for row in stored["clean"]
    ]
    assert set(started) == {f"w{n}" for n in range(cases)}
    restarted = sorted(text for text, count in started.items() if count > 1)
    assert len(restarted) <= 2 * concurrency, restarted  # one playing, one being scored


def _essentials(row: tuple[str, str, str]) -> tuple[Any, ...]:
    """What a resumed case and the same case of an uninterrupted run must share."""
    result = json.loads(row[2])
    return row[0], row[1], result["trajectory"], result["error"], result["turns"]


def _stored(store: Path) -> int:
    if not store.exists():
        return 0
    try:
        with sqlite3.connect(store, timeout=1) as connection:
            return int(connection.execute("SELECT COUNT(*) FROM lg_eval_cases").fetchone()[0])
    except sqlite3.OperationalError:
        return 0


def test_langsmith_without_a_key_is_exit_2_saying_what_to_set(
    here: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("LANGSMITH_API_KEY", raising=False)
    result = invoke("run", str(WEATHER), "--langsmith")
    assert result.exit_code == 2
    assert "LANGSMITH_API_KEY is not set" in " ".join(result.output.split())
