"""Hostile content: every renderer shows payloads as text and never obeys them.

The payload (tests/reports/conftest.py) sits in a case id, a tag, the input, tool args,
an interrupt payload, a resume value, a trajectory step, comments, a judge's reasoning, an
error and the run's target: HTML and SVG injection that would set a marker, rich markup,
ANSI colour and OSC hyperlink escapes, table pipes and newlines, ``]]>`` and control
characters.
"""

from __future__ import annotations

import io
import json
import re
import xml.etree.ElementTree as ET

import pytest
from rich.console import Console

from lg_eval._visible import visible
from lg_eval.experiments import ExperimentRun
from lg_eval.reports import (
    build_report,
    render_html,
    render_json,
    render_junit,
    render_markdown,
    render_terminal,
)
from tests.reports.conftest import HOSTILE_ID, HOSTILE_TAG, PAYLOAD
from tests.reports.helpers import markdown_tables, parse_html

CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202e]")
SHOWN = visible(PAYLOAD)


# --------------------------------------------------------------------------- HTML


@pytest.fixture
def page(hostile_run: ExperimentRun) -> str:
    return render_html(build_report(hostile_run))


def test_html_has_no_element_or_handler_from_content(page: str) -> None:
    tree = parse_html(page)
    tags = [n.tag for n in tree.iter()]
    assert tags.count("script") == 2  # the data block and the page's own script
    assert "img" not in tags and "iframe" not in tags and "a" in tags
    assert tags.count("svg") == 3  # the charts only
    for node in tree.iter():
        assert not [a for a in node.attrs if a.startswith("on")], (node.tag, node.attrs)
    assert tree.find("title").text() == "lg_eval report: support-hostile"


def test_html_shows_every_payload_as_text(page: str) -> None:
    tree = parse_html(page)
    article = tree.find("article", id="case-0")
    text = article.text()
    first_line = SHOWN.split("\n")[0]
    for prefix in ("case", "tag", "comment", "judge", "tool", "resume", "said", "first"):
        assert prefix + first_line in text, prefix
    answer = article.find("div", cls="answer")
    assert answer.find("div", cls="said").text() == f"said{SHOWN}"
    assert answer.find("div", cls="expected").text() == visible(
        json.dumps(f"keyword{PAYLOAD}", ensure_ascii=False)
    )
    for prefix in ("input", "interrupt", "args"):  # inside JSON: quotes are backslashed
        assert prefix + PAYLOAD.split("\x1b")[0].replace('"', '\\"') in text, prefix
    assert "\\u001b[31mRED" in text  # json.dumps writes ESC as \u001b: visible too
    assert f"case{SHOWN}".split("\n")[0] in article.find("h3").text()
    assert "<script>document.title='PWNED'" in article.find("div", cls="judge").text()
    assert "\u241b[31mRED" in text  # ESC shown as ␛
    assert "<svg onload=" in tree.find("p", cls="sub").text()  # the run's target


def test_html_text_has_no_raw_control_characters(page: str) -> None:
    assert not CONTROL.search(page)


def test_tag_filter_values_are_attribute_escaped(page: str) -> None:
    tree = parse_html(page)
    values = [o.attrs["value"] for o in tree.find("select", id="filter-tag").find_all("option")]
    assert values == ["", "plain", visible(HOSTILE_TAG)]
    assert '"><svg onload=' not in page  # never raw in an attribute nor in text
    assert "&#34;&gt;&lt;svg onload=" in page


def test_embedded_data_cannot_break_out_of_its_script(page: str) -> None:
    blob = re.search(r'<script type="application/json" id="lg-data">(.*?)</script>', page, re.S)
    assert blob is not None
    raw = blob.group(1)
    assert "<" not in raw and ">" not in raw and "&" not in raw
    assert json.loads(raw)["rows"][0]["tags"] == [visible(HOSTILE_TAG), "plain"]


# --------------------------------------------------------------------------- Markdown


def test_markdown_neutralises_html_and_keeps_tables_intact(hostile_run: ExperimentRun) -> None:
    text = render_markdown(build_report(hostile_run))
    assert re.findall(r"<[^>]*>", text) == ["<br>"] * len(re.findall("<br>", text))
    assert "&lt;script&gt;" in text
    assert "\\[link=http://evil.example\\]" in text
    assert not CONTROL.search(text)
    tables = markdown_tables(text)
    for rows in tables:
        assert {len(row) for row in rows} == {len(rows[0])}
    cases = next(t for t in tables if t[0][:2] == ["case", "status"])
    assert len(cases) == 2 + 3  # header, delimiter, three results: newlines did not split rows
    assert "a\\|b<br>second line" in cases[2][0]
    ours = ("|", "# ", "## ", "### ", "**Error:** ", "Pass rate ")
    assert all(line == "" or line.startswith(ours) for line in text.split("\n"))


# --------------------------------------------------------------------------- JUnit


def test_junit_is_well_formed_and_keeps_the_payload_as_text(hostile_run: ExperimentRun) -> None:
    xml = render_junit(build_report(hostile_run))
    assert not CONTROL.search(xml.replace("\n", ""))
    root = ET.fromstring(xml)
    cases = root.findall("testsuite/testcase")
    assert cases[0].get("name") == visible(HOSTILE_ID)
    failure = cases[0].find("failure")
    assert failure is not None
    assert "</script><img src=x onerror=" in (failure.get("message") or "")
    assert "]]>" in (failure.text or "")
    assert "]]>" not in xml  # written as ]]&gt;
    error = cases[2].find("error")
    assert error is not None and (error.get("message") or "").startswith("error<script>")
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("3", "1", "1")


# --------------------------------------------------------------------------- terminal


def test_terminal_never_applies_markup_or_sends_escapes(hostile_run: ExperimentRun) -> None:
    console = Console(record=True, width=200, file=io.StringIO(), force_terminal=True)
    render_terminal(build_report(hostile_run), console=console)
    raw = console.file.getvalue()  # type: ignore[attr-defined]
    without_sgr = re.sub(r"\x1b\[[0-9;]*m", "", raw)  # rich's own colours
    assert "\x1b" not in without_sgr  # no ESC from content: no ANSI colour, no OSC 8 link
    assert not CONTROL.search(without_sgr.replace("\n", ""))
    assert "\x1b]8;" not in raw
    text = console.export_text()
    assert "[link=http://evil.example]click[/link]" in text
    assert "[bold red]loud[/bold red]" in text
    assert "\u241b[31mRED\u241b[0m" in text and "\u241b]8;;http://x\u2407osc-link" in text


# --------------------------------------------------------------------------- JSON


def test_json_keeps_content_verbatim(hostile_run: ExperimentRun) -> None:
    document = json.loads(render_json(hostile_run))
    assert document["cases"][0]["result"]["case_id"] == HOSTILE_ID
    assert document["cases"][0]["result"]["tags"] == [HOSTILE_TAG, "plain"]
