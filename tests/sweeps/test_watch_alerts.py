"""Alerts of a watch: ``hitl_policy``'s pass rate over the last hour below 1.0 calls a hook
(a real command, a real HTTP server on 127.0.0.1) with the failing threads, redacted."""

from __future__ import annotations

import json
import sqlite3
import sys
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.sqlite import SqliteSaver

from lg_eval.experiments import open_store
from lg_eval.sweeps import Alert, Watch
from lg_eval.sweeps._alerts import AlertState, check_alerts
from tests import travel
from tests.sweeps.watching import GRAPH, POLICY

SECRET = "sk-travel-0123456789"
HOOK = """\
import sys
with open(sys.argv[1], "a", encoding="utf-8") as out:
    out.write(sys.stdin.read() + "\\n")
"""


@pytest.fixture
def saver(tmp_path: Path) -> Iterator[SqliteSaver]:
    conn = sqlite3.connect(tmp_path / "threads.sqlite", check_same_thread=False)
    yield SqliteSaver(conn)
    conn.close()


def _command(tmp_path: Path) -> tuple[str, Path]:
    """A hook command appending each payload it gets on stdin to a file, and the file."""
    script, calls = tmp_path / "hook.py", tmp_path / "calls.jsonl"
    script.write_text(HOOK)
    return f"{sys.executable} {script} {calls}", calls


def _calls(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line]


def _trip(saver: SqliteSaver, thread_id: str, *, approved: bool) -> None:
    """A compliant booking, or one the regression runs without an approval."""
    graph = travel.agent([], checkpointer=saver, gate=approved)
    travel.play(graph, thread_id, [travel.APPROVE])


def _watch(saver: SqliteSaver, tmp_path: Path, alert: dict[str, Any], **kw: Any) -> Watch:
    return Watch(
        GRAPH,
        saver,
        store=f"sqlite:///{tmp_path / 'results.sqlite'}",
        name="travel",
        evaluators=[POLICY],
        alerts=[{"key": "hitl_policy", "below": 1.0, "window": "1h", **alert}],
        **kw,
    )


def test_a_falling_pass_rate_calls_the_command_once_per_new_failing_thread(
    saver: SqliteSaver, tmp_path: Path
) -> None:
    hook, calls = _command(tmp_path)
    _trip(saver, "good-1", approved=True)
    with _watch(saver, tmp_path, {"hook": hook}) as watch:
        assert watch.poll().fired == []  # 1 of 1 passed
        _trip(saver, "bad-1", approved=False)
        [fired] = watch.poll().fired
        assert (fired.value, fired.results, fired.failing_total, fired.error) == (0.5, 2, 1, None)
        assert watch.poll().fired == []  # nothing new
        _trip(saver, "good-2", approved=True)
        assert watch.poll().fired == []  # below 1.0, but no new failing thread
        _trip(saver, "bad-2", approved=False)
        [again] = watch.poll().fired
        assert [t["thread_id"] for t in again.failing] == ["bad-2"]
    sent = _calls(calls)
    assert [[t["thread_id"] for t in call["failing"]] for call in sent] == [["bad-1"], ["bad-2"]]
    first = sent[0]
    assert first["alert"] == {
        "key": "hitl_policy", "stat": "pass_rate", "below": 1.0, "window_seconds": 3600.0
    }  # fmt: skip
    assert (first["sweep"], first["value"], first["results"], first["failing_total"]) == (
        "travel",
        0.5,
        2,
        1,
    )
    [failing] = first["failing"]
    assert failing["score"] == 0.0
    assert failing["comment"] == (
        'Turn 2: book_flight(flight="TP 1351", seat="economy", price=180) ran without an approval.'
    )
    with open_store(f"sqlite:///{tmp_path / 'results.sqlite'}") as store:
        rows = store.query(
            "SELECT checkpoint_id FROM lg_eval_sweep_threads WHERE thread_id = ?", ("bad-1",)
        )
    assert [failing["checkpoint_id"]] == [row[0] for row in rows]


class _Receiver(BaseHTTPRequestHandler):
    """Keeps each POSTed body; answers with the server's ``status``."""

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.server.bodies.append((self.headers["Content-Type"], json.loads(body)))  # type: ignore[attr-defined]
        self.send_response(self.server.status)  # type: ignore[attr-defined]
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        return


@pytest.fixture
def webhook() -> Iterator[ThreadingHTTPServer]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Receiver)
    server.bodies = []  # type: ignore[attr-defined]
    server.status = 204  # type: ignore[attr-defined]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.shutdown()
    server.server_close()


