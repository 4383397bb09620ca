"""Budgeted text: values as compact text, and the machinery that squeezes it to fit.

A renderer takes a :class:`Compression` (how hard to squeeze) and a
:class:`Tally` (what the squeezing dropped). :func:`fit` renders at increasing
compression (repeated loops collapsed, long values cut, the middle of long
sequences left out) until the text fits the character budget, then states what
was dropped in a note at the top of the text, so the judge knows it is reading
a summary. Everything is pure: the same input and budget give the same text.

Judge prompts fence each trajectory in tags (``<thread>``, ``<turn>``,
``<trajectory>``, ...), and what sits inside a fence was written by strangers: a
user's message, a tool result, an interrupt payload or a resume value could hold
``</thread>`` followed by instructions. So every value from a trajectory (and
every node name, id and error) is passed through :func:`escape` before it joins
the prompt: ``&``, ``<`` and ``>`` become ``&amp;``, ``&lt;`` and ``&gt;``, and no
value can open or close a tag. The fences themselves are lg_eval's own text,
carried as :class:`PromptText` so that nothing escapes them twice.
"""

from __future__ import annotations

import html
import json
from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from langchain_core.messages import BaseMessage
from langchain_core.messages.utils import convert_to_openai_messages
from pydantic import BaseModel

from lg_eval.judges._prompts import SUMMARY_NOTE

T = TypeVar("T")
MAX_PERIOD = 4  # longest repeated block of steps or messages that is collapsed
HARD_CUT = "…[cut to the budget]"


class PromptText(str):
    """Prompt text lg_eval built, fences included, with every untrusted value in it escaped;
    :func:`~lg_eval.judges._prompting.build_messages` inserts it as it is and escapes any
    other string."""

    __slots__ = ()


def escape(text: str) -> str:
    """``text`` safe inside a prompt's tags: ``&``, ``<`` and ``>`` as ``&amp;``, ``&lt;``,
    ``&gt;`` (quotes are kept: values never sit inside an attribute unescaped)."""
    return html.escape(text, quote=False)


@dataclass(frozen=True)
class Compression:
    """How much a rendering may drop: loops, long values, the middle of a thread."""

    collapse: bool = False
    value_chars: int | None = None
    keep: int | None = None  # turns kept at each end (messages: 4x as many)


FULL = Compression()
LEVELS = (
    Compression(collapse=True),
    Compression(collapse=True, value_chars=2000),
    Compression(collapse=True, value_chars=800),
    Compression(collapse=True, value_chars=300),
    Compression(collapse=True, value_chars=300, keep=8),
    Compression(collapse=True, value_chars=300, keep=4),
    Compression(collapse=True, value_chars=120, keep=2),
    Compression(collapse=True, value_chars=120, keep=1),
)


@dataclass
class Tally:
    """What a rendering dropped, for the note and the metadata."""

    loops: int = 0
    cut_values: int = 0
    value_chars: int | None = None
    omitted: list[str] = field(default_factory=list)

    def actions(self) -> list[str]:
        done = []
        if self.loops:
            done.append(f"{self.loops} repeated loop(s) shown once with a repeat count")
        if self.cut_values:
            done.append(
                f"{self.cut_values} value(s) longer than {self.value_chars} characters cut "
                "(marked '…[cut N chars]')"
            )
        done.extend(f"{what} omitted" for what in self.omitted)
        return done


@dataclass(frozen=True)
class Rendered:
    """Prompt text of one trajectory, with a record of any summarization."""

    text: str
    summary: dict[str, Any] | None = None


Renderer = Callable[[Compression, Tally], str]


def fit(render: Renderer, budget: int | None) -> Rendered:
    """Render in full if it fits ``budget`` characters, else at the first level that fits.

    ``render`` escapes every untrusted value it writes (see the module docs); the text
    comes back as :class:`PromptText`.
    """
    full = render(FULL, Tally())
    if budget is None or len(full) <= budget:
        return Rendered(PromptText(full))
    for level in LEVELS:
        tally = Tally(value_chars=level.value_chars)
        text = render(level, tally)
        note = _note(budget, len(full), tally.actions())
        if len(note) + 1 + len(text) <= budget:
            return Rendered(
                PromptText(f"{note}\n{text}"), _summary(budget, full, note, text, tally)
            )
    tally.omitted.append("the end of the text")
    note = _note(budget, len(full), tally.actions())
    text = text[: max(budget - len(note) - 1 - len(HARD_CUT), 0)] + HARD_CUT
    return Rendered(PromptText(f"{note}\n{text}"), _summary(budget, full, note, text, tally))


