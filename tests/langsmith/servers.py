"""Loopback HTTP servers for the LangSmith tests: nothing here talks to the internet.

* :class:`RecordingServer` answers every request with an error and records it, so a
  test can assert that an offline path made **zero** requests (it is the
  ``LANGSMITH_ENDPOINT`` of those tests).
* :class:`DatasetServer` implements the few dataset and example endpoints
  ``langsmith.Client`` uses to push and pull a dataset (``/info``, ``/datasets``,
  ``/examples``, ``/examples/bulk``), in memory.

Both bind ``127.0.0.1`` on a free port and run in a daemon thread. Run as a script
(``python tests/langsmith/servers.py record``) a recording server prints its port and
then one line per request, for the subprocess tests.
"""

from __future__ import annotations

import json
import sys
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        return

    def _handle(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        self.server.owner.record(self.command, self.path, dict(self.headers), body)
        status, payload = self.server.owner.respond(self.command, self.path, body)
        data = json.dumps(payload, default=str).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _handle


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    owner: RecordingServer


class RecordingServer:
    """Records every request; answers each with ``503`` (nothing is meant to arrive)."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str]] = []
        self.headers: list[dict[str, str]] = []
        self._lock = threading.Lock()
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.owner = self
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> RecordingServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def record(self, method: str, path: str, headers: dict[str, str], body: bytes) -> None:
        with self._lock:
            self.requests.append((method, path))
            self.headers.append(headers)
        if self._echo:
            print(method, path, flush=True)

    _echo = False

    def respond(self, method: str, path: str, body: bytes) -> tuple[int, Any]:
        return 503, {"detail": "recording server: no request was expected"}


class DatasetServer(RecordingServer):
    """The dataset and example endpoints of the LangSmith API, kept in memory."""

    def __init__(self) -> None:
        super().__init__()
        self.datasets: dict[str, dict[str, Any]] = {}
        self.examples: dict[str, dict[str, Any]] = {}

    def respond(self, method: str, path: str, body: bytes) -> tuple[int, Any]:
        parts = urlsplit(path)
        query = parse_qs(parts.query)
        route = parts.path.rstrip("/")
        data = json.loads(body) if body else None
        with self._lock:
            if route == "/info":
                return 200, {"version": "0.0.0-loopback"}
            if route == "/datasets" and method == "POST":
                return self._create_dataset(data)
            if route == "/datasets" and method == "GET":
                return 200, self._find_datasets(query)
            if route.startswith("/datasets/") and method == "GET":
                found = self.datasets.get(route.removeprefix("/datasets/"))
                return (200, found) if found else (404, {"detail": "Dataset not found"})
            if route in ("/examples", "/examples/bulk") and method == "POST":
                rows = data if isinstance(data, list) else [data]
                return 200, [self._create_example(row) for row in rows]
            if route == "/examples/bulk" and method == "PATCH":
                return 200, [self._update_example(row) for row in data]
            if route == "/examples" and method == "GET":
                return 200, self._list_examples(query)
        return 404, {"detail": f"loopback dataset server: no route {method} {route}"}

    def _create_dataset(self, data: dict[str, Any]) -> tuple[int, Any]:
        if any(d["name"] == data["name"] for d in self.datasets.values()):
            return 409, {"detail": "Dataset already exists"}
        dataset_id = str(data.get("id") or uuid.uuid4())
        self.datasets[dataset_id] = {
            "id": dataset_id,
            "name": data["name"],
            "description": data.get("description"),
            "data_type": data.get("data_type", "kv"),
            "created_at": _now(),
            "modified_at": _now(),
            "tenant_id": str(uuid.UUID(int=0)),
            "metadata": data.get("extra", {}).get("metadata") if data.get("extra") else None,
            "example_count": 0,
        }
        return 200, self.datasets[dataset_id]

    def _find_datasets(self, query: dict[str, list[str]]) -> list[dict[str, Any]]:
        found = list(self.datasets.values())
        if "name" in query:
            found = [d for d in found if d["name"] == query["name"][0]]
        if "id" in query:
            found = [d for d in found if d["id"] in query["id"]]
        for dataset in found:
            dataset["example_count"] = sum(
                1 for e in self.examples.values() if e["dataset_id"] == dataset["id"]
            )
        return _page(found, query)

    def _create_example(self, row: dict[str, Any]) -> dict[str, Any]:
        example_id = str(row.get("id") or uuid.uuid4())
        example = {
            "id": example_id,
            "dataset_id": str(row["dataset_id"]),
            "inputs": row.get("inputs") or {},
            "outputs": row.get("outputs"),
            "metadata": row.get("metadata"),
            "split": row.get("split"),
            "created_at": _now(),
            "modified_at": _now(),
        }
        self.examples[example_id] = example
        return example

    def _update_example(self, row: dict[str, Any]) -> dict[str, Any]:
        example = self.examples[str(row["id"])]
        for key in ("inputs", "outputs", "metadata", "split"):
            if row.get(key) is not None:
                example[key] = row[key]
        example["modified_at"] = _now()
        return example

    def _list_examples(self, query: dict[str, list[str]]) -> list[dict[str, Any]]:
        found = list(self.examples.values())
        if "dataset" in query:
            found = [e for e in found if e["dataset_id"] == query["dataset"][0]]
        if "id" in query:
            found = [e for e in found if e["id"] in query["id"]]
        return _page(found, query)


def _page(rows: list[dict[str, Any]], query: dict[str, list[str]]) -> list[dict[str, Any]]:
    offset = int(query.get("offset", ["0"])[0])
    limit = int(query.get("limit", ["100"])[0])
    return rows[offset : offset + limit]


def _now() -> str:
    return datetime.now(UTC).isoformat()


@contextmanager
def serving(server: RecordingServer) -> Iterator[RecordingServer]:
    server.start()
    try:
        yield server
    finally:
        server.stop()


if __name__ == "__main__":  # pragma: no cover - used by the subprocess tests
    recorder = RecordingServer()
    recorder._echo = True
    print(recorder.url, flush=True)
    recorder._server.serve_forever() if sys.argv[1:] == ["record"] else None
