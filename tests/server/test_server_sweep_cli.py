"""``lg-eval sweep --server``: the real CLI against the real guarded ``langgraph dev``.

The API key reaches the server (flag, ``$LANGGRAPH_API_KEY`` or a header) and nowhere
else: not the output, the reports or the results store.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lg_eval.cli import app
from lg_eval.server import API_KEY_ENV
from tests.server.echo_threads import another_turn, make_threads, newest_checkpoints
from tests.server.guarded import KEY

runner = CliRunner()


def _written(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` (reports, the store and its journal), by name."""
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_sweep_server_reports_is_incremental_and_never_shows_the_key(
    guarded_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    batch = uuid.uuid4().hex
    made = make_threads(guarded_url, {"batch": batch}, 4)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    base = [
        "sweep", "--server", guarded_url, "--assistant", "echo", "--metadata", f"batch={batch}",
        "--store", f"sqlite:///{out_dir / 'results.sqlite'}", "--name", "echo",
        "--evaluator", "tests.sweeps.helpers:turns",
    ]  # fmt: skip
    first = runner.invoke(
        app,
        [
            *base,
            "--api-key",
            KEY,
            "--json",
            str(out_dir / "a.json"),
            "--html",
            str(out_dir / "a.html"),
        ],
    )
    assert first.exit_code == 0, first.output
    document = json.loads((out_dir / "a.json").read_text())
    assert {t["thread_id"]: t["checkpoint_id"] for t in document["threads"]} == (
        newest_checkpoints(guarded_url, made)
    )
    assert {t["scores"]["turns"] for t in document["threads"]} == {1.0}
    assert document["info"]["dataset"] == "sweep:echo"

    another_turn(guarded_url, made[:1])
    monkeypatch.setenv(API_KEY_ENV, KEY)  # the key from the environment this time
    second = runner.invoke(app, [*base, "--quiet", "--json", str(out_dir / "b.json")])
    assert second.exit_code == 0, second.output
    changed = json.loads((out_dir / "b.json").read_text())["threads"]
    assert [(t["thread_id"], t["scores"]["turns"]) for t in changed] == [(made[0], 0.5)]
    monkeypatch.delenv(API_KEY_ENV)

    bearer = ["--header", f"Authorization=Bearer {KEY}", "--full", "--run-id", "by-header"]
    third = runner.invoke(app, [*base, *bearer, "--html", str(out_dir / "c.html")])
    assert third.exit_code == 0, third.output
    assert "4 threads scored" in third.output

    for text in (first.output, second.output, third.output):
        assert KEY not in text
    files = _written(out_dir)
    assert {"a.json", "a.html", "b.json", "c.html", "results.sqlite"} <= set(files)
    assert [name for name, data in files.items() if KEY.encode() in data] == []


def test_a_refused_key_exits_2_naming_the_server_and_not_the_key(
    guarded_url: str, tmp_path: Path
) -> None:
    wrong = "lsv2-sk-wrong-0123456789"
    store = ["--store", str(tmp_path / "r.sqlite")]
    out = runner.invoke(app, ["sweep", "--server", guarded_url, "--api-key", wrong, *store])
    assert out.exit_code == 2
    said = " ".join(out.output.split())
    assert f"The LangGraph Server at {guarded_url} refused the credentials (HTTP 401)" in said
    assert wrong not in out.output
    assert not (tmp_path / "r.sqlite").exists() or wrong.encode() not in (
        (tmp_path / "r.sqlite").read_bytes()
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--header", "Authorization: Bearer sekrit-123"], "--header #1 is not NAME=VALUE"),
        (["--status", "done"], "use one of idle, busy, interrupted, error"),
        (["--checkpointer", "sqlite:///x.sqlite"], "one of the two"),
    ],
)
def test_bad_server_options_exit_2(args: list[str], message: str, tmp_path: Path) -> None:
    out = runner.invoke(
        app, ["sweep", "--server", "http://127.0.0.1:1", *args, "--store", str(tmp_path / "r")]
    )
    assert out.exit_code == 2
    assert message in " ".join(out.output.split())
    assert "sekrit-123" not in out.output


def test_server_options_without_server_exit_2(tmp_path: Path) -> None:
    out = runner.invoke(
        app,
        ["sweep", "--graph", "tests.sweeps.helpers:build", "--checkpointer",
         f"sqlite:///{tmp_path / 'c.sqlite'}", "--api-key", "k"],
    )  # fmt: skip
    assert out.exit_code == 2
    assert "go with --server" in out.output
