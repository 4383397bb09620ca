"""Reports: one report model, five renderings.

A :class:`Report` lists a run's results as the store keeps them
(:class:`~lg_eval.experiments.CaseResult`, each beside its trajectory difference:
:class:`ReportCase`) with the aggregates computed once, on one of two paths:

* :func:`build_report`: in memory, from an :class:`~lg_eval.experiments.ExperimentRun`
  (with stored ``history`` for the trend and a ``comparison`` against a baseline);
* :func:`stream_report`: in SQL, from a stored run of any size (the queries the viewer
  reads a run's aggregates with); ``cases`` holds its worst results, or every one. What
  it would read inside each result (notes, tags, retries) it may take from a
  :class:`ResultTally` kept as the results were stored (a sweep's).

The renderers lay the report out:

* :func:`render_terminal`: rich tables and the failed cases, printed to a console
  (:func:`render_comparison`: only the comparison);
* :func:`render_markdown`: GitHub-flavoured Markdown for pull requests and CI summaries;
* :func:`render_html`: a self-contained page with filters, trajectory diffs and SVG charts;
* :func:`render_junit`: JUnit XML, one testcase per case × repetition;
* :func:`render_json`: the model as a document (``lg_eval.report/3``), for scripts;
  :func:`write_json` streams it, :func:`json_schema` describes it.

Each renderer escapes run content for its own format; see ``docs/security.md``.
"""

from lg_eval.reports._build import ResultTally, build_report
from lg_eval.reports._html import render_html
from lg_eval.reports._json import json_schema, render_json, write_json
from lg_eval.reports._junit import render_junit
from lg_eval.reports._markdown import render_markdown
from lg_eval.reports._model import (
    SCHEMA,
    EvaluatorSummary,
    Histogram,
    Report,
    ReportCase,
    RunNote,
    StatusCounts,
    Summary,
    TagSummary,
    TrendPoint,
    with_calibration,
)
from lg_eval.reports._stored import stream_report
from lg_eval.reports._terminal import render_comparison, render_terminal
from lg_eval.reports._text import Step, TurnDiff

__all__ = [
    "SCHEMA",
    "EvaluatorSummary",
    "Histogram",
    "Report",
    "ReportCase",
    "ResultTally",
    "RunNote",
    "StatusCounts",
    "Step",
    "Summary",
    "TagSummary",
    "TrendPoint",
    "TurnDiff",
    "build_report",
    "json_schema",
    "render_comparison",
    "render_html",
    "render_json",
    "render_junit",
    "render_markdown",
    "render_terminal",
    "stream_report",
    "with_calibration",
    "write_json",
]
