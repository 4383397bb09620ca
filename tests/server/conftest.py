"""A real LangGraph Server for the server tests: ``langgraph dev`` on 127.0.0.1.

One server per session (see ``launch.py``). It skips when langgraph-cli is not installed,
and fails instead under CI=true (as the Postgres fixtures do).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.server import guarded
from tests.server.launch import ServerDidNotStart, cli, serving


def skip_or_fail(message: str) -> None:
    """Skip, or fail under CI=true where langgraph-cli is always installed."""
    if os.environ.get("CI", "").strip().lower() in {"1", "true", "yes"}:
        pytest.fail(f"CI=true but {message}", pytrace=False)
    pytest.skip(message)


def launched(home: Path, what: str, **options: Any) -> Iterator[str]:
    """The URL of ``langgraph dev`` run from ``home`` (``options`` as :func:`serving` takes
    them) while the generator is open; ``what`` names it when it does not start."""
    command = cli()
    if command is None:
        skip_or_fail("langgraph-cli is not installed (pip install 'lg-eval[dev]')")
    assert command is not None
    try:
        with serving(home, command, **options) as url:
            yield url
    except ServerDidNotStart as exc:
        pytest.fail(f"langgraph dev{what} did not start: {exc}")


@pytest.fixture(scope="session")
def server_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The URL of a running ``langgraph dev`` serving every scenario, by scenario name."""
    yield from launched(tmp_path_factory.mktemp("langgraph-server"), "")


@pytest.fixture(scope="session")
def guarded_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A second ``langgraph dev``: :mod:`tests.server.guarded`'s tiny graph ``echo`` behind
    its real custom auth handler, which answers 401 unless ``x-api-key`` is ``guarded.KEY``."""
    module = guarded.__file__
    yield from launched(
        tmp_path_factory.mktemp("guarded-server"),
        " (guarded)",
        graphs={"echo": f"{module}:graph"},
        auth=f"{module}:auth",
        env={guarded.KEY_ENV: guarded.KEY},
    )
