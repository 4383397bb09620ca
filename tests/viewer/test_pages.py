"""The viewer's pages over real stores, through its HTTP server.

Expected values come from the runs themselves, computed by other code: the pass rates
and per-evaluator numbers by ``build_report`` over the loaded run (Python, not SQL), the
changes by ``compare_runs``, the interrupt payload by LangGraph running the same graph.
"""

from __future__ import annotations

import re
import urllib.error
import urllib.request
from html import unescape
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from graphs import weather
from lg_eval.experiments import ResultStore, compare_runs, open_store
from lg_eval.reports import build_report
from lg_eval.reports._keys import evaluator_table
from lg_eval.reports._stored import column_histograms, status_counts
from lg_eval.viewer import CSP, Pages, ViewerServer
from tests.viewer.conftest import misread


def get(server: ViewerServer, path: str, **params: str) -> tuple[int, dict[str, str], str]:
    url = server.url.rstrip("/") + path + ("?" + urlencode(params) if params else "")
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, dict(response.headers), response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read().decode()


def text(html: str) -> str:
    """The page's text: tags dropped, entities decoded, whitespace folded."""
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", html)).split())


def loaded(path: Path, run_id: str):  # type: ignore[no-untyped-def]
    with open_store(path) as store:
        return store.load_run(run_id)


def test_the_runs_list_shows_each_run_with_its_pass_rate_and_trend(
    weather_viewer: ViewerServer, weather_store: Path
) -> None:
    status, headers, html = get(weather_viewer, "/")
    assert status == 200
    assert headers["Content-Security-Policy"] == CSP
    rows = re.findall(r'<tr data-run="([^"]+)">(.*?)</tr>', html, re.S)
    assert [run_id for run_id, _ in rows] == ["weather-2", "weather-1"]  # newest first
    for run_id, row in rows:
        rate = loaded(weather_store, run_id).pass_rate
        assert f"{rate * 100:.1f}%" in text(row)
    newest = text(rows[0][1])
    first, second = (loaded(weather_store, r).pass_rate for r in ("weather-1", "weather-2"))
    assert f"{(second - first) * 100:+.1f} pt" in newest
    assert "compare with previous" in newest and "weather-golden" in newest
    assert "first run" in text(rows[1][1])


def test_the_run_page_counts_as_the_report_does(weather_store: Path) -> None:
    run = loaded(weather_store, "weather-2")
    report = build_report(run)
    with open_store(weather_store) as store:
        assert evaluator_table(store, "weather-2") == report.evaluators
        assert status_counts(store, "weather-2") == report.summary.counts
        latency = column_histograms(store, "weather-2")["latency_s"]
    assert latency == report.latency_histogram


def test_the_run_page_lists_failing_cases_first(
    weather_viewer: ViewerServer, weather_store: Path
) -> None:
    status, _, html = get(weather_viewer, "/run", id="weather-1")
    assert status == 200
    listed = re.findall(
        r'<tr data-status="(\w+)">\s*<td><a class="case-link"[^>]*><code>([^<]+)', html
    )
    assert listed == [
        ("failed", "weather-regression-demo"),
        ("passed", "sunny-sf"),
        ("passed", "sunny-sf-from-table"),
    ]
    assert [r.status for r in loaded(weather_store, "weather-1").results] == [
        "passed", "passed", "failed"
    ]  # fmt: skip
    assert "Latency" in html and "Tokens" in html and "Cost" in html


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"tag": "resume-fn"}, ["sunny-sf-from-table"]),
        ({"tag": "hitl"}, ["sunny-sf", "sunny-sf-from-table"]),
        ({"status": "failed"}, ["weather-regression-demo"]),
        ({"failing": "tool_sequence_in_order_match"}, ["weather-regression-demo"]),
        ({"q": "from-table"}, ["sunny-sf-from-table"]),
        ({"q": "100%_"}, []),
        ({"q": "demo", "status": "passed"}, []),
    ],
)
def test_filters_and_search_narrow_the_cases(
    weather_viewer: ViewerServer, params: dict[str, str], expected: list[str]
) -> None:
    _, _, html = get(weather_viewer, "/run", id="weather-1", **params)
    assert sorted(re.findall(r'class="case-link"[^>]*><code>([^<]+)', html)) == expected


