"""The viewer's one write path: a person labels a case from its page.

Over a real store (the travel agent's threads swept by a scripted judge, the people's
decisions harvested), requests are sent as a browser would and as an attacker would: only
a POST to ``/label`` with the session's token, from this machine, for the viewer's own
Host and origin, with a small urlencoded body, writes a label; every other request is
refused and writes nothing. In a real Chromium the form works, the label shows escaped,
and a form on another origin that posts to the viewer (even with the token) is refused.
"""

from __future__ import annotations

import http.client
import re
import shutil
import sqlite3
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

import pytest
from langgraph.checkpoint.sqlite import SqliteSaver

from lg_eval.experiments import open_store
from lg_eval.labels import harvest_labels, load_labels, save_labels
from lg_eval.viewer import ViewerServer, make_viewer
from lg_eval.viewer._server import MAX_FORM
from tests import travel
from tests.calibration.labelled import KEY, play_bookings, scripted_judge, swept, thread_id
from tests.viewer.test_browser import artifacts, browser, open_page  # noqa: F401 (fixtures)

HOSTILE = '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">'


@pytest.fixture(scope="module")
def labelled_store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """Four travel threads (two approved, two rejected) swept by a judge that passes
    threads 0 and 2, the people's decisions stored as labels of its key; the sweep's run."""
    here = tmp_path_factory.mktemp("labels")
    conn = sqlite3.connect(here / "checkpoints.sqlite", check_same_thread=False)
    saver = SqliteSaver(conn)
    saver.setup()
    graph = travel.agent([], checkpointer=saver)
    play_bookings(graph, {thread_id(n): "approve" if n < 2 else "reject" for n in range(4)})
    judge, _ = scripted_judge({0, 2})
    with open_store(here / "results.sqlite") as store:
        run_id = swept(graph, saver, store, judge)
        save_labels(store, harvest_labels(graph, key=KEY))
    conn.close()
    return here / "results.sqlite", run_id


@pytest.fixture
def viewer(labelled_store: tuple[Path, str], tmp_path: Path) -> Iterator[ViewerServer]:
    shutil.copy(labelled_store[0], tmp_path / "results.sqlite")
    server = make_viewer(str(tmp_path / "results.sqlite"), labeler="alice")
    server.start()
    try:
        yield server
    finally:
        server.stop()


def request(
    server: ViewerServer,
    method: str,
    path: str,
    body: bytes = b"",
    headers: dict[str, str] | None = None,
) -> tuple[int, dict[str, str], str]:
    """One raw request (no header added but those given and the Host), its answer."""
    host, port = urlsplit(server.url).hostname, urlsplit(server.url).port
    conn = http.client.HTTPConnection(str(host), port, timeout=30)
    sent = {"Host": f"{host}:{port}", **(headers or {})}
    conn.request(method, path, body=body, headers=sent)
    response = conn.getresponse()
    answer = response.status, dict(response.getheaders()), response.read().decode()
    conn.close()
    return answer


def token_of(server: ViewerServer, run_id: str, case: str = "t00") -> str:
    _, _, html = request(server, "GET", f"/case?run={run_id}&id={case}")
    found = re.search(r'name="token" value="([^"]+)"', html)
    assert found is not None
    return found.group(1)


def form(run_id: str, token: str | None, **fields: str) -> bytes:
    given = {"run": run_id, "id": "t00", "rep": "0", "key": KEY, "verdict": "fail",
             "note": "It booked before asking.", **fields}  # fmt: skip
    if token is not None:
        given = {"token": token, **given}
    return urlencode(given).encode()


FORM = {"Content-Type": "application/x-www-form-urlencoded"}
SAME_ORIGIN = {**FORM, "Sec-Fetch-Site": "same-origin"}


def stored(server: ViewerServer) -> list[Any]:
    return [label for label in load_labels(server.pages.store) if label.source == "viewer"]


def test_the_case_page_has_the_form_the_labels_and_the_judges_agreement(
    viewer: ViewerServer, labelled_store: tuple[Path, str]
) -> None:
    run_id = labelled_store[1]
    status, headers, html = request(viewer, "GET", f"/case?run={run_id}&id=t00")
    assert status == 200 and headers["Content-Security-Policy"].startswith("default-src 'none'")
    assert 'form class="label-form" id="label-form" method="post" action="/label"' in html
    assert len(token_of(viewer, run_id)) == 43 and viewer.token == token_of(viewer, run_id)
    assert "approved_actions" not in html  # the harvest's key was the judge's: KEY
    assert re.search(r"agrees with people at <a [^>]+>κ 0\.00 ", html)  # 2 of 4 agree: κ 0
    assert '<td><code>c-book</code></td><td><span class="badge passed">pass</span>' in (
        html.replace("turn 2 ", "")
    )


