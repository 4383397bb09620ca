"""The HTML report in headless Chromium: no payload runs, nothing is fetched, the diff shows.

Chromium is the Debian package ``chromium`` (``/usr/bin/chromium``). Without it the tests
skip, except under CI (``CI`` set), where they fail: a CI image must provide it.

Each page is opened from a file with ``--dump-dom`` (the DOM after its scripts ran) and a
proxy that records connections: any network request the page made would reach it.
The controls prove the probes work: an unsafe page does set the marker, and an
off-page image does reach the proxy.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from lg_eval.experiments import Comparison, ExperimentRun
from lg_eval.reports import build_report, render_html
from tests.reports.conftest import MARK

CHROMIUM = shutil.which("chromium") or (
    "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None
)


@pytest.fixture(scope="module", autouse=True)
def _chromium_available() -> None:
    if CHROMIUM is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed; CI must provide it (apt-get install chromium)")
        pytest.skip("chromium is not installed (apt-get install chromium); set CI to fail instead")


CHROME_SERVICES = re.compile(
    rb"^\S+ (?:https?://)?[\w.-]*\b(?:google\.com|googleapis\.com|gvt1\.com|gstatic\.com)\b"
)


class Proxy:
    """A TCP listener standing in for an HTTP proxy: it records the requests it gets.

    Chromium's own background traffic (time, component updates, accounts, on Google
    hosts) goes through the proxy too; :attr:`page_requests` leaves it out.
    """

    def __init__(self) -> None:
        self.server = socket.socket()
        self.server.bind(("127.0.0.1", 0))
        self.server.listen(16)
        self.server.settimeout(0.2)
        self.port = self.server.getsockname()[1]
        self.connections = 0
        self.requests: list[bytes] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.server.accept()
            except (TimeoutError, OSError):
                continue
            self.connections += 1
            conn.settimeout(1.0)
            with contextlib.suppress(OSError):
                self.requests.append(conn.recv(200))
            conn.close()

    @property
    def page_requests(self) -> list[bytes]:
        """Request lines that did not come from Chromium's own services (a connection that
        sent nothing, a preconnect, requested nothing)."""
        time.sleep(0.5)  # let the accept thread record a request that just arrived
        return [r.split(b"\r\n")[0] for r in self.requests if r and not CHROME_SERVICES.match(r)]

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self.server.close()


@pytest.fixture
def proxy() -> Iterator[Proxy]:
    listener = Proxy()
    yield listener
    listener.close()


def chromium(tmp_path: Path, url: str, *args: str, proxy: Proxy | None = None) -> tuple[str, str]:
    """Run headless Chromium on ``url``; (stdout, stderr)."""
    assert CHROMIUM is not None
    command = [
        CHROMIUM,
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-extensions",
        "--enable-logging=stderr",
        "--v=0",
        f"--user-data-dir={tmp_path / 'profile'}",
        *args,
    ]
    if proxy is not None:
        command += [
            f"--proxy-server=http://127.0.0.1:{proxy.port}",
            "--proxy-bypass-list=<-loopback>",
        ]
    done = subprocess.run([*command, url], capture_output=True, text=True, timeout=120, check=False)
    return done.stdout, done.stderr


def console_problems(stderr: str) -> list[str]:
    """Console messages, CSP refusals and script errors Chromium logged."""
    pattern = re.compile(r"CONSOLE|Refused to|Content Security Policy|Uncaught|SyntaxError", re.I)
    return [line for line in stderr.splitlines() if pattern.search(line)]


def _write(tmp_path: Path, name: str, html: str) -> Path:
    path = tmp_path / name
    path.write_text(html, encoding="utf-8")
    return path


def test_hostile_report_runs_no_payload_and_fetches_nothing(
    tmp_path: Path, hostile_run: ExperimentRun, proxy: Proxy
) -> None:
    page = _write(tmp_path, "hostile.html", render_html(build_report(hostile_run)))
    dom, stderr = chromium(tmp_path, page.as_uri(), "--dump-dom", proxy=proxy)
    assert "<title>lg_eval report: support-hostile</title>" in dom
    assert "PWNED</title>" not in dom
    assert not re.search(r"<[a-z][^<>]*\sdata-pwned=", dom)  # as text only, never an attribute
    assert 'http-equiv="Content-Security-Policy"' in dom
    assert '<span id="filter-shown">3 of 3 shown</span>' in dom  # the page's own script ran
    assert console_problems(stderr) == []
    assert proxy.page_requests == []


def test_filters_and_failed_diff_in_the_browser(
    tmp_path: Path,
    support_run: ExperimentRun,
    history: list[ExperimentRun],
    comparison: Comparison,
    proxy: Proxy,
) -> None:
    html = render_html(build_report(support_run, history=history, comparison=comparison))
    page = _write(tmp_path, "support.html", html)
    dom, stderr = chromium(tmp_path, page.as_uri() + "#status=failed", "--dump-dom", proxy=proxy)
    assert '<span id="filter-shown">2 of 7 shown</span>' in dom
    rows = re.findall(r'<tr data-row="\d+" data-status="(\w+)"( hidden="")?>', dom)
    assert [(status, bool(hidden)) for status, hidden in rows] == [
        ("passed", True),
        ("failed", False),
        ("passed", True),
        ("error", True),
        ("timeout", True),
        ("passed", True),
        ("failed", False),
    ]
    assert '<li class="step differs missing">refund</li>' in dom
    for attribute in re.findall(r'\b(?:src|href|action|srcset)="([^"]*)"', dom):
        assert attribute.startswith("#"), attribute
    assert console_problems(stderr) == []
    assert proxy.page_requests == []


def test_screenshot_of_the_report(
    tmp_path: Path, support_run: ExperimentRun, history: list[ExperimentRun], comparison: Comparison
) -> None:
    html = render_html(build_report(support_run, history=history, comparison=comparison))
    page = _write(tmp_path, "support.html", html)
    target = Path(os.environ.get("LG_EVAL_REPORT_SCREENSHOT", tmp_path / "report.png"))
    chromium(tmp_path, page.as_uri(), f"--screenshot={target}", "--window-size=1280,2000")
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert target.stat().st_size > 50_000  # charts, tables and diff, not a blank page


def test_control_an_unsafe_page_does_set_the_marker(tmp_path: Path) -> None:
    unsafe = f'<html><head><title>t</title></head><body><img src=x onerror="{MARK}"></body></html>'
    dom, _ = chromium(tmp_path, _write(tmp_path, "unsafe.html", unsafe).as_uri(), "--dump-dom")
    assert '<html data-pwned="1">' in dom and "<title>PWNED</title>" in dom


def test_control_an_off_page_image_reaches_the_proxy(tmp_path: Path, proxy: Proxy) -> None:
    fetching = '<html><body><img src="http://lg-eval.invalid/pixel.png"></body></html>'
    page = _write(tmp_path, "fetching.html", fetching)
    chromium(tmp_path, page.as_uri(), "--dump-dom", proxy=proxy)
    assert proxy.page_requests == [b"GET http://lg-eval.invalid/pixel.png HTTP/1.1"]


def test_a_failed_case_in_playwright(
    tmp_path: Path, support_run: ExperimentRun, history: list[ExperimentRun], comparison: Comparison
) -> None:
    """Driven by Playwright: the case table's link opens the failed case, which reads what
    its stored result holds (feedback, trajectory diff, turns played, judge reasoning).
    Screenshots go to ``$LG_EVAL_ARTIFACTS`` (default: the test's tmp dir)."""
    from playwright.sync_api import sync_playwright

    artifacts = Path(os.environ.get("LG_EVAL_ARTIFACTS", tmp_path))
    artifacts.mkdir(parents=True, exist_ok=True)
    html = render_html(build_report(support_run, history=history, comparison=comparison))
    page_file = _write(tmp_path, "support.html", html)
    requests: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"]
        )
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.on("request", lambda request: requests.append(request.url))
        page.goto(page_file.as_uri())
        page.select_option("#filter-status", "failed")
        assert page.locator("#filter-shown").inner_text() == "2 of 7 shown"
        page.locator('tr[data-status="failed"]:visible a').first.click()
        case = page.locator("article#case-1")
        assert page.url.endswith("#case-1")
        assert case.locator("h3").inner_text() == "refund-over-limit failed refunds hitl"
        feedback = case.locator("ul").first.inner_text()
        assert feedback == (
            "graph_trajectory_strict_match = false: Turn 2: step 2 differs: expected 'refund', "
            "got 'respond'."
        )
        assert case.locator(".diff .step.differs.missing").all_inner_texts() == ["refund"]
        turns = case.locator("table.turns tbody tr").all_inner_texts()
        assert turns[1].split("\t")[:3] == ["turns[1]", "resume", '{"approved": true}']
        assert "Approve a refund of $250 for order 1042?" in turns[0]
        lines = "el => { const r = document.createRange(); r.selectNodeContents(el);"
        lines += " return r.getClientRects().length; }"
        cells = case.locator("table.turns tbody td:nth-child(-n+2)").element_handles()
        assert [page.evaluate(lines, cell) for cell in cells] == [1, 1, 1, 1]  # never wrapped
        assert case.locator(".judge .text").inner_text() == (
            "The reviewer approved, yet the agent answered without refunding."
        )
        case.screenshot(path=artifacts / "report-failed-case.png")
        browser.close()
    assert requests == [page_file.as_uri()]
