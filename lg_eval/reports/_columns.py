"""Terminal tables that fit a width: 80 columns, a CI log, a wide terminal alike.

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

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from rich.table import Table
from rich.text import Text

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