def test_a_form_with_the_sessions_token_writes_one_label_and_goes_back_to_the_case(
    viewer: ViewerServer, labelled_store: tuple[Path, str]
) -> None:
    run_id = labelled_store[1]
    origin = viewer.url.rstrip("/")
    body = form(run_id, token_of(viewer, run_id), note=HOSTILE)
    status, headers, _ = request(viewer, "POST", "/label", body, {**SAME_ORIGIN, "Origin": origin})
    assert status == 303
    assert headers["Location"] == f"/case?run={run_id}&id=t00&rep=0#labels"
    [label] = stored(viewer)
    assert (label.key, label.run_id, label.case_id, label.thread_id) == (KEY, run_id, "t00", "t00")
    assert (label.verdict, label.note, label.labeler) == (False, HOSTILE, "alice")
    _, _, html = request(viewer, "GET", f"/case?run={run_id}&id=t00")
    assert HOSTILE not in html and "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in html


@pytest.mark.parametrize(
    ("change", "status"),
    [
        ({"token": None}, 403),
        ({"token": "x" * 43}, 403),
        ({"headers": {"Host": "evil.example:80"}}, 421),
        ({"headers": {"Origin": "http://evil.example"}}, 403),
        ({"headers": {"Sec-Fetch-Site": "cross-site"}}, 403),
        ({"headers": {"Sec-Fetch-Site": "same-site"}}, 403),
        ({"path": "/case"}, 405),
        ({"path": "/"}, 405),
        ({"method": "PUT"}, 405),
        ({"headers": {"Content-Type": "application/json"}}, 415),
        ({"fields": {"verdict": "maybe"}}, 400),
        ({"fields": {"key": "tone"}}, 400),
        ({"fields": {"id": "no-such-case"}}, 404),
        ({"fields": {"rep": "-1"}}, 400),
        ({"fields": {"admin": "1"}}, 400),
    ],
)
def test_a_request_that_is_not_the_viewers_own_form_writes_nothing(
    viewer: ViewerServer, labelled_store: tuple[Path, str], change: dict[str, Any], status: int
) -> None:
    run_id = labelled_store[1]
    token = change["token"] if "token" in change else token_of(viewer, run_id)
    body = form(run_id, token, **change.get("fields", {}))
    headers = {**SAME_ORIGIN, **change.get("headers", {})}
    found = request(
        viewer, change.get("method", "POST"), change.get("path", "/label"), body, headers
    )
    assert found[0] == status
    assert stored(viewer) == []


def test_a_body_too_large_or_without_a_length_is_refused_unread(
    viewer: ViewerServer, labelled_store: tuple[Path, str]
) -> None:
    run_id = labelled_store[1]
    token = token_of(viewer, run_id)
    big = form(run_id, token, note="x" * MAX_FORM)
    assert request(viewer, "POST", "/label", big, SAME_ORIGIN)[0] == 413
    host, port = urlsplit(viewer.url).hostname, urlsplit(viewer.url).port
    conn = http.client.HTTPConnection(str(host), port, timeout=30)
    conn.putrequest("POST", "/label", skip_host=True, skip_accept_encoding=True)
    conn.putheader("Host", f"{host}:{port}")
    conn.putheader("Content-Type", FORM["Content-Type"])
    conn.endheaders()
    assert conn.getresponse().status == 411
    conn.close()
    assert stored(viewer) == []


def test_a_viewer_bound_off_this_machine_renders_no_form_and_writes_nothing(
    labelled_store: tuple[Path, str], tmp_path: Path
) -> None:
    shutil.copy(labelled_store[0], tmp_path / "results.sqlite")
    server = make_viewer(str(tmp_path / "results.sqlite"), host="0.0.0.0")
    server.start()
    try:
        assert server.token is None
        port = server.server_address[1]
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        conn.request(
            "GET", f"/case?run={labelled_store[1]}&id=t00", headers={"Host": f"0.0.0.0:{port}"}
        )
        html = conn.getresponse().read().decode()
        assert "label-form" not in html and "This viewer is read-only" in html
        body = form(labelled_store[1], "anything")
        conn.request(
            "POST", "/label", body=body, headers={"Host": f"0.0.0.0:{port}", **SAME_ORIGIN}
        )
        assert conn.getresponse().status == 403
        conn.close()
        assert stored(server) == []
    finally:
        server.stop()