def test_a_webhook_gets_the_failing_threads_with_secrets_and_patterns_redacted(
    saver: SqliteSaver, tmp_path: Path, webhook: ThreadingHTTPServer, monkeypatch: Any
) -> None:
    monkeypatch.setenv("TRAVEL_API_KEY", SECRET)
    url = f"http://127.0.0.1:{webhook.server_address[1]}/hooks/T0K3N/alert"
    with _watch(saver, tmp_path, {"hook": url}, redact=[r"TP \d+"]) as watch:
        _trip(saver, f"trip-{SECRET}", approved=False)
        [fired] = watch.poll().fired
        assert fired.error is None
    [(kind, body)] = webhook.bodies  # type: ignore[attr-defined]
    assert kind == "application/json"
    [failing] = body["failing"]
    assert failing["thread_id"] == "trip-***"
    assert failing["comment"] == (
        'Turn 2: book_flight(flight="[REDACTED]", seat="economy", price=180) ran without an '
        "approval."
    )
    assert SECRET not in json.dumps(body)


def test_a_hook_that_fails_is_reported_and_the_watch_goes_on(
    saver: SqliteSaver, tmp_path: Path, webhook: ThreadingHTTPServer
) -> None:
    webhook.status = 500  # type: ignore[attr-defined]
    port = webhook.server_address[1]
    with _watch(saver, tmp_path, {"hook": f"http://127.0.0.1:{port}/secret/path"}) as watch:
        _trip(saver, "bad-1", approved=False)
        [fired] = watch.poll().fired
        assert fired.error == f"webhook http://127.0.0.1:{port}/…: HTTP 500"
        _trip(saver, "good-1", approved=True)
        assert watch.poll().scored == 1


def test_an_alert_waits_for_its_minimum_of_results(saver: SqliteSaver, tmp_path: Path) -> None:
    hook, calls = _command(tmp_path)
    with _watch(saver, tmp_path, {"hook": hook, "min_results": 2}) as watch:
        _trip(saver, "bad-1", approved=False)
        assert watch.poll().fired == []
        _trip(saver, "good-1", approved=True)
        [fired] = watch.poll().fired
        assert [t["thread_id"] for t in fired.failing] == ["bad-1"]
    assert len(_calls(calls)) == 1


def test_results_older_than_the_window_do_not_count(saver: SqliteSaver, tmp_path: Path) -> None:
    hook, calls = _command(tmp_path)
    _trip(saver, "bad-1", approved=False)
    with _watch(saver, tmp_path, {"hook": "true"}) as watch:
        watch.poll()
    alert = Alert(key="hitl_policy", below=1.0, window=60, hook=hook)
    with open_store(f"sqlite:///{tmp_path / 'results.sqlite'}") as store:
        later = datetime.now(UTC) + timedelta(seconds=61)
        assert check_alerts([alert], store, "sweep:travel", AlertState(), None, now=later) == []
        fired = check_alerts([alert], store, "sweep:travel", AlertState(), None)
    assert [f.failing_total for f in fired] == [1]
    assert len(_calls(calls)) == 1


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"below": float("nan")}, "alerts: below=nan: a finite number."),
        ({"window": "soon"}, "window='soon': seconds, or a duration: 30m, 1h, 1d."),
        ({"window": 0}, "window=0: a number of seconds > 0"),
        ({"hook": ""}, "hook='': string should have at least 1 character"),
        ({"stat": "median"}, "stat='median': input should be 'pass_rate' or 'mean'"),
        ({"colour": "red"}, "colour='red': extra inputs are not permitted"),
    ],
)
def test_a_bad_alert_is_refused_naming_its_field(fields: dict[str, Any], message: str) -> None:
    from lg_eval.errors import InvalidOptionError

    with pytest.raises(InvalidOptionError) as raised:
        Alert.of({"key": "hitl_policy", "below": 1.0, "hook": "true", **fields})
    assert message in str(raised.value)


def test_the_viewer_lists_each_look_as_a_run_with_the_trend(
    saver: SqliteSaver, tmp_path: Path
) -> None:
    from lg_eval.viewer._queries import runs_page

    seen: list[int] = []
    with _watch(saver, tmp_path, {"hook": "true"}) as watch:
        _trip(saver, "good-1", approved=True)
        watch.run(every=0, passes=1, on_pass=lambda done: seen.append(done.scored))
        _trip(saver, "bad-1", approved=False)
        stop = threading.Event()

        def look(done: Any) -> None:
            seen.append(done.scored)
            stop.set()  # the watch stops after this look

        totals = watch.run(every=0, stop=stop, on_pass=look)
    assert (seen, totals.passes, totals.scored, len(totals.runs)) == ([1, 1], 1, 1, 1)
    with open_store(f"sqlite:///{tmp_path / 'results.sqlite'}") as store:
        rows, _ = runs_page(store, 0)
    assert [(r.info.dataset, r.pass_rate) for r in rows] == [
        ("sweep:travel", 0.0),
        ("sweep:travel", 1.0),
    ]
    assert rows[0].trend == (1.0, 0.0)
