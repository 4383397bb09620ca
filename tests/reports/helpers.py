"""Small parsers the report tests share."""

from __future__ import annotations

import re

_UNESCAPED_PIPE = re.compile(r"(?<!\\)\|")


def markdown_tables(text: str) -> list[list[list[str]]]:
    """Every GFM table of ``text`` as rows of cells (header and delimiter rows included)."""
    tables: list[list[list[str]]] = []
    current: list[list[str]] = []
    for line in text.split("\n"):
        if line.startswith("|"):
            current.append([cell.strip() for cell in _UNESCAPED_PIPE.split(line)[1:-1]])
        elif current:
            tables.append(current)
            current = []
    if current:
        tables.append(current)
    return tables


# --------------------------------------------------------------------------- a small HTML tree

VOID = {"meta", "br", "img", "input", "link", "hr", "col", "area", "base", "source", "wbr"}
SVG_EMPTY = {"line", "rect", "circle", "polyline", "path"}


class Node:
    """An element: tag, attributes, children (Nodes and strings)."""

    def __init__(self, tag: str, attrs: dict[str, str | None]) -> None:
        self.tag, self.attrs = tag, attrs
        self.children: list[Node | str] = []

    @property
    def classes(self) -> set[str]:
        return set((self.attrs.get("class") or "").split())

    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def iter(self) -> list[Node]:
        found = [self]
        for child in self.children:
            if isinstance(child, Node):
                found += child.iter()
        return found

    def find_all(self, tag: str | None = None, cls: str | None = None, **attrs: str) -> list[Node]:
        return [
            n
            for n in self.iter()
            if (tag is None or n.tag == tag)
            and (cls is None or cls in n.classes)
            and all(n.attrs.get(k.replace("_", "-")) == v for k, v in attrs.items())
        ]

    def find(self, tag: str | None = None, cls: str | None = None, **attrs: str) -> Node:
        (found,) = self.find_all(tag, cls, **attrs)[:1] or [None]
        assert found is not None, (tag, cls, attrs)
        return found


def parse_html(text: str) -> Node:
    """The element tree of ``text`` (the stdlib parser, tolerant like a browser's tokenizer)."""
    from html.parser import HTMLParser

    root = Node("#document", {})
    stack = [root]

    class Builder(HTMLParser):
        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            node = Node(tag, dict(attrs))
            stack[-1].children.append(node)
            if tag not in VOID:
                stack.append(node)

        def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            stack[-1].children.append(Node(tag, dict(attrs)))

        def handle_endtag(self, tag: str) -> None:
            for depth in range(len(stack) - 1, 0, -1):
                if stack[depth].tag == tag:
                    del stack[depth:]
                    return

        def handle_data(self, data: str) -> None:
            stack[-1].children.append(data)

    builder = Builder(convert_charrefs=True)
    builder.feed(text)
    builder.close()
    return root