def test_the_calibration_page_lists_each_disagreement_with_both_sides(
    viewer: ViewerServer, labelled_store: tuple[Path, str]
) -> None:
    status, _, html = request(viewer, "GET", f"/calibration?key={KEY}")
    assert status == 200
    rows = re.findall(r'<tr><td><a href="([^"]+)"><code>(t\d\d)</code>', html)
    assert [case for _, case in rows] == ["t01", "t02"]
    assert "case 1: books without a reason" in html and "Too early." in html
    assert request(viewer, "GET", "/calibration?key=tone")[0] == 404
    _, _, run_page = request(viewer, "GET", f"/run?id={labelled_store[1]}")
    assert "agreement with people" in run_page and "on 4 labelled cases" in run_page


# --- in a real browser ----------------------------------------------------------------------


class _Elsewhere(BaseHTTPRequestHandler):
    """Another origin's page: a form posting to the viewer, holding the stolen token."""

    page = b""

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.end_headers()
        self.wfile.write(self.page)

    def log_message(self, format: str, *args: Any) -> None:
        pass


def test_the_form_works_in_chromium_and_a_form_on_another_origin_is_refused(
    browser: Any,  # noqa: F811
    viewer: ViewerServer,
    labelled_store: tuple[Path, str],
    artifacts: Path,  # noqa: F811
) -> None:
    run_id = labelled_store[1]
    requests: list[str] = []
    page = open_page(browser, requests)
    page.goto(viewer.url + f"case?run={run_id}&id=t01")
    page.check("#label-fail")
    page.fill("#label-note", HOSTILE)
    page.select_option("#label-key", KEY)
    page.click("#label-submit")
    page.wait_for_url(re.compile(r".*/case\?run=.*&id=t01&rep=0#labels$"))
    row = page.locator("table.labels tbody tr").last
    assert row.locator("td").nth(3).inner_text() == HOSTILE
    assert row.locator("td").nth(4).inner_text() == "alice"
    assert page.evaluate("window.__pwned") is None
    page.screenshot(path=artifacts / "viewer-label-page.png", full_page=True)
    top = page.locator("#agreements").bounding_box()
    bottom = page.locator("#label-form").bounding_box()
    assert top is not None and bottom is not None
    scrolled = page.evaluate("window.scrollY")  # the boxes are the viewport's, the clip the page's
    clip = {"x": 0, "y": top["y"] + scrolled - 50, "width": 1280,
            "height": bottom["y"] + bottom["height"] - top["y"] + 70}  # fmt: skip
    page.screenshot(path=artifacts / "viewer-label-form.png", full_page=True, clip=clip)
    [label] = stored(viewer)
    assert (label.case_id, label.verdict, label.note) == ("t01", False, HOSTILE)
    viewer_netloc = urlsplit(viewer.url).netloc
    assert all(urlsplit(url).netloc == viewer_netloc for url in requests)

    token = token_of(viewer, run_id)
    fields = "".join(
        f'<input type="hidden" name="{name}" value="{value}">'
        for name, value in (("token", token), ("run", run_id), ("id", "t02"), ("rep", "0"),
                            ("key", KEY), ("verdict", "pass"), ("note", "from elsewhere"))
    )  # fmt: skip
    _Elsewhere.page = (
        f'<form id="steal" method="post" action="{viewer.url}label">{fields}'
        '<button id="go">go</button></form>'
    ).encode()
    elsewhere = ThreadingHTTPServer(("127.0.0.1", 0), _Elsewhere)
    threading.Thread(target=elsewhere.serve_forever, daemon=True).start()
    try:
        page.goto(f"http://127.0.0.1:{elsewhere.server_address[1]}/")
        with page.expect_response(lambda r: r.url.endswith("/label")) as answered:
            page.click("#go")
        assert answered.value.status == 403
        assert "only from the viewer's own pages" in answered.value.text()
    finally:
        elsewhere.shutdown()
        elsewhere.server_close()
    assert len(stored(viewer)) == 1
    page.close()
