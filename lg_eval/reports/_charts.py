"""Chart geometry for the HTML report: bars, histograms and a trend line as plain numbers.

Only coordinates are computed here; the SVG elements are written by the
``charts.html.j2`` macros, so every label goes through jinja2's autoescaping like the
rest of the page. No chart library, no script: the charts are static inline SVG.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from lg_eval._visible import visible
from lg_eval.reports._model import EvaluatorSummary, Histogram, TrendPoint
from lg_eval.reports._text import dataset_changes, number, percent, shorten

WIDTH = 560
LABEL_LIMIT = 28


@dataclass(frozen=True)
class Bar:
    """One rectangle with its label (below or beside it) and a tooltip."""

    x: float
    y: float
    width: float
    height: float
    label: str
    value: str
    tooltip: str


@dataclass(frozen=True)
class Chart:
    """An SVG chart: its size, bars, an optional line and the axis labels."""

    title: str
    width: int
    height: int
    bars: tuple[Bar, ...] = ()
    points: tuple[tuple[float, float, str, str], ...] = ()  # x, y, label, tooltip
    ticks: tuple[tuple[float, float, str, str], ...] = ()  # x, y, text, text-anchor
    baseline: float = 0.0
    breaks: tuple[int, ...] = ()
    """Indexes of ``points`` where the dataset changed: the line stops before each."""

    @property
    def polylines(self) -> list[str]:
        """The ``points`` attribute of each piece of the trend line (one per dataset)."""
        cuts = [0, *self.breaks, len(self.points)]
        pieces = [self.points[a:b] for a, b in itertools.pairwise(cuts)]
        return [" ".join(f"{x:.1f},{y:.1f}" for x, y, _, _ in piece) for piece in pieces]

    @property
    def break_lines(self) -> list[float]:
        """The x of a dashed line between two runs whose datasets differ."""
        return [round((self.points[n - 1][0] + self.points[n][0]) / 2, 1) for n in self.breaks]


def pass_rate_bars(evaluators: list[EvaluatorSummary]) -> Chart:
    """Horizontal bars: each feedback key's pass rate (keys without verdicts are left out)."""
    rated = [e for e in evaluators if e.pass_rate is not None]
    label_width, row, track = 200.0, 24.0, WIDTH - 200.0 - 60.0
    bars = tuple(
        Bar(
            x=label_width,
            y=10 + n * row,
            width=round(track * (e.pass_rate or 0.0), 1),
            height=row - 8,
            label=shorten(visible(e.key), LABEL_LIMIT),
            value=percent(e.pass_rate),
            tooltip=f"{visible(e.key)}: {e.passed} passed, {e.failed} failed",
        )
        for n, e in enumerate(rated)
    )
    return Chart(
        title="Pass rate per evaluator",
        width=WIDTH,
        height=int(20 + row * max(len(rated), 1)),
        bars=bars,
        baseline=label_width,
    )


def histogram_chart(title: str, histogram: Histogram, unit: str = "") -> Chart:
    """Vertical bars of a histogram, with the edges of the first, middle and last bins; a
    histogram of nothing (no result has the value: no cost, say) says "no data" instead
    of drawing an empty axis."""
    left, bottom, top, plot_height = 40.0, 170.0, 20.0, 150.0
    if not any(histogram.counts):
        return Chart(title=title, width=WIDTH, height=int(bottom + 24))
    slot = (WIDTH - left - 20) / len(histogram.counts)
    peak = max(histogram.counts, default=0) or 1
    edges = histogram.edges
    bars = tuple(
        Bar(
            x=round(left + n * slot + 1, 1),
            y=round(bottom - plot_height * count / peak, 1),
            width=round(slot - 2, 1),
            height=round(plot_height * count / peak, 1),
            label="",
            value=str(count) if count else "",
            tooltip=f"{number(edges[n])}{unit}–{number(edges[n + 1])}{unit}: {count}",
        )
        for n, count in enumerate(histogram.counts)
    )
    last = len(histogram.counts)
    ticks = tuple(
        (left + n * slot, bottom + 16, f"{number(edges[n])}{unit}", anchor)
        for n, anchor in ((0, "start"), (last // 2, "middle"), (last, "end"))
    )
    return Chart(
        title=title, width=WIDTH, height=int(bottom + 24), bars=bars, ticks=ticks, baseline=top
    )


def trend_chart(points: list[TrendPoint]) -> Chart:
    """A line of the pass rate per stored run, oldest on the left, cut (and marked with a
    dashed line) where the dataset changed between two runs."""
    left, right, top, bottom = 50.0, WIDTH - 50.0, 20.0, 170.0
    step = (right - left) / max(len(points) - 1, 1)
    changes = dataset_changes(points)
    placed = tuple(
        (
            round(left + n * step, 1),
            round(bottom - (bottom - top) * (p.pass_rate or 0.0), 1),
            percent(p.pass_rate),
            f"{visible(p.run_id)} ({p.started_at:%Y-%m-%d %H:%M}): {percent(p.pass_rate)}"
            + (" (this run)" if p.current else "")
            + (" (the dataset changed since the run before)" if changed else ""),
        )
        for n, (p, changed) in enumerate(zip(points, changes, strict=True))
    )
    ticks = (
        (4.0, bottom + 4, "0%", "start"),
        (4.0, top + 4, "100%", "start"),
        *(
            (x, bottom + 18, shorten(visible(p.run_id), 14), "middle")
            for (x, *_), p in zip(placed, points, strict=True)
        ),
    )
    return Chart(
        title="Pass rate across runs",
        width=WIDTH,
        height=int(bottom + 26),
        points=placed,
        ticks=ticks,
        baseline=bottom,
        breaks=tuple(n for n, changed in enumerate(changes) if changed),
    )
