"""Fixtures of the sweep tests."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from langgraph.checkpoint.sqlite import SqliteSaver

from tests.sweeps import helpers


@pytest.fixture
def threads(tmp_path: Path) -> dict[str, str]:
    """Two played threads (one tool call each) in a SQLite checkpointer, and where the sweep
    stores results."""
    conn = sqlite3.connect(tmp_path / "cp.sqlite", check_same_thread=False)
    helpers.populate(helpers.build(SqliteSaver(conn)), 2, 0)
    conn.close()
    return {
        "checkpointer": f"sqlite:///{tmp_path / 'cp.sqlite'}",
        "store": f"sqlite:///{tmp_path / 'results.sqlite'}",
    }
