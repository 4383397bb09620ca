"""Writing a report in the formats asked for (shared by ``run`` and ``report``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from lg_eval.cli._common import write_file
from lg_eval.reports import Report, render_html, render_json, render_junit, render_markdown

RENDERERS: dict[str, Callable[[Report], str]] = {
    "html": render_html,
    "md": render_markdown,
    "json": render_json,
    "junit": render_junit,
}


def write_reports(
    report: Report,
    *,
    json_file: Path | None = None,
    html: Path | None = None,
    md: Path | None = None,
    junit: Path | None = None,
) -> None:
    """Write each format whose file was given."""
    for name, path in (("json", json_file), ("html", html), ("md", md), ("junit", junit)):
        if path is not None:
            write_file(path, RENDERERS[name](report))
