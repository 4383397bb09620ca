"""Fixtures of the CLI tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.newcomer import ROOT


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty working folder (the current directory); the repository's example graphs
    import from it, as from a checkout's root."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(ROOT))
    return tmp_path
