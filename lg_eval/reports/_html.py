"""HTML rendering: one self-contained page (jinja2 templates, inline CSS, JS and SVG).

The page works from a file, offline, and asks for nothing over the network: no external
asset, no URL, and a Content-Security-Policy that forbids everything but the page's own
inline ``<style>`` and ``<script>``, pinned by their SHA-256 hashes computed here from the
exact blocks inserted. Content is escaped by jinja2's autoescaping in every template
(text, attributes and SVG labels alike) after :func:`~lg_eval.reports._text.visible`;
the data the filter script reads is JSON with ``<``, ``>``, ``&``, U+2028 and U+2029
written as ``\\uXXXX`` so it cannot close its ``<script>`` element or open a comment.
"""

from __future__ import annotations

import base64
import hashlib
import json
from functools import cache
from importlib.resources import files
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup

from lg_eval._arguments import validated
from lg_eval._visible import visible
from lg_eval.reports import _charts as charts
from lg_eval.reports._model import (
    STATUSES,
    Report,
    agreement_text,
    change_counts,
    changed,
    is_judge,
    kind_label,
    no_verdict,
    pooled_tests,
    reason,
    shown_disagreements,
    significant_cases,
    speaker,
)
from lg_eval.reports._text import (
    money,
    note_line,
    number,
    p_value,
    percent,
    seconds,
    signed,
    signed_seconds,
    span,
    test_effect,
    test_subject,
    test_verdict,
    value_text,
)

_JSON_ESCAPES = {
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}


def script_json(data: Any) -> Markup:
    """``data`` as JSON safe to place verbatim inside a ``<script>`` element."""
    text = json.dumps(data, ensure_ascii=False)
    return Markup("".join(_JSON_ESCAPES.get(char, char) for char in text))


def csp_hash(block: str) -> str:
    """The CSP source expression (``'sha256-…'``) allowing exactly this inline block."""
    digest = hashlib.sha256(block.encode("utf-8")).digest()
    return f"'sha256-{base64.b64encode(digest).decode('ascii')}'"


def content_security_policy(style: str, script: str) -> str:
    """No network, no plugins, no base or form targets: only these inline blocks run."""
    return (
        f"default-src 'none'; script-src {csp_hash(script)}; style-src {csp_hash(style)}; "
        "img-src data:; base-uri 'none'; form-action 'none'"
    )


@cache
def environment() -> Environment:
    """The jinja2 environment: autoescaping on for every template, undefined names fail;
    the filters and tests the report's and the viewer's templates share."""
    env = Environment(
        loader=PackageLoader("lg_eval.reports", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(
        v=visible,
        percent=percent,
        seconds=seconds,
        number=number,
        money=money,
        note=note_line,
        signed=signed,
        signed_seconds=signed_seconds,
        span=span,
        span_number=lambda interval: span(interval, number),
        p=p_value,
        subject=test_subject,
        effect=test_effect,
        verdict=test_verdict,
        text=value_text,
        reason=reason,
        speaker=speaker,
        kind_label=kind_label,
        changed=changed,
        change_counts=change_counts,
        pooled=pooled_tests,
        significant=significant_cases,
        agreement=lambda key, report: agreement_text(report, key),
        shown=shown_disagreements,
    )
    env.tests.update(judge=is_judge, no_verdict=no_verdict)
    return env


def _asset(name: str) -> str:
    return (files("lg_eval.reports") / "templates" / name).read_text(encoding="utf-8")


@validated
def render_html(report: Report) -> str:
    """The report as a standalone HTML page."""
    style, script = _asset("report.css"), _asset("report.js")
    data = {
        "rows": [
            {"status": case.result.status, "tags": [visible(tag) for tag in case.result.tags]}
            for case in report.cases
        ]
    }
    chart_list = [
        charts.pass_rate_bars(report.evaluators),
        charts.histogram_chart("Score distribution", report.score_histogram),
        charts.histogram_chart("Latency distribution", report.latency_histogram, unit="s"),
    ]
    if report.trend:
        chart_list.append(charts.trend_chart(report.trend))
    return (
        environment()
        .get_template("report.html.j2")
        .render(
            report=report,
            statuses=STATUSES,
            charts=chart_list,
            style=Markup(style),
            script=Markup(script),
            data=script_json(data),
            csp=content_security_policy(style, script),
        )
    )
