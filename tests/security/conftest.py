"""Shared ground of the hostile-input tests: a CLI runner, a repository-rooted cwd, a full disk."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from lg_eval.cli import app

ROOT = Path(__file__).resolve().parents[2]
WEATHER = ROOT / "examples" / "golden" / "weather.yaml"
runner = CliRunner()


def invoke(*args: str) -> Any:
    """``lg-eval ARGS`` in process; an exception that escapes the CLI fails the test."""
    return runner.invoke(app, list(args), catch_exceptions=False)


def squash(text: str) -> str:
    """``text`` without any whitespace: rich wraps (and folds) long lines at the width of the
    test's pseudo-terminal, so messages are compared with every break taken out."""
    return "".join(text.split())


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Store and checkpointer under tmp_path; imports resolve from the repository root."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(ROOT))
    return {
        "store": f"sqlite:///{tmp_path / 'results.sqlite'}",
        "checkpointer": f"sqlite:///{tmp_path / 'checkpoints.sqlite'}",
    }


def fill(mount: Path) -> None:
    """Write to ``mount`` until the filesystem refuses another byte (ENOSPC)."""
    with (mount / "filler").open("ab", buffering=0) as handle:
        try:
            while True:
                handle.write(b"x" * 512)
        except OSError:
            pass


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A directory on a real 16 KiB tmpfs (needs root); :func:`fill` fills it."""
    mount = tmp_path / "small"
    mount.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=16k,mode=0777", "tmpfs", str(mount)],
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)
