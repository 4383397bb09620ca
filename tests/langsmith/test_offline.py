"""The offline guarantee, measured in subprocesses against a recording server on loopback.

Each run has ``LANGSMITH_TRACING=true``, a ``LANGSMITH_API_KEY`` and
``LANGSMITH_ENDPOINT`` pointing at the recording server: the worst case for an
accidental upload. An offline path must make zero requests (to the server, and
zero DNS lookups or connections anywhere, seen by an audit hook in the child),
exit within 2 s of finishing its work, and never log any part of the key.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from langsmith import Client, evaluate, tracing_context
from langsmith.run_helpers import get_tracing_context
from langsmith.schemas import Example
from langsmith.utils import tracing_is_enabled

from lg_eval.langsmith import OfflineError, is_offline, offline, offline_client
from tests.langsmith.servers import RecordingServer

WORK = Path(__file__).with_name("offline_work.py")
ROOT = Path(__file__).resolve().parents[2]
KEY = "lsv2_pt_0123456789abcdefSECRET_fedcba9876543210"
EXIT_BUDGET = 30.0
"""Seconds from the work's end to the process's exit that count as prompt: generous, so a
busy machine cannot fail it; a process that tried to flush traces to a server would wait
out the client's retries (minutes). The exit's usual time is measured by
``tests/benchmarks/bench_promptness.py``."""


def run_offline_path(
    mode: str, server: RecordingServer
) -> tuple[subprocess.CompletedProcess[str], float]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LANGSMITH_", "LANGCHAIN_"))}
    env.update(
        LANGSMITH_TRACING="true",
        LANGSMITH_API_KEY=KEY,
        LANGSMITH_ENDPOINT=server.url,
        PYTHONPATH=str(ROOT),
    )
    proc = subprocess.run(
        [sys.executable, str(WORK), mode],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    ended = time.time()
    done = [float(line.split()[1]) for line in proc.stdout.splitlines() if line.startswith("DONE ")]
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert done, proc.stdout
    return proc, ended - done[0]


def key_fragments(text: str, size: int = 5) -> list[str]:
    """Lines holding any ``size`` consecutive characters of the key."""
    parts = {KEY[i : i + size] for i in range(len(KEY) - size + 1)}
    return [line for line in text.splitlines() if any(p in line for p in parts)]


@pytest.mark.parametrize(
    "mode",
    [
        "batch_evaluate",
        "evaluation_graph",
        "evaluate",
        "batch_evaluate_default",
        "evaluation_graph_default",
        "run_experiment",
        "cli_run",
    ],
)
def test_offline_paths_send_nothing_and_exit_promptly(
    mode: str, recording_server: RecordingServer
) -> None:
    proc, exit_after = run_offline_path(mode, recording_server)
    net = [line for line in proc.stderr.splitlines() if line.startswith("NET ")]
    assert recording_server.requests == []
    assert net == []
    assert exit_after < EXIT_BUDGET
    assert key_fragments(proc.stdout + proc.stderr) == []
    assert "True" in proc.stdout


def test_batch_evaluate_opted_in_to_langsmith_is_traced(
    recording_server: RecordingServer,
) -> None:
    proc, _ = run_offline_path("batch_evaluate_online", recording_server)
    assert recording_server.requests  # langsmith=True: LANGSMITH_TRACING=true uploads the runs
    assert key_fragments(proc.stdout + proc.stderr) == []


def test_offline_turns_tracing_off_everywhere_and_restores_it() -> None:
    assert not is_offline()
    with offline() as client:
        assert is_offline()
        assert tracing_is_enabled() is False
        assert get_tracing_context()["client"] is client
        with offline():
            assert is_offline()
        assert is_offline()
        result: list[object] = []
        import threading

        thread = threading.Thread(target=lambda: result.append(tracing_is_enabled()))
        thread.start()
        thread.join()
        assert result == [False]  # a thread without the copied context is offline too
    assert not is_offline()
    assert get_tracing_context()["enabled"] is None


def test_the_offline_client_refuses_every_request_before_a_socket() -> None:
    client = offline_client()
    assert client.tracing_queue is None
    assert client.api_key != KEY and client.api_url == "http://127.0.0.1:9"
    with pytest.raises(OfflineError, match="nothing was sent"):
        client.read_dataset(dataset_name="x")
    with pytest.raises(OfflineError):
        client.session.get("https://api.smith.langchain.com/info")
    client.create_run(name="r", inputs={}, run_type="chain")  # a local run: dropped


def test_user_evaluate_recipe_inside_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """The documented one-liner: ``with offline() as client: evaluate(..., client=client)``."""
    sent: list[object] = []
    monkeypatch.setattr(Client, "request_with_retries", lambda *a, **k: sent.append(a))
    with offline() as client, tracing_context():
        results = evaluate(
            lambda inputs: {"answer": inputs["q"]},
            data=[Example(id=uuid.uuid4(), dataset_id=uuid.uuid4(), inputs={"q": "x"})],
            evaluators=[],
            upload_results=False,
            client=client,
        )
        assert len(list(results)) == 1
    assert sent == []
