"""Reports: one report model, five renderings.

:func:`build_report` computes everything once from an
:class:`~lg_eval.experiments.ExperimentRun` (with stored ``history`` for the trend and a
``comparison`` against a baseline); the renderers lay the :class:`Report` out:

* :func:`render_terminal`: rich tables and the failed cases, printed to a console;
* :func:`render_markdown`: GitHub-flavoured Markdown for pull requests and CI summaries;
* :func:`render_html`: a self-contained page with filters, trajectory diffs and SVG charts;
* :func:`render_junit`: JUnit XML, one testcase per case × repetition;
* :func:`render_json`: every case × repetition with its scores, for scripts.

:func:`stream_report` builds the same report from a stored run of any size in bounded
memory (read a page at a time; ``cases`` holds only its worst results).

Each renderer escapes run content for its own format; see ``docs/security.md``.
"""

from lg_eval.reports.build import build_report
from lg_eval.reports.html_report import render_html
from lg_eval.reports.json_report import render_json
from lg_eval.reports.junit import render_junit
from lg_eval.reports.markdown import render_markdown
from lg_eval.reports.model import (
    CaseReport,
    ComparisonReport,
    EvaluatorSummary,
    Histogram,
    PlayedTurn,
    Report,
    ScoreLine,
    StatusCounts,
    Summary,
    TagSummary,
    TrendPoint,
    TurnDiff,
)
from lg_eval.reports.stream import stream_report
from lg_eval.reports.terminal import render_comparison, render_terminal

__all__ = [
    "CaseReport",
    "ComparisonReport",
    "EvaluatorSummary",
    "Histogram",
    "PlayedTurn",
    "Report",
    "ScoreLine",
    "StatusCounts",
    "Summary",
    "TagSummary",
    "TrendPoint",
    "TurnDiff",
    "build_report",
    "render_comparison",
    "render_html",
    "render_json",
    "render_junit",
    "render_markdown",
    "render_terminal",
    "stream_report",
]
