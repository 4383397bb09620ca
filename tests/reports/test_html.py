"""render_html: a self-contained page with the summary, filters, rows, diffs and SVG charts."""

from __future__ import annotations

import json
import re

import pytest

from lg_eval.experiments import Comparison, ExperimentRun
from lg_eval.reports import build_report, render_html
from lg_eval.reports._html import csp_hash, environment, script_json
from tests.reports.helpers import Node, parse_html


@pytest.fixture
def page(support_run: ExperimentRun, history: list[ExperimentRun], comparison: Comparison) -> str:
    return render_html(build_report(support_run, history=history, comparison=comparison))


@pytest.fixture
def tree(page: str) -> Node:
    return parse_html(page)


def test_summary_shows_run_dataset_rates_latency_tokens_and_cost(tree: Node) -> None:
    summary = tree.find("header", id="summary")
    assert summary.find("h1").text() == "lg_eval report: support-bot"
    assert "run-0304" in summary.find("p", cls="sub").text()
    cards = {
        c.find("div", cls="k").text(): c.find("div", cls="n").text()
        for c in summary.find_all(cls="card")
    }
    assert cards == {
        "pass rate": "42.9%",
        "passed": "3",
        "failed": "2",
        "error": "1",
        "timeout": "1",
        "pass@2 / pass^2": "50.0% / 33.3%",
        "latency p50 / p95": "1.20s / 22.50s",
        "tokens": "3700",
        "cost": "$0.0210",
        "results": "7",
    }


def test_one_row_per_result_with_filters_for_every_tag_and_status(tree: Node) -> None:
    rows = [r for r in tree.find("table", id="case-table").iter() if "data-row" in r.attrs]
    assert [r.attrs["data-row"] for r in rows] == [str(n) for n in range(7)]
    assert [r.attrs["data-status"] for r in rows][:2] == ["passed", "failed"]
    tags = [o.attrs["value"] for o in tree.find("select", id="filter-tag").find_all("option")]
    assert tags == ["", "hitl", "orders", "refunds", "search", "smoke"]
    statuses = [
        o.attrs["value"] for o in tree.find("select", id="filter-status").find_all("option")
    ]
    assert statuses == ["", "passed", "failed", "error", "timeout"]


def test_filter_data_matches_the_rows(page: str) -> None:
    blob = re.search(r'<script type="application/json" id="lg-data">(.*?)</script>', page, re.S)
    assert blob is not None
    data = json.loads(blob.group(1))
    assert data["rows"][1] == {"status": "failed", "tags": ["refunds", "hitl"]}


def test_failed_case_shows_expected_and_actual_side_by_side_with_the_difference(tree: Node) -> None:
    case = tree.find("article", id="case-1")
    assert "failed" in case.classes
    diff = case.find("div", cls="diff")
    highlighted = [(n.text(), sorted(n.classes)) for n in diff.find_all("li", cls="differs")]
    assert highlighted == [("refund", ["differs", "missing", "step"])]
    assert "step 2: expected 'refund', got 'respond'" in diff.find("div", cls="reason").text()
    turns = case.find("table", cls="turns").text()
    assert '{"approved": true}' in turns
    assert 'human_review: {"question": "Approve a refund of $250 for order 1042?"}' in turns
    assert "The reviewer approved, yet the agent answered without refunding." in case.text()


def test_error_and_timeout_cases_show_their_messages(tree: Node) -> None:
    assert "GraphRecursionError" in tree.find("article", id="case-3").text()
    assert "timed out after 30s" in tree.find("article", id="case-4").text()


def test_charts_are_inline_svg(tree: Node) -> None:
    titles = [f.find("figcaption").text() for f in tree.find_all("figure", cls="chart")]
    assert titles == [
        "Pass rate per evaluator",
        "Score distribution",
        "Latency distribution",
        "Pass rate across runs",
    ]
    svgs = tree.find_all("svg")
    assert len(svgs) == 4
    bars = svgs[0].find_all("rect", cls="bar")
    assert [b.attrs["width"] for b in bars] == ["180.0", "150.0", "300.0"]  # 60%, 50%, 100%
    assert len(svgs[1].find_all("rect", cls="bar")) == 10
    assert len(svgs[3].find_all("circle")) == 4
    assert svgs[3].find("polyline").attrs["points"].count(",") == 4


def test_no_trend_chart_without_history(support_run: ExperimentRun) -> None:
    assert len(parse_html(render_html(build_report(support_run))).find_all("svg")) == 3


def test_comparison_section_lists_changes_and_deltas(tree: Node) -> None:
    section = tree.find("section", id="comparison")
    changes = [
        (r.find("td").text(), r.find("span").text()) for r in section.find_all("tr", cls="change")
    ]
    assert changes == [
        ("refund-over-limit", "regressed"),
        ("faq-shipping", "improved"),
        ("slow-search", "added"),
        ("legacy-greeting", "removed"),
    ]
    assert "-0.15" in section.text()


def test_page_is_self_contained(page: str, tree: Node) -> None:
    for node in tree.iter():
        for name in ("src", "href", "action", "srcset", "xlink:href", "data"):
            value = node.attrs.get(name)
            assert value is None or value.startswith("#"), (node.tag, name, value)
    assert tree.find_all("link") == []
    assert "http://" not in page and "https://" not in page
    assert "@import" not in page and "url(" not in page


def test_csp_allows_only_the_inline_blocks_by_hash(page: str, tree: Node) -> None:
    meta = tree.find("meta", http_equiv="Content-Security-Policy")
    policy = dict(([*part.split(" ", 1), ""])[:2] for part in meta.attrs["content"].split("; "))
    style = tree.find("style").text()
    script = next(s for s in tree.find_all("script") if "type" not in s.attrs).text()
    assert policy["default-src"] == "'none'"
    assert policy["script-src"] == csp_hash(script)
    assert policy["style-src"] == csp_hash(style)
    assert policy["img-src"] == "data:"
    assert "connect-src" not in policy
    assert "unsafe-inline" not in meta.attrs["content"]
    assert " style=" not in page  # inline style attributes would be blocked


def test_every_template_autoescapes_and_none_opts_out() -> None:
    env = environment()
    assert env.autoescape is True  # for every template name, not only *.html
    templates = [name for name in env.list_templates() if name.endswith(".j2")]
    assert templates == [
        "answer.html.j2",
        "calibration.html.j2",
        "charts.html.j2",
        "diff.html.j2",
        "report.html.j2",
    ]
    assert env.loader is not None
    for name in templates:
        source = env.loader.get_source(env, name)[0]
        assert "|safe" not in source.replace(" ", "")
        assert "{% autoescape" not in source and "{%autoescape" not in source


def test_script_json_cannot_close_its_element() -> None:
    text = script_json({"x": "</script><!-- & \u2028\u2029 >"})
    assert str(text) == '{"x": "\\u003c/script\\u003e\\u003c!-- \\u0026 \\u2028\\u2029 \\u003e"}'
    assert json.loads(str(text)) == {"x": "</script><!-- & \u2028\u2029 >"}
