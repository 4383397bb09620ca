"""What the first-hour CLI tests share: the command, and the files a folder holds."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from lg_eval.cli import app

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()


def lg_eval(*args: str) -> Any:
    """``lg-eval ARGS`` in this process (stdout and stderr apart)."""
    return runner.invoke(app, list(args), catch_exceptions=False)


def files(folder: Path) -> list[str]:
    """Every file and folder under ``folder``, relative to it: what a command left behind."""
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))