def test_a_case_shows_the_conversation_trajectory_feedback_and_tool_calls(
    weather_viewer: ViewerServer,
) -> None:
    status, _, html = get(weather_viewer, "/case", run="weather-1", id="weather-regression-demo")
    assert status == 200
    shown = text(html)
    # the interrupt LangGraph raises when the same graph runs the same input
    live = weather.build(InMemorySaver()).invoke(
        {"messages": [{"role": "user", "content": "what's the weather in sf?"}]},
        {"configurable": {"thread_id": "live"}},
    )
    (pending,) = live["__interrupt__"]
    assert f"graph · interrupt at tools id {pending.id}"[:28] in shown
    assert pending.value in shown
    assert "script · answer It's sunny and 75 degrees" in shown
    assert '"city": "sf"' in shown and "get_weather" in shown
    assert "step 4: expected 'agent', got '__interrupt__'" in shown
    assert 'class="step differs missing">agent<' in html
    assert "Keywords not found: rain." in shown


def test_a_case_shows_what_was_expected_beside_what_the_agent_said(
    weather_viewer: ViewerServer,
) -> None:
    """weather-2's model reads the wrong city; its answer, as LangGraph's own run of the
    same graph, input and human answer gives it, stands beside the expected keywords."""
    graph = misread(InMemorySaver())
    config: Any = {"configurable": {"thread_id": "live"}}
    graph.invoke({"messages": [{"role": "user", "content": "what's the weather in sf?"}]}, config)
    said = graph.invoke(Command(resume="It's sunny and 75 degrees"), config)["messages"][-1]
    status, _, html = get(weather_viewer, "/case", run="weather-2", id="sunny-sf")
    assert status == 200
    block = html[html.index('<div class="answer">') : html.index("<h2>Trajectory</h2>")]
    assert text(block) == (
        f'expected (contains every keyword) said (the final answer) "sunny", "75" {said.content}'
    )
    assert "Keywords not found: sunny, 75." in text(html)


def test_compare_counts_each_change_as_compare_runs_does(
    weather_viewer: ViewerServer, weather_store: Path
) -> None:
    comparison = compare_runs(
        loaded(weather_store, "weather-1"), loaded(weather_store, "weather-2")
    )
    _, _, html = get(weather_viewer, "/compare", a="weather-1", b="weather-2")
    for change in ("regressed", "improved", "added", "removed", "unchanged"):
        expected = sum(c.change == change for c in comparison.cases)
        assert re.search(rf'id="tab-{change}"[^>]*>{change} <span class="count">{expected}<', html)
    regressed = sorted(c.case_id for c in comparison.cases if c.change == "regressed")
    assert regressed and sorted(re.findall(r'class="change-link"[^>]*><code>([^<]+)', html)) == (
        regressed
    )


def test_the_compared_case_shows_both_runs(weather_viewer: ViewerServer) -> None:
    status, _, html = get(
        weather_viewer, "/compare/case", a="weather-1", b="weather-2", id="sunny-sf"
    )
    assert status == 200
    shown = text(html)
    assert "run A · weather-1" in shown and "run B · weather-2" in shown
    assert "A: passed → B: failed" in shown
    assert "It's sunny and 75 degrees" in shown


