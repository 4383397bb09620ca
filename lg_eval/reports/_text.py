"""What every rendering shares: content made visible, values and numbers formatted once, the
trajectory diff shown side by side, and terminal tables that fit a width.

Run content (inputs, tool args, interrupt payloads, comments, case ids, tags) is kept
verbatim in the results; a report must show it, never obey it. :func:`visible` is the
first step of every renderer: control characters, terminal escape sequences (ESC starts
ANSI colours and OSC hyperlinks), carriage returns that would overwrite a line, bidi
overrides that reorder what the eye reads, and code points XML cannot carry are turned
into visible stand-ins. Each renderer then escapes for its own syntax (HTML, Markdown,
XML, rich markup).

The diff: expected against actual trajectory, turn by turn, what a failed case did
differently. For each turn the two node sequences are aligned (``difflib``'s longest common
subsequence) so a side-by-side view can highlight the steps outside the common part;
the first differing position and the ``missing`` / ``unexpected`` nodes (counted with
repeats, like ``graph_trajectory_*_match``'s metadata) say in words what changed.

Terminal tables fit a width: 80 columns, a CI log, a wide terminal alike.
rich, given a table wider than the console, narrows every column and cuts what no
longer fits with ``…`` (``p…`` for ``passed``). :func:`fitted_table` decides instead:

* a column is **kept whole** (a number, a rate, a run id: ``wrap=False``; only its header
  may wrap, at a space) or **folded** (text: wrapped at spaces, and inside a word only
  when the word is longer than :data:`WORD_MAX`); nothing is ever cut;
* when the kept-whole columns and the narrowest fold of the others do not fit, columns go
  by **priority** (the highest number first), and the caption names them, so a reader
  knows what a wider terminal or another format shows.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from itertools import zip_longest
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from rich.table import Table
from rich.text import Text

from lg_eval.experiments import CaseResult
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


class Step(BaseModel):
    """One node of a trajectory turn; ``differs`` marks it as outside the common sequence."""

    model_config = ConfigDict(extra="forbid")

    name: str
    differs: bool = False


class TurnDiff(BaseModel):
    """Expected against actual steps of one turn."""

    model_config = ConfigDict(extra="forbid")

    turn: int = Field(description="The turn's index in the thread, from 0.")
    expected: list[Step]
    actual: list[Step]
    match: bool
    first_difference: int | None = Field(
        default=None, description="The first position where the two sequences differ."
    )
    missing: list[str] = Field(default_factory=list, description="Expected, did not run.")
    unexpected: list[str] = Field(default_factory=list, description="Ran, not expected.")
    reason: str | None = None


def sides(result: CaseResult) -> tuple[list[list[str]], list[list[str]]] | None:
    """The (expected, actual) trajectories of a result, or None when one is unknown.

    The result's own fields come first; a ``graph_trajectory_*`` feedback's metadata
    (``reference`` / ``actual``) fills in when the runner did not store them.
    """
    expected, actual = result.expected_trajectory, result.trajectory
    for row in result.scores:
        if expected is not None and actual is not None:
            break
        meta = row.metadata or {}
        if row.key.startswith("graph_trajectory_") and "reference" in meta:
            expected = expected if expected is not None else meta.get("reference")
            actual = actual if actual is not None else meta.get("actual")
    if expected is None or actual is None:
        return None
    return expected, actual


def diff_turns(expected: list[list[str]], actual: list[list[str]]) -> list[TurnDiff]:
    """One :class:`TurnDiff` per turn of the longer trajectory."""
    empty: list[str] = []
    return [
        diff_turn(turn, list(e), list(a))
        for turn, (e, a) in enumerate(zip_longest(expected, actual, fillvalue=empty))
    ]


def diff_turn(turn: int, expected: list[str], actual: list[str]) -> TurnDiff:
    """The difference of one turn's node sequences."""
    expected_marks = [True] * len(expected)
    actual_marks = [True] * len(actual)
    matcher = SequenceMatcher(None, expected, actual, autojunk=False)
    for tag, e0, e1, a0, a1 in matcher.get_opcodes():
        if tag == "equal":
            expected_marks[e0:e1] = [False] * (e1 - e0)
            actual_marks[a0:a1] = [False] * (a1 - a0)
    first = next(
        (i for i, (e, a) in enumerate(zip_longest(expected, actual, fillvalue=None)) if e != a),
        None,
    )
    return TurnDiff(
        turn=turn,
        expected=[Step(name=n, differs=d) for n, d in zip(expected, expected_marks, strict=True)],
        actual=[Step(name=n, differs=d) for n, d in zip(actual, actual_marks, strict=True)],
        match=first is None,
        first_difference=first,
        missing=list((Counter(expected) - Counter(actual)).elements()),
        unexpected=list((Counter(actual) - Counter(expected)).elements()),
        reason=None if first is None else _reason(first, expected, actual),
    )


