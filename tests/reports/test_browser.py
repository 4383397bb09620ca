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
        """Request lines that did not come from Chromium's own services."""
        time.sleep(0.5)  # let the accept thread record a request that just arrived
        return [r.split(b"\r\n")[0] for r in self.requests if not CHROME_SERVICES.match(r)]

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
