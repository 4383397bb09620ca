"""Fixtures for the runner tests: everything lives under ``tmp_path``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lg_eval.datasets import Dataset


@pytest.fixture
def where(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """Checkpointer and store URLs in ``tmp_path`` (also the working directory)."""
    monkeypatch.chdir(tmp_path)
    return {
        "checkpointer": f"sqlite:///{tmp_path / 'checkpoints.sqlite'}",
        "store": f"sqlite:///{tmp_path / 'results.sqlite'}",
        "judge_cache": tmp_path / "judge_cache.sqlite",
    }


def dataset(name: str, cases: list[dict[str, Any]], **extra: Any) -> Dataset:
    return Dataset.model_validate({"name": name, "cases": cases, **extra})


def ask(text: str, **state: Any) -> list[dict[str, Any]]:
    return [{"input": {"text": text, **state}}]


USER = [{"input": {"messages": [{"role": "user", "content": "what is the answer?"}]}}]
