"""A password in a reachable Postgres URL is used to connect and shown nowhere."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pytest

from lg_eval import run_experiment
from lg_eval.experiments import open_store
from tests.experiments.conftest import dataset
from tests.experiments.test_targets import WEATHER, WEATHER_STEPS

pytestmark = pytest.mark.postgres


def with_password(dsn: str, password: str) -> str:
    parts = urlsplit(dsn)
    user = parts.username or "postgres"
    netloc = f"{user}:{password}@{parts.hostname}:{parts.port}"
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def test_the_run_record_shows_the_password_as_stars(
    pg_dsn: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    url = with_password(pg_dsn, "PASSWORD")  # the test server trusts local connections
    cases: list[dict[str, Any]] = [
        {"id": "sf", "turns": WEATHER, "expected": {"trajectory": {"steps": WEATHER_STEPS}}}
    ]
    store = f"sqlite:///{tmp_path / 'results.sqlite'}"
    run_id = f"secret-{uuid.uuid4().hex[:8]}"  # threads live in the shared test database
    run = run_experiment("graphs.weather:build", dataset("secret", cases), checkpointer=url,
                         store=store, run_id=run_id)  # fmt: skip
    assert [(r.status, r.error) for r in run.results] == [("passed", None)]
    assert "PASSWORD" not in run.info.checkpointer and ":***@" in run.info.checkpointer
    with open_store(store) as results:
        assert results.load_run(run_id).info.checkpointer == run.info.checkpointer
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert b"PASSWORD" not in path.read_bytes(), path
