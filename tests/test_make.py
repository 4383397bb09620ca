"""``make demo`` installs what the demo needs and ``make test`` the rest, on a fresh machine.

The real Makefile runs with ``VENV`` pointing at a folder whose ``bin/python`` is a stub
that records each command it is given (and succeeds), so the test sees exactly what each
target would install and run, without installing anything.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
STUB = """#!/bin/sh
echo "$*" >> "$(dirname "$0")/../calls.log"
"""


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A copy of the Makefile and pyproject.toml, and a venv whose python is the stub."""
    if shutil.which("make") is None:
        pytest.skip("make is not installed (.ci/run installs it)")
    for name in ("Makefile", "pyproject.toml"):
        shutil.copy(ROOT / name, tmp_path / name)
    python = tmp_path / "venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(STUB)
    python.chmod(0o755)
    return tmp_path


def make(checkout: Path, target: str) -> list[str]:
    """The commands the stub python was given by ``make TARGET``, in order."""
    log = checkout / "venv" / "calls.log"
    log.unlink(missing_ok=True)
    env = {**os.environ, "MAKEFLAGS": ""}
    done = subprocess.run(
        ["make", "--no-print-directory", "VENV=venv", "XDIST_ARGS=", target],
        cwd=checkout, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return log.read_text().splitlines() if log.exists() else []


def test_a_fresh_make_demo_installs_lg_eval_alone_then_runs_the_demo(checkout: Path) -> None:
    assert make(checkout, "demo") == [
        "-m pip install --quiet --upgrade pip",
        "-m pip install --quiet -e .",
        "examples/demo.py",
    ]
    assert make(checkout, "demo") == ["examples/demo.py"]  # installed once


def test_make_test_adds_the_test_tools_and_the_demo_keeps_them(checkout: Path) -> None:
    make(checkout, "demo")
    assert make(checkout, "test") == [
        "-m pip install --quiet --upgrade pip",
        "-m pip install --quiet -e .[dev,postgres,openai]",
        "-m pytest",
    ]
    assert make(checkout, "test") == ["-m pytest"]
    (checkout / "venv" / ".installed-demo").unlink()
    assert make(checkout, "demo") == ["examples/demo.py"]  # the full install serves it


def test_a_changed_pyproject_installs_again(checkout: Path) -> None:
    make(checkout, "demo")
    stamp = checkout / "venv" / ".installed-demo"
    os.utime(stamp, (1, 1))  # older than pyproject.toml, as after an edit
    assert make(checkout, "demo")[1] == "-m pip install --quiet -e ."
