"""Commands that only read never create a file: a missing store or checkpointer file is
one line and exit 2, and the folder is left exactly as it was."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.newcomer import ROOT, files, lg_eval

NO_STORE = (
    "lg-eval: no results store at .lg_eval/results.sqlite: the file does not exist. Run "
    "`lg-eval run DATASET` here first, or pass --store with the store's URL."
)


@pytest.mark.parametrize(
    "command",
    [["runs"], ["report", "r1"], ["compare", "r1", "r2"], ["view", "--port", "0"]],
    ids=["runs", "report", "compare", "view"],
)
def test_a_folder_without_a_store_says_there_is_none(folder: Path, command: list[str]) -> None:
    result = lg_eval(*command)
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [NO_STORE]
    assert files(folder) == []


def test_a_store_url_with_a_typo_names_the_file_and_the_url(folder: Path) -> None:
    result = lg_eval("runs", "--store", "sqlite:///results/nightly.sqlite")
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        "lg-eval: no results store at results/nightly.sqlite (sqlite:///results/nightly.sqlite): "
        "the file does not exist. Run `lg-eval run DATASET` here first, or pass --store with "
        "the store's URL."
    ]
    assert files(folder) == []


@pytest.mark.parametrize(
    ("command", "shown"),
    [
        (["extract", "--graph", "graphs.weather:build", "--thread", "t1"], "no --checkpointer"),
        (
            ["extract", "--graph", "graphs.weather:build", "--thread", "t1", "--checkpointer",
             "sqlite:///prod.sqlite"],
            "--checkpointer sqlite:///prod.sqlite",
        ),
        (
            ["dataset", "from-thread", "--graph", "graphs.weather:build", "--thread", "t1",
             "--checkpointer", "sqlite:///prod.sqlite"],
            "--checkpointer sqlite:///prod.sqlite",
        ),
        (
            ["sweep", "--graph", "graphs.weather:build", "--checkpointer",
             "sqlite:///prod.sqlite"],
            "--checkpointer sqlite:///prod.sqlite",
        ),
    ],
    ids=["extract-default", "extract", "from-thread", "sweep"],
)  # fmt: skip
def test_a_missing_checkpointer_file_is_named_not_created(
    folder: Path, command: list[str], shown: str
) -> None:
    result = lg_eval(*command)
    assert result.exit_code == 2
    path = ".lg_eval/checkpoints.sqlite" if shown == "no --checkpointer" else "prod.sqlite"
    assert result.stderr.splitlines() == [
        f"lg-eval: no checkpointer file at {path} ({shown}): the file does not exist. Pass "
        "--checkpointer with the URL of the SQLite file (sqlite:///path) or Postgres server "
        "that holds the threads."
    ]
    assert files(folder) == []


def test_an_existing_store_is_read_and_left_as_it_was(folder: Path) -> None:
    dataset = ROOT / "examples" / "golden" / "weather.yaml"
    assert lg_eval("run", str(dataset), "--run-id", "r1", "--quiet").exit_code == 0
    before = {p: p.stat().st_size for p in (folder / ".lg_eval").iterdir() if p.suffix}
    listed = lg_eval("runs")
    assert listed.exit_code == 0
    assert "r1" in listed.stdout
    missing = lg_eval("report", "nope")
    assert missing.exit_code == 2
    assert missing.stderr.startswith("lg-eval: no run 'nope' in the store")
    after = {p: p.stat().st_size for p in (folder / ".lg_eval").iterdir() if p.suffix}
    assert after == before
