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
from typing import Any

_KEEP = {"\n", "\t"}
_BIDI = {chr(c) for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200E, 0x200F)}
_LINE_BREAKS = {"\u2028", "\u2029", "\x85"}


def _stand_in(char: str) -> str:
    code = ord(char)
    if code < 0x20:
        return chr(0x2400 + code)  # the Control Pictures block: ESC → ␛, CR → ␍, NUL → ␀
    if code == 0x7F:
        return "\u2421"  # ␡
    return f"\\u{code:04x}"


def _hidden(char: str) -> bool:
    code = ord(char)
    return (
        (code < 0x20 and char not in _KEEP)
        or 0x7F <= code < 0xA0
        or char in _BIDI
        or char in _LINE_BREAKS
        or 0xD800 <= code < 0xE000  # lone surrogates: not encodable, not XML
        or code in (0xFFFE, 0xFFFF)
    )


def visible(text: str) -> str:
    """``text`` with every character that could act instead of being read shown visibly.

    Newlines and tabs are kept (each renderer lays them out); C0 controls become their
    Control Pictures (``\\x1b`` → ``␛``), DEL ``␡``, C1 controls, bidi overrides, Unicode
    line separators, lone surrogates and U+FFFE/U+FFFF become ``\\uXXXX`` text. The result
    is valid XML 1.0 character data and sends nothing but printable text to a terminal.
    """
    if not any(_hidden(char) for char in text):
        return text
    return "".join(_stand_in(char) if _hidden(char) else char for char in text)


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


def money(value: float | None) -> str:
    """A cost in dollars: ``$0.0123``; ``None`` → ``–``."""
    return "–" if value is None else f"${value:.4f}"


__all__ = ["money", "number", "percent", "seconds", "shorten", "signed", "value_text", "visible"]