def _note(budget: int, original: int, actions: list[str]) -> str:
    return SUMMARY_NOTE.format(budget=budget, original=original, actions="; ".join(actions))


def _summary(budget: int, full: str, note: str, text: str, tally: Tally) -> dict[str, Any]:
    return {
        "budget": budget,
        "original_chars": len(full),
        "rendered_chars": len(note) + 1 + len(text),
        "actions": tally.actions(),
    }


# --- values -------------------------------------------------------------------------------


def cut(text: str, limit: int, tally: Tally) -> str:
    """``text`` shortened to ``limit`` characters plus a marker saying how much was cut."""
    if len(text) <= limit:
        return text
    tally.cut_values += 1
    return f"{text[:limit]}…[cut {len(text) - limit} chars]"


def cut_text(text: str, level: Compression, tally: Tally) -> str:
    """Untrusted ``text`` (an error message) cut to the level's budget, then escaped."""
    return escape(cut(text, 4 * level.value_chars, tally) if level.value_chars else text)


def render_value(value: Any, level: Compression = FULL, tally: Tally | None = None) -> str:
    """A value as compact, escaped text: strings as they are, anything else as JSON."""
    tally = tally if tally is not None else Tally()
    plain = _plain(value, level.value_chars, tally)
    if isinstance(plain, str):
        return escape(plain)
    return cut_text(json.dumps(plain, ensure_ascii=False, default=str), level, tally)


def _plain(value: Any, limit: int | None, tally: Tally) -> Any:
    """JSON-ready data, with every long string inside cut to ``limit``."""
    if isinstance(value, str):
        return cut(value, limit, tally) if limit else value
    if isinstance(value, BaseMessage):
        value = convert_to_openai_messages([value])[0]
    elif isinstance(value, BaseModel):
        value = value.model_dump(mode="json")
    if isinstance(value, dict):
        return {str(k): _plain(v, limit, tally) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v, limit, tally) for v in value]
    return value


# --- repetition and elision ---------------------------------------------------------------


def collapse_runs(
    items: Sequence[T], key: Callable[[T], Hashable | None]
) -> Iterator[tuple[int, int, int]]:
    """``(start, period, count)`` runs covering ``items``: a block repeated ``count`` times.

    Items whose key is None never repeat. Among repeats starting at the same place
    the one covering most items wins, the shorter period on a tie.
    """
    keys = [key(item) for item in items]
    i = 0
    while i < len(items):
        period, count = 1, 1
        for p in range(1, MAX_PERIOD + 1):
            block = keys[i : i + p]
            if len(block) < p or None in block:
                break
            n = 1
            while keys[i + n * p : i + (n + 1) * p] == block:
                n += 1
            if n >= 2 and p * n > period * count:
                period, count = p, n
        yield i, period, count
        i += period * count


def runs(
    items: Sequence[T], key: Callable[[T], Hashable | None], level: Compression
) -> Iterator[tuple[int, int, int]]:
    if level.collapse:
        yield from collapse_runs(items, key)
    else:
        yield from ((i, 1, 1) for i in range(len(items)))


def elide(items: Sequence[T], keep: int | None) -> tuple[Sequence[T], int, Sequence[T]]:
    """The first and last ``keep`` items and how many were left out between them."""
    if keep is None or len(items) <= 2 * keep:
        return items, 0, []
    return items[:keep], len(items) - 2 * keep, items[-keep:]


def with_elision(
    items: Sequence[T], keep: int | None, noun: str, tally: Tally, show: Callable[[int, T], str]
) -> list[str]:
    head, hidden, tail = elide(items, keep)
    blocks = [show(i, item) for i, item in enumerate(head)]
    if hidden:
        first, last = len(head) + 1, len(head) + hidden
        what = f"{noun} {first}-{last} of {len(items)}"
        tally.omitted.append(what)
        blocks.append(f"[... {what} omitted ...]")
    offset = len(items) - len(tail)
    blocks.extend(show(offset + i, item) for i, item in enumerate(tail))
    return blocks


def section(tag: str, body: str) -> str:
    """``body`` between ``<tag>`` and ``</tag>`` lines."""
    return f"<{tag}>\n{body}\n</{tag}>"