def test_unknown_runs_and_pages_are_404_and_writes_are_refused(
    weather_viewer: ViewerServer,
) -> None:
    assert get(weather_viewer, "/run", id="nope")[0] == 404
    assert "No run 'nope' in the store." in text(get(weather_viewer, "/run", id="nope")[2])
    assert get(weather_viewer, "/case", run="weather-1", id="x")[0] == 404
    assert get(weather_viewer, "/elsewhere")[0] == 404
    request = urllib.request.Request(weather_viewer.url, data=b"x", method="POST")
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=10)
    assert refused.value.code == 405


def test_a_request_for_another_host_is_refused(weather_viewer: ViewerServer) -> None:
    request = urllib.request.Request(weather_viewer.url, headers={"Host": "evil.example"})
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=10)
    assert refused.value.code == 421


def test_hostile_text_is_escaped_on_every_page(hostile_viewer: ViewerServer) -> None:
    pages = [get(hostile_viewer, "/")[2], get(hostile_viewer, "/run", id="run-hostile")[2]]
    links = re.findall(r'class="case-link" href="([^"]+)"><code>case&lt;script', pages[1])
    assert len(links) == 1
    with urllib.request.urlopen(hostile_viewer.url.rstrip("/") + unescape(links[0])) as r:
        pages.append(r.read().decode())
    for html in pages:
        assert "<script" not in html.lower()
        assert "<img" not in html.lower() and "<svg onload" not in html.lower()
        assert 'href="http' not in html and 'src="http' not in html
    case_page = pages[-1]
    assert "&lt;script&gt;document.title=&#39;PWNED&#39;;" in case_page
    assert "refund&lt;script&gt;" in case_page  # the tool call's name, as text
    assert "interrupt&lt;script&gt;" in case_page  # the interrupt payload
    assert "resume&lt;script&gt;" in case_page  # the human's answer


@pytest.mark.postgres
def test_postgres_and_sqlite_stores_show_the_same_pages(weather_store: Path, pg_dsn: str) -> None:
    import psycopg

    open_store(pg_dsn).close()  # creates the tables
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        conn.execute("TRUNCATE lg_eval_runs, lg_eval_cases, lg_eval_scores")
    with open_store(weather_store) as lite, open_store(pg_dsn) as pg:
        for run_id in ("weather-1", "weather-2"):
            run = lite.load_run(run_id)
            pg.begin_run(run.info)
            pg.update_run(run.info)
            pg.write(list(enumerate(run.results)))
        requests = [
            ("/", {}),
            ("/run", {"id": "weather-1"}),
            ("/run", {"id": "weather-1", "tag": "hitl", "failing": "keywords"}),
            ("/run", {"id": "weather-2", "q": "sf", "status": "failed"}),
            ("/case", {"run": "weather-1", "id": "weather-regression-demo"}),
            ("/compare", {"a": "weather-1", "b": "weather-2"}),
            ("/compare/case", {"a": "weather-1", "b": "weather-2", "id": "sunny-sf"}),
        ]
        for path, params in requests:
            a, b = Pages(lite).respond(path, params), Pages(pg).respond(path, params)
            assert a.status == b.status == 200
            assert _without_store(a.body, lite) == _without_store(b.body, pg), (path, params)


def _without_store(body: bytes, store: ResultStore) -> str:
    return body.decode().replace(store.url, "STORE")


def test_view_refuses_a_store_that_does_not_exist(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from lg_eval.cli import app

    missing = tmp_path / "nowhere.sqlite"
    result = CliRunner().invoke(app, ["view", "--store", f"sqlite:///{missing}"])
    assert result.exit_code == 2
    assert f"no results store at {missing}" in " ".join(result.output.split())
    assert not missing.exists()


def test_view_refuses_a_port_in_use(weather_viewer: ViewerServer, weather_store: Path) -> None:
    from typer.testing import CliRunner

    from lg_eval.cli import app

    port = str(weather_viewer.server_address[1])
    result = CliRunner().invoke(app, ["view", "--store", str(weather_store), "--port", port])
    assert result.exit_code == 2
    assert f"cannot listen on 127.0.0.1:{port}" in " ".join(result.output.split())
