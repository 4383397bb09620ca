"""Start ``langgraph dev`` on 127.0.0.1 serving every scenario of ``graphs/``.

Used by the server tests' session fixture and by ``tests/benchmarks/bench_server.py``:
a ``langgraph.json`` written to ``home``, tracing, telemetry and the browser off (no
request leaves the machine), stopped when the context ends.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from graphs.scenarios import EVERY_SCENARIO

ROOT = Path(__file__).resolve().parents[2]
SERVED = Path(__file__).with_name("served.py")


class ServerDidNotStart(RuntimeError):
    """``langgraph dev`` exited or did not answer ``/ok`` in time (the log is attached)."""


def free_port() -> int:
    """A port nothing listens on now, on 127.0.0.1."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def cli() -> Path | None:
    """The ``langgraph`` command next to this interpreter, if langgraph-cli is installed."""
    found = Path(sys.executable).with_name("langgraph")
    return found if found.exists() else None


@contextmanager
def serving(
    home: Path,
    command: Path,
    *,
    graphs: Mapping[str, str] | None = None,
    auth: str | None = None,
    env: Mapping[str, str] | None = None,
) -> Iterator[str]:
    """Run ``langgraph dev`` from ``home`` until the context ends; yields its URL.

    ``graphs`` (``{"name": "path.py:attr"}``) replaces the scenarios served, ``auth``
    (``"path.py:attr"``) installs a custom auth handler, ``env`` adds to the server's
    environment."""
    config: dict[str, object] = {
        "dependencies": [str(ROOT)],
        "graphs": dict(graphs) if graphs else {name: f"{SERVED}:{name}" for name in EVERY_SCENARIO},
    }
    if auth is not None:
        config["auth"] = {"path": auth}
    (home / "langgraph.json").write_text(json.dumps(config))
    port = free_port()
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
        "LANGSMITH_TRACING": "false",
        "LANGCHAIN_TRACING_V2": "false",
        "LANGGRAPH_CLI_NO_ANALYTICS": "1",
        "LANGSMITH_API_KEY": "",
        **(env or {}),
    }
    log = (home / "server.log").open("wb")
    process = subprocess.Popen(
        [
            *(str(command), "dev", "--no-browser", "--no-reload", "--host", "127.0.0.1"),
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
                raise ServerDidNotStart((home / "server.log").read_text())
            time.sleep(0.3)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()