def _reason(position: int, expected: list[str], actual: list[str]) -> str:
    want = expected[position] if position < len(expected) else None
    got = actual[position] if position < len(actual) else None
    if got is None:
        return f"step {position + 1}: expected {want!r}, the turn stopped"
    if want is None:
        return f"step {position + 1}: unexpected extra {got!r}"
    return f"step {position + 1}: expected {want!r}, got {got!r}"


FOLD_MIN = 12
"""The narrowest a folded column is made (or its widest cell, if narrower)."""
WORD_MAX = 32
"""A word up to this long (an evaluator key, a case id) sets its folded column's width."""
_EDGE = 4  # a table's outer border and padding
_GAP = 3  # per column: a separator and the padding on each side


@dataclass(frozen=True)
class Column:
    """One column: its header, how it may be laid out, and when it goes."""

    header: str
    justify: Literal["left", "right"] = "left"
    wrap: bool = False
    """True: text that folds; False: kept whole (numbers, ids, a verdict)."""
    priority: int = 0
    """0: always shown; higher numbers are dropped first when the width is short."""


def fitted_table(
    columns: Sequence[Column],
    rows: Sequence[Sequence[Text | str]],
    width: int,
    *,
    title: Text | str | None = None,
) -> Table:
    """A table of ``rows`` under ``columns`` that fits ``width`` (see the module)."""
    cells = [[c if isinstance(c, Text) else Text(c) for c in row] for row in rows]
    needs = [_needs(column, [row[i] for row in cells]) for i, column in enumerate(columns)]
    kept = list(range(len(columns)))

    def fits(chosen: list[int]) -> bool:
        return _EDGE + sum(needs[i] + _GAP for i in chosen) <= width

    for drop in sorted(kept, key=lambda i: (-columns[i].priority, -i)):
        if fits(kept) or columns[drop].priority == 0:
            break
        kept.remove(drop)
    for back in sorted(set(range(len(columns))) - set(kept), key=lambda i: columns[i].priority):
        if fits(sorted([*kept, back])):  # a narrow column the greedy pass dropped first
            kept = sorted([*kept, back])
    dropped = [columns[i].header for i in range(len(columns)) if i not in kept]
    table = Table(title=title)
    if dropped:
        table.caption = f"not shown at {width} columns: {', '.join(dropped)}"
    for i in kept:
        column = columns[i]
        table.add_column(column.header, justify=column.justify, overflow="fold",
                         min_width=None if column.wrap else needs[i])  # fmt: skip
    for row in cells:
        table.add_row(*(row[i] for i in kept))
    return table


def _needs(column: Column, cells: list[Text]) -> int:
    """The width ``column`` cannot go below: its widest cell when it is kept whole (its
    header may wrap at spaces); for a folded column, its longest word up to
    :data:`WORD_MAX` (a key or a case id stays whole), at least :data:`FOLD_MIN`."""
    header = max(len(word) for word in column.header.split() or [""])
    if not column.wrap:
        return max([header, *(cell.cell_len for cell in cells)])
    words = [len(word) for cell in cells for word in cell.plain.split()]
    widest = max([*(cell.cell_len for cell in cells), header, 1])
    return min(widest, max([FOLD_MIN, header, *(min(w, WORD_MAX) for w in words)]))
