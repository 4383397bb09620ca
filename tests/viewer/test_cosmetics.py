"""What a newcomer reads in the viewer and the HTML report (issue 39, item 12).

A store of real runs: the weather golden dataset, the same dataset name with one
expectation changed (another dataset hash), and the approval dataset, whose interrupts ask
with dict payloads. The pages are fetched over HTTP and read as text, then walked in
Debian's headless Chromium, which saves a screenshot of each (``$LG_EVAL_ARTIFACTS``).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from html import unescape
from pathlib import Path
from typing import Any

import pytest

from graphs import approval
from lg_eval.experiments import open_store, run_experiment
from lg_eval.reports import build_report, render_html
from lg_eval.viewer import ViewerServer
from tests.viewer.conftest import ROOT, serve
from tests.viewer.test_browser import browser, open_page  # noqa: F401  (the fixture)
from tests.viewer.test_pages import get, text

WEATHER = ROOT / "examples" / "golden" / "weather.yaml"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    here = tmp_path_factory.mktemp("cosmetics")
    changed = here / "weather.yaml"
    changed.write_text(WEATHER.read_text().replace('[sunny, "75"]', '[sunny, "76"]'))
    where = {"store": here / "results.sqlite", "checkpointer": "memory://", "judge_cache": False}
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        run_experiment(None, WEATHER, run_id="w1", **where)
        run_experiment(None, changed, run_id="w2", **where)
        run_experiment(None, WEATHER, run_id="w3", **where)
        run_experiment(None, ROOT / "examples" / "golden" / "approval.yaml", run_id="a1",
                       **where)  # fmt: skip
    finally:
        os.chdir(cwd)
    return here / "results.sqlite"


@pytest.fixture
def viewer(store: Path) -> Iterator[ViewerServer]:
    yield from serve(store)


def figure(html: str, title: str) -> str:
    found = re.search(rf'<figure class="chart">\s*<figcaption>{title}</figcaption>(.*?)</figure>',
                      html, re.S)  # fmt: skip
    assert found, title
    return found.group(1)


def test_an_empty_chart_says_no_data_instead_of_drawing_an_axis(viewer: ViewerServer) -> None:
    _, _, html = get(viewer, "/run", id="w1")
    cost = figure(html, "Cost")  # no result has a cost
    assert "no data" in cost
    assert "<rect" not in cost and 'class="axis"' not in cost
    assert "no data" not in figure(html, "Latency")


def test_the_trend_is_cut_where_the_dataset_changed_and_says_so(
    viewer: ViewerServer, store: Path
) -> None:
    _, _, html = get(viewer, "/")
    rows = dict(re.findall(r'<tr data-run="([^"]+)">(.*?)</tr>', html, re.S))
    newest = rows["w3"]
    assert newest.count("<polyline") == 3  # w1 | w2 | w3: three stretches of one run
    assert newest.count('class="break"') == 2
    assert "the dataset changed between runs" in newest
    assert "dataset changed" in text(newest) and " pt" not in text(newest)  # no delta across
    with open_store(store) as results:
        run, history = results.load_run("w3"), results.latest_runs("weather-golden", 3)
    report = build_report(run, history=history)
    assert [p.dataset_hash == run.info.dataset_hash for p in report.trend] == [True, False, True]
    page = render_html(report)
    assert page.count('class="break"') == 2 and "the dataset changed here" in page


def test_compare_deltas_carry_units_and_only_scores_that_moved(viewer: ViewerServer) -> None:
    _, _, html = get(viewer, "/compare", a="w1", b="w2")
    table = text(re.search(r'<table id="changes">(.*?)</table>', html, re.S).group(1))
    assert "scores that moved (B − A) latency (B − A)" in table
    assert re.search(r"sunny-sf regressed passed → failed keywords -0\.5 [+-]\d+ms", table)
    assert "graph_trajectory_strict_match 0" not in table


def test_interrupt_payloads_are_shown_as_structures(viewer: ViewerServer) -> None:
    _, _, html = get(viewer, "/case", run="a1", id="approval-by-node")
    payloads = re.findall(r'<pre class="text payload">(.*?)</pre>', html, re.S)
    asked = approval_payloads()
    assert [json.loads(unescape(p)) for p in payloads] == asked
    assert all(p.startswith("{\n  ") for p in payloads)  # indented, one field a line


def approval_payloads() -> list[Any]:
    """What the approval graph asks, from LangGraph itself (both reviews, by node path)."""
    from langgraph.checkpoint.memory import InMemorySaver

    graph = approval.build(checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "t"}}
    graph.invoke({"request": "Buy 3 laptops for the design team."}, config)
    pending = graph.get_state(config).interrupts
    by_path = sorted(pending, key=lambda i: str(i.value.get("reviewer")))
    return [by_path[1].value, by_path[0].value]  # the page lists legal, then finance


def test_the_case_page_shows_what_was_expected_next_to_what_happened(
    viewer: ViewerServer,
) -> None:
    _, _, html = get(viewer, "/case", run="w1", id="weather-regression-demo")
    expected = text(re.search(r'<ol class="expected-calls">(.*?)</ol>', html, re.S).group(1))
    made = text(re.search(r'<ol class="tool-calls">(.*?)</ol>', html, re.S).group(1))
    assert (expected, made) == ('get_weather { "city": "nyc" }', 'get_weather { "city": "sf" }')
    _, _, anyargs = get(viewer, "/case", run="w1", id="sunny-sf-from-table")
    listed = re.search(r'<ol class="expected-calls">(.*?)</ol>', anyargs, re.S).group(1)
    assert text(listed) == "get_weather any arguments"  # a bare name: any arguments


def test_the_pages_in_chromium(browser: Any, viewer: ViewerServer, tmp_path: Path) -> None:  # noqa: F811
    artifacts = Path(os.environ.get("LG_EVAL_ARTIFACTS", tmp_path))
    artifacts.mkdir(parents=True, exist_ok=True)
    requests: list[str] = []
    page = open_page(browser, requests)
    page.goto(viewer.url)
    cell = page.locator('tr[data-run="w3"] td.pass-rate')
    assert cell.inner_text() == f"{cell.inner_text().split()[0]} dataset changed"
    run_link = page.locator('tr[data-run="w3"] a.run-link')
    assert run_link.bounding_box()["height"] < 24  # one line: the id never wraps
    page.screenshot(path=artifacts / "cosmetics-runs.png", full_page=True)
    page.goto(f"{viewer.url}case?run=a1&id=approval-by-node")
    first = page.locator("pre.payload").first.inner_text()
    assert first.splitlines()[0] == "{" and len(first.splitlines()) == 5
    page.screenshot(path=artifacts / "cosmetics-payloads.png", full_page=True)
    page.goto(f"{viewer.url}case?run=w1&id=weather-regression-demo")
    assert page.locator("#expected-calls ol").inner_text().startswith("get_weather")
    page.screenshot(path=artifacts / "cosmetics-expected.png", full_page=True)
    page.goto(f"{viewer.url}run?id=w1")
    assert "no data" in page.locator("figure.chart", has_text="Cost").inner_text()
    page.screenshot(path=artifacts / "cosmetics-charts.png", full_page=True)
    assert all(url.startswith(viewer.url) for url in requests)
