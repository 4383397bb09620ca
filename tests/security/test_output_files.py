"""Report files and the folders lg_eval creates (#40 item 5), and store URLs with a typo
(#39 item 2).

A report path someone planted as a symlink is replaced by the report, never followed: not
for its content, not for its mode. Every folder lg_eval creates is owner-only whatever the
umask. A misspelled URL (``sqlite//x``, ``sqlite:/x``, ``postgresql:/u:pw@h``) is refused
with exit 2 and creates nothing; a writing command that creates a folder for its store says
so; a read-only production checkpointer that is not there is an error, not a new file.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from lg_eval.cli._common import INPUT_ERROR
from tests.security.conftest import WEATHER, invoke, squash

PASSWORD = "hunter2secret"


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


@pytest.fixture
def open_umask() -> Iterator[None]:
    """The most permissive umask: whatever lg_eval creates gets exactly the mode it asks."""
    old = os.umask(0)
    try:
        yield
    finally:
        os.umask(old)


@pytest.fixture
def stored(here: dict[str, str]) -> dict[str, str]:
    result = invoke(
        "run", str(WEATHER), "--run-id", "r1", "--store", here["store"],
        "--checkpointer", here["checkpointer"], "--quiet",
    )  # fmt: skip
    assert result.exit_code in (0, 3), result.output
    return here


# --- a planted symlink is replaced, not followed --------------------------------------------


@pytest.mark.parametrize("fmt", ["json", "html", "md", "junit"])
def test_a_symlink_planted_at_the_report_path_is_replaced_not_followed(
    stored: dict[str, str], tmp_path: Path, fmt: str
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    victim = elsewhere / "shared.txt"
    victim.write_text("someone else's file\n")
    os.chmod(victim, 0o644)
    planted = tmp_path / f"report.{fmt}"
    planted.symlink_to(victim)
    result = invoke("report", "r1", "--store", stored["store"], "-f", fmt, "-o", str(planted))
    assert result.exit_code == 0, result.output
    assert not planted.is_symlink() and planted.is_file()
    assert _mode(planted) == 0o600  # owner-only, not the 0644 of what the link pointed at
    assert victim.read_text() == "someone else's file\n" and _mode(victim) == 0o644
    assert "r1" in planted.read_text()


def test_a_dangling_symlink_at_the_report_path_creates_nothing_where_it_points(
    stored: dict[str, str], tmp_path: Path
) -> None:
    target = tmp_path / "not-here" / "x.html"
    planted = tmp_path / "report.html"
    planted.symlink_to(target)
    result = invoke("report", "r1", "--store", stored["store"], "-f", "html", "-o", str(planted))
    assert result.exit_code == 0, result.output
    assert not planted.is_symlink() and _mode(planted) == 0o600
    assert not target.parent.exists()


def test_a_report_file_that_exists_keeps_its_mode(stored: dict[str, str], tmp_path: Path) -> None:
    shared = tmp_path / "shared.md"
    shared.write_text("old\n")
    os.chmod(shared, 0o644)
    result = invoke("report", "r1", "--store", stored["store"], "-f", "md", "-o", str(shared))
    assert result.exit_code == 0 and _mode(shared) == 0o644


# --- folders lg_eval creates are owner-only, whatever the umask --------------------------


def test_every_folder_lg_eval_creates_is_0700_under_an_open_umask(
    here: dict[str, str], tmp_path: Path, open_umask: None
) -> None:
    store = tmp_path / "s1" / "s2" / "results.sqlite"
    checkpoints = tmp_path / "c1" / "c2" / "checkpoints.sqlite"
    report = tmp_path / "r1" / "r2" / "report.html"
    result = invoke(
        "run", str(WEATHER), "--run-id", "u1", "--store", f"sqlite:///{store}",
        "--checkpointer", f"sqlite:///{checkpoints}", "--html", str(report), "--quiet",
    )  # fmt: skip
    assert result.exit_code in (0, 3), result.output
    for folder in ("s1", "s1/s2", "c1", "c1/c2", "r1", "r1/r2"):
        assert _mode(tmp_path / folder) == 0o700, folder
    for file in (store, checkpoints, report):
        assert _mode(file) == 0o600, file
    assert squash(f"creating folder {tmp_path / 's1'} for the results store") in squash(
        result.stderr
    )
    assert squash(f"creating folder {tmp_path / 'c1'} for the checkpointer") in squash(
        result.stderr
    )


def test_a_store_in_an_existing_folder_is_not_announced(
    here: dict[str, str], tmp_path: Path
) -> None:
    result = invoke(
        "run", str(WEATHER), "--run-id", "u2", "--store", here["store"],
        "--checkpointer", here["checkpointer"], "--quiet",
    )  # fmt: skip
    assert result.exit_code in (0, 3) and "creating folder" not in result.stderr


# --- URLs with a typo (#39 item 2) -----------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "fix"),
    [
        ("sqlite//x.sqlite", "sqlite:///relative/file.sqlite"),
        ("sqlite:/x.sqlite", "sqlite:///relative/file.sqlite"),
        ("sqlite:x.sqlite", "sqlite:///relative/file.sqlite"),
        (f"postgresql:/u:{PASSWORD}@127.0.0.1/db", "postgresql://user:password@host:port/dbname"),
        (f"postgres//u:{PASSWORD}@127.0.0.1/db", "postgresql://user:password@host:port/dbname"),
        ("file:prod.sqlite", "sqlite:///…"),
    ],
)
@pytest.mark.parametrize("option", ["--store", "--checkpointer"])
def test_a_misspelled_url_is_refused_and_creates_nothing(
    here: dict[str, str], tmp_path: Path, url: str, fix: str, option: str
) -> None:
    before = sorted(os.listdir(tmp_path))
    other = "--checkpointer" if option == "--store" else "--store"
    result = invoke(
        "run", str(WEATHER), "--run-id", "t1", option, url, other, here[other[2:]], "--quiet"
    )
    assert result.exit_code == INPUT_ERROR, result.output
    message = squash(result.stderr)
    assert squash("is a malformed URL") in message and squash(fix) in message
    assert PASSWORD not in result.output
    assert len(result.stderr.strip().splitlines()) == 1 or "\n" not in result.stderr.strip()
    created = sorted(set(os.listdir(tmp_path)) - set(before))
    assert all(name.endswith(".sqlite") for name in created), created  # the other option's
    assert not any(name.startswith(("sqlite", "postgres", "file")) for name in created)


def test_replay_refuses_a_production_file_that_is_not_there_and_creates_nothing(
    here: dict[str, str], tmp_path: Path
) -> None:
    result = invoke(
        "replay", "--graph", "tests.replay.helpers:build_v2",
        "--checkpointer", "sqlite:///prdo/prod.sqlite", "--evaluator", "tests.replay.helpers:nodes",
    )  # fmt: skip
    assert result.exit_code == INPUT_ERROR, result.output
    assert squash("checkpointer: no SQLite file at prdo/prod.sqlite") in squash(result.stderr)
    assert not (tmp_path / "prdo").exists()
