"""Text from threads, made visible: what could act (control characters, escapes) shown instead.

Run content is written by strangers. Before any display (a report format, the
terminal), characters that could act instead of being read are replaced by
visible stand-ins; each display then escapes for its own syntax.
"""

from __future__ import annotations

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


_DATA_ESCAPED = _BIDI | {"\u2028", "\u2029"} | {chr(code) for code in range(0x7F, 0xA0)}


def data_escaped(text: str) -> str:
    """JSON or YAML text with DEL, C1 controls (``U+009B`` is a terminal's CSI), bidi
    controls and line separators written as ``\\uXXXX`` (JSON escapes C0 controls itself).

    The data is unchanged (a parser reads the escape back to the same character), but
    a file shown with ``cat`` cannot move the cursor, recolour, reorder or break the
    terminal's text. Only valid where such characters can appear inside double-quoted
    strings alone: JSON, and YAML whose strings holding them are double-quoted (see
    ``datasets``' dumper).
    """
    if not has_data_escaped(text):
        return text
    return "".join(f"\\u{ord(char):04x}" if char in _DATA_ESCAPED else char for char in text)


def has_data_escaped(text: str) -> bool:
    """Whether :func:`data_escaped` would change ``text``."""
    return any(char in _DATA_ESCAPED for char in text)
