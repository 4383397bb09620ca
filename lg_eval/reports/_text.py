"""Text shared by every rendering: content made visible, values and numbers formatted once.

Run content (inputs, tool args, interrupt payloads, comments, case ids, tags) is kept
verbatim in the results; a report must show it, never obey it. :func:`visible` is the
first step of every renderer: control characters, terminal escape sequences (ESC starts
ANSI colours and OSC hyperlinks), carriage returns that would overwrite a line, bidi
overrides that reorder what the eye reads, and code points XML cannot carry are turned
into visible stand-ins. Each renderer then escapes for its own syntax (HTML, Markdown,
XML, rich markup).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from typing import Any

from lg_eval.stats import Interval, PairedTest


def value_text(value: Any) -> str:
    """A value as the reader should see it: strings as they are, the rest as compact JSON."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, default=str, sort_keys=False)
    except (TypeError, ValueError):
        return repr(value)


def shorten(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters with an ellipsis."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def percent(rate: float | None) -> str:
    """``0.8333`` → ``83.3%``; ``None`` → ``–``."""
    return "–" if rate is None else f"{rate * 100:.1f}%"


def seconds(value: float | None) -> str:
    """A duration: ``1.23s``, ``950ms``; ``None`` → ``–``."""
    if value is None:
        return "–"
    return f"{value * 1000:.0f}ms" if value < 1 else f"{value:.2f}s"


def number(value: float | None, digits: int = 3) -> str:
    """A score or delta: up to ``digits`` decimals, trailing zeros dropped; ``None`` → ``–``."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if isinstance(value, bool):
        return "true" if value else "false"
    text = f"{value:.{digits}f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def signed(value: float | None, digits: int = 3) -> str:
    """A delta with its sign: ``+0.2``, ``-0.05``, ``0``."""
    if value is None:
        return "–"
    text = number(value, digits)
    return text if text.startswith("-") or text == "0" else f"+{text}"


def signed_seconds(value: float | None) -> str:
    """A change of duration with its sign and unit: ``+120ms``, ``-1.50s``, ``0ms``."""
    if value is None:
        return "–"
    shown = seconds(abs(value))
    return shown if shown in ("0ms",) else f"{'-' if value < 0 else '+'}{shown}"


def dataset_changes(points: Sequence[Any]) -> list[bool]:
    """For each trend point (``dataset_hash``), whether the dataset changed since the point
    before it (never for the first, nor where a hash is unknown)."""
    return [
        n > 0 and None not in (p.dataset_hash, points[n - 1].dataset_hash)
        and p.dataset_hash != points[n - 1].dataset_hash
        for n, p in enumerate(points)
    ]  # fmt: skip


def span(interval: Interval | None, shown: Callable[[float | None], str] = percent) -> str:
    """An interval as ``[71.2%, 86.6%]`` (each end through ``shown``); ``None`` → ``–``."""
    return "–" if interval is None else f"[{shown(interval.low)}, {shown(interval.high)}]"


def p_value(value: float | None) -> str:
    """A p-value with three significant digits; below 0.001 as ``<0.001``."""
    if value is None:
        return "–"
    return "<0.001" if value < 0.001 else f"{value:.3g}"


def test_subject(test: PairedTest) -> str:
    """What a paired test is about: ``status`` or the feedback key."""
    return "status" if test.key is None else test.key


def test_effect(test: PairedTest) -> str:
    """The effect, B minus A: a pass-rate change in points, or a mean score difference."""
    if test.test in ("mcnemar", "clustered_mcnemar"):
        return f"{signed(test.effect * 100, 1)} pts"
    return signed(test.effect) + (
        "" if test.effect_interval is None else " " + span(test.effect_interval, number)
    )


def test_verdict(test: PairedTest) -> str:
    """``significant regression``, ``significant improvement`` or ``not significant``."""
    if test.regression:
        return "significant regression"
    return "significant improvement" if test.improvement else "not significant"


def note_line(note: Any) -> str:
    """A run note (:class:`~lg_eval.reports._model.RunNote`) as one line: its text, then how
    many cases carry it and which: ``... (2 cases: refund, review)``."""
    more = "…" if note.cases > len(note.case_ids) else ""
    noun = "case" if note.cases == 1 else "cases"
    return f"{note.text} ({note.cases} {noun}: {', '.join(note.case_ids)}{more})"


def money(value: float | None) -> str:
    """A cost in dollars: ``$0.0123``; ``None`` → ``–``."""
    return "–" if value is None else f"${value:.4f}"
