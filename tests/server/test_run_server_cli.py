"""``lg-eval run DATASET --server URL --assistant NAME``: a golden dataset played on a real
``langgraph dev``, reported as the same dataset run locally; its failures exit 2 naming the
server or the assistant, and the API key is never printed nor written."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from lg_eval.cli import app
from lg_eval.cli._common import INPUT_ERROR, PASSED

ROOT = Path(__file__).resolve().parents[2]
WEATHER = str(ROOT / "examples" / "golden" / "weather.yaml")
KEY = "lsv2-cli-key-never-shown-42"
runner = CliRunner()


def lg_eval(*args: str) -> Any:
    return runner.invoke(app, ["run", *args], catch_exceptions=False)


def printed(result: Any) -> str:
    """What the command printed, as one line (the terminal wraps long messages)."""
    return " ".join(result.output.split())


def _cases(report: Path) -> Any:
    """Per case: status and each score with its verdict, from a JSON report."""
    data = json.loads(report.read_text())
    return {
        case["case_id"]: (
            case["status"],
            sorted((s["key"], s["score"], s["passed"]) for s in case["scores"]),
        )
        for case in (listed["result"] for listed in data["cases"])
    }


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(ROOT))
    return tmp_path


def test_run_on_the_server_reports_what_the_local_run_reports(server_url: str, here: Path) -> None:
    common = ["--quiet", "--no-cache"]
    local = lg_eval(WEATHER, "--checkpointer", "memory://", "--json", "local.json", *common)
    remote = lg_eval(
        WEATHER,
        *("--server", server_url, "--assistant", "weather", "--graph", "graphs.weather:build"),
        *("--api-key", KEY, "--header", f"x-auth={KEY}", "--json", "remote.json", *common),
    )
    assert (local.exit_code, remote.exit_code) == (PASSED, PASSED)
    assert _cases(here / "remote.json") == _cases(here / "local.json")
    assert set(_cases(here / "remote.json")) == {
        "sunny-sf",
        "sunny-sf-from-table",
        "weather-regression-demo",
    }
    written = [path.read_bytes() for path in here.rglob("*") if path.is_file()]
    assert len(written) >= 3  # the two reports and the results store
    assert [b for b in written if KEY.encode() in b] == []
    assert KEY not in remote.output


def test_unknown_assistant_exits_2_naming_it(server_url: str, here: Path) -> None:
    result = lg_eval(WEATHER, "--server", server_url, "--assistant", "wether", "--api-key", KEY)
    assert result.exit_code == INPUT_ERROR
    assert f"The LangGraph Server at {server_url} has no assistant 'wether'." in printed(result)
    assert KEY not in printed(result)


@pytest.fixture
def dropping() -> Iterator[str]:
    """A port that accepts every connection and closes it at once: a server that is down
    behind its listening socket (a crashed worker, a proxy with nothing behind it)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    done = threading.Event()

    def close_all() -> None:
        while not done.is_set():
            try:
                conn, _ = sock.accept()
            except OSError:
                return
            conn.close()

    thread = threading.Thread(target=close_all, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        done.set()
        sock.close()
        thread.join(timeout=5)


def test_a_server_that_drops_every_connection_exits_2_naming_it(dropping: str, here: Path) -> None:
    result = lg_eval(WEATHER, "--server", dropping, "--assistant", "weather", "--api-key", KEY)
    assert result.exit_code == INPUT_ERROR
    assert f"The LangGraph Server at {dropping} could not be reached" in printed(result)
    assert "after 3 attempt(s)" in printed(result)
    assert KEY not in printed(result)


@pytest.mark.parametrize(
    ("options", "said"),
    [
        (["--server", "http://127.0.0.1:2024"], "--server needs --assistant NAME"),
        (["--assistant", "weather"], "--assistant goes with --server URL"),
        (["--api-key", KEY], "--api-key and --header go with --server URL"),
        (["--header", "a=b"], "--api-key and --header go with --server URL"),
        (
            ["--server", "http://h:1", "--assistant", "w", "--checkpointer", "memory://"],
            "--checkpointer does not go with --server",
        ),
        (
            ["--server", "http://h:1", "--assistant", "w", "--langsmith"],
            "--langsmith does not go with --server",
        ),
        (["--server", "h:1", "--assistant", "w"], "server url='h:1' is not an http(s) URL"),
        (["--server", "http://h:1", "--assistant", " "], "assistant_id=' '"),
        (
            ["--server", "http://h:1", "--assistant", "w", "--header", f"Authorization: {KEY}"],
            "--header #1 is not NAME=VALUE (its text is not shown)",
        ),
        (
            ["--server", "http://h:1", "--assistant", "w", "--header", f"X-Api-Key={KEY}"],
            "headers={'X-Api-Key': ...}: the API key goes in api_key=",
        ),
    ],
)
def test_options_that_do_not_fit_a_server_exit_2(options: list[str], said: str, here: Path) -> None:
    result = lg_eval(WEATHER, *options)
    assert result.exit_code == INPUT_ERROR
    assert said in printed(result)
    assert KEY not in printed(result)
