"""A real LangGraph Server for the server tests: ``langgraph dev`` on 127.0.0.1.

One server per session, serving every scenario of ``graphs/`` (see ``served.py``) from a
``langgraph.json`` written to a temporary directory, with tracing, telemetry and the
browser off (no request leaves the machine). It skips when langgraph-cli is not
installed, and fails instead under CI=true (as the Postgres fixtures do).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from graphs.scenarios import EVERY_SCENARIO

ROOT = Path(__file__).resolve().parents[2]
SERVED = Path(__file__).with_name("served.py")


def skip_or_fail(message: str) -> None:
    """Skip, or fail under CI=true where langgraph-cli is always installed."""
    if os.environ.get("CI", "").strip().lower() in {"1", "true", "yes"}:
        pytest.fail(f"CI=true but {message}", pytrace=False)
    pytest.skip(message)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _cli() -> Path | None:
    found = Path(sys.executable).with_name("langgraph")
    return found if found.exists() else None


@pytest.fixture(scope="session")
def server_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The URL of a running ``langgraph dev`` serving every scenario, by scenario name."""
    cli = _cli()
    if cli is None:
        skip_or_fail("langgraph-cli is not installed (pip install 'lg-eval[dev]')")
    assert cli is not None
    home = tmp_path_factory.mktemp("langgraph-server")
    config = {
        "dependencies": [str(ROOT)],
        "graphs": {name: f"{SERVED}:{name}" for name in EVERY_SCENARIO},
    }
    (home / "langgraph.json").write_text(json.dumps(config))
    port = _free_port()
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
        "LANGSMITH_TRACING": "false",
        "LANGCHAIN_TRACING_V2": "false",
        "LANGGRAPH_CLI_NO_ANALYTICS": "1",
        "LANGSMITH_API_KEY": "",
    }
    log = (home / "server.log").open("wb")
    process = subprocess.Popen(
        [
            *(str(cli), "dev", "--no-browser", "--no-reload", "--host", "127.0.0.1"),
            *("--port", str(port), "--config", str(home / "langgraph.json")),
        ],
        cwd=home,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                with urllib.request.urlopen(f"{url}/ok", timeout=1) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"langgraph dev did not start: {(home / 'server.log').read_text()}")
            time.sleep(0.3)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()
