"""The viewer in a real browser: Playwright driving Debian's chromium.

A walk from the runs list to a failing case and to a comparison, asserting what is
shown; every request the pages make is recorded and must go to the viewer itself. On
the hostile store an injected script would set ``window.__pwned`` and the title: both
stay unset. Screenshots go to ``$LG_EVAL_ARTIFACTS`` (default: the test's tmp dir).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from lg_eval.viewer import ViewerServer

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not CHROMIUM.exists():
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed; CI must provide it (apt-get install chromium)")
        pytest.skip("chromium is not installed (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield launched
        launched.close()


@pytest.fixture
def artifacts(tmp_path: Path) -> Path:
    where = Path(os.environ.get("LG_EVAL_ARTIFACTS", tmp_path))
    where.mkdir(parents=True, exist_ok=True)
    return where


def open_page(browser: Any, requests: list[str]) -> Any:
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.on("request", lambda request: requests.append(request.url))
    return page


def test_walk_from_the_runs_list_to_a_failing_case_and_a_comparison(
    browser: Any, weather_viewer: ViewerServer, artifacts: Path
) -> None:
    requests: list[str] = []
    page = open_page(browser, requests)
    page.goto(weather_viewer.url)
    assert page.locator("#runs tbody tr").count() == 2
    page.screenshot(path=artifacts / "viewer-runs.png", full_page=True)

    page.click('tr[data-run="weather-1"] a.run-link')
    assert page.locator("h1").inner_text() == "Run weather-1"
    first = page.locator("#case-table tbody tr").first
    assert first.get_attribute("data-status") == "failed"
    page.screenshot(path=artifacts / "viewer-run.png", full_page=True)

    first.locator("a.case-link").click()
    assert page.locator("#case-id").inner_text() == "weather-regression-demo"
    conversation = page.locator(".conversation").inner_text()
    assert "Tell me the weather for sf" in conversation
    assert "It's sunny and 75 degrees" in conversation
    assert page.locator(".step.differs.missing").first.inner_text() == "agent"
    page.screenshot(path=artifacts / "viewer-case.png", full_page=True)

    page.goto(weather_viewer.url + "case?run=weather-2&id=sunny-sf")
    answer = page.locator(".answer")
    assert answer.locator(".expected").inner_text() == '"sunny", "75"'
    assert answer.locator(".said").inner_text() == "It is raining in nyc."
    expected_box, said_box = (
        answer.locator(side).bounding_box() for side in (".expected", ".said")
    )
    assert expected_box is not None and said_box is not None
    assert expected_box["y"] == said_box["y"] and expected_box["x"] < said_box["x"]  # side by side
    page.screenshot(path=artifacts / "viewer-case-answer.png", full_page=True)

    page.goto(weather_viewer.url)
    page.click('tr[data-run="weather-2"] a.compare-link')
    assert page.locator("#tab-regressed .count").inner_text() == "2"
    page.locator("a.change-link").first.click()
    assert page.locator("#case-id").inner_text() == "sunny-sf"
    assert "A: passed → B: failed" in page.locator(".sub").first.inner_text()
    page.screenshot(path=artifacts / "viewer-compare.png", full_page=True)

    page.goto(weather_viewer.url + "run?id=weather-1")
    page.select_option("#f-status", "passed")
    page.fill("#f-q", "table")
    page.click("form.filters button")
    assert page.locator("a.case-link").all_inner_texts() == ["sunny-sf-from-table"]

    viewer = urlsplit(weather_viewer.url).netloc
    assert requests and all(urlsplit(url).netloc == viewer for url in requests)
    page.close()


def test_a_hostile_store_runs_no_script_and_fetches_nothing(
    browser: Any, hostile_viewer: ViewerServer, artifacts: Path
) -> None:
    requests: list[str] = []
    page = open_page(browser, requests)
    response = page.goto(hostile_viewer.url + "run?id=run-hostile")
    assert response is not None
    assert "script-src" not in response.headers["content-security-policy"]
    assert response.headers["content-security-policy"].startswith("default-src 'none'")
    for link in page.locator("a.case-link").all():
        href = link.get_attribute("href")
        page.goto(hostile_viewer.url.rstrip("/") + str(href))
        page.mouse.move(200, 300)
        assert page.evaluate("window.__pwned") is None
        assert page.title() != "PWNED"
        assert page.evaluate("document.documentElement.getAttribute('data-pwned')") is None
        page.goto(hostile_viewer.url + "run?id=run-hostile")
    page.goto(hostile_viewer.url + "run?id=run-hostile")
    assert "case<script>" in page.locator("#case-table").inner_text()
    page.screenshot(path=artifacts / "viewer-hostile.png", full_page=True)
    viewer = urlsplit(hostile_viewer.url).netloc
    assert requests and all(urlsplit(url).netloc == viewer for url in requests)
    page.close()
