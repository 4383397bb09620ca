"""Reading a YAML (or JSON) dataset file: PyYAML's *safe* loader, its cases taken one by one.

A ``!!python/...`` tag is an error naming the file and line, and nothing in the file ever
executes. PyYAML composes a document into a tree of nodes (each with its marks) before
building any value, about 1 KiB per value: a file of 20,000 small cases would be some
300 MiB of nodes at once. :class:`CasesLoader` hands each item of the document's
top-level ``cases`` list to its taker as soon as it is composed and keeps it out of the
tree, so the taker checks, builds, validates and keeps each case compactly while the
next is read; what any case anchored (``&name``) stays for later aliases, as PyYAML keeps
it. Every other part of the document is composed as PyYAML does.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import yaml

from lg_eval.datasets._bounds import YamlBounds, node_line
from lg_eval.errors import DatasetError

Lines = Any
"""A YAML node tree (to find the line of a field), or ``None`` when lines are unknown."""
_SEQUENCE = "tag:yaml.org,2002:seq"


class CaseTaker(Protocol):
    """What takes the cases of a document as they are composed."""

    def take(self, loader: CasesLoader, case: yaml.Node, index: int, cases: yaml.Node) -> None:
        """Take item ``index`` of the document's ``cases`` list (node ``cases``)."""


class CasesLoader(yaml.SafeLoader):
    """PyYAML's safe loader, but for the items of the top-level ``cases`` list, each handed
    to ``taker`` as soon as it is composed instead of being kept in the document's tree.

    A ``cases`` list with an anchor or a tag of its own is composed whole, as PyYAML would.
    ``cases_node``: the value of the document's last ``cases`` key (a mapping's last
    occurrence of a key is the one its value is built from)."""

    def __init__(self, text: str, taker: CaseTaker) -> None:
        super().__init__(text)
        self._taker = taker
        self._depth = 0
        self.cases_node: yaml.Node | None = None

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node:
        cases = self._depth == 1 and isinstance(index, yaml.ScalarNode) and index.value == "cases"
        self._depth += 1
        try:
            if cases and self._streamable():
                node: yaml.Node | None = self._compose_cases(parent, index)
            else:
                node = super().compose_node(parent, index)
        finally:
            self._depth -= 1
        if cases:
            self.cases_node = node
        return node  # type: ignore[return-value]  # PyYAML's stubs say Node | None

    def _streamable(self) -> bool:
        if not self.check_event(yaml.SequenceStartEvent):
            return False
        event = self.peek_event()  # type: ignore[no-untyped-call]
        return event.anchor is None and event.tag in (None, "!", _SEQUENCE)

    def _compose_cases(self, parent: yaml.Node | None, index: Any) -> yaml.SequenceNode:
        self.descend_resolver(parent, index)
        start = self.get_event()  # type: ignore[no-untyped-call]
        node = yaml.SequenceNode(_SEQUENCE, [], start.start_mark, None, flow_style=start.flow_style)
        position = 0
        while not self.check_event(yaml.SequenceEndEvent):
            self._taker.take(self, self.compose_node(node, position), position, node)
            position += 1
        node.end_mark = self.get_event().end_mark  # type: ignore[no-untyped-call]
        self.ascend_resolver()
        return node


def read_yaml(
    path: Path, text: str, bounds: YamlBounds, taker: CaseTaker
) -> tuple[Any, Lines, yaml.Node | None]:
    """Safe-load ``text`` within ``bounds`` (its cases handed to ``taker`` as they come): the
    data, the node tree kept so errors can name lines, and the ``cases`` node built from.

    Raises:
        DatasetError: the text is no YAML, holds a character YAML refuses, a tag, or breaks
            the bounds (and whatever ``taker`` raises).
    """
    try:
        loader = CasesLoader(text, taker)  # its reader refuses control characters at once
    except yaml.reader.ReaderError as exc:
        raise DatasetError(_control_character(path, text, exc)) from None
    try:
        node = loader.get_single_node()
        if node is not None:
            bounds.check(node)
        data = loader.construct_document(node) if node is not None else None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = f":{mark.line + 1}" if mark is not None else ""
        problem = " ".join(str(exc.problem or exc.context or "invalid YAML").split())
        if exc.problem and "could not determine a constructor for the tag" in exc.problem:
            tag = exc.problem.rsplit(" ", 1)[-1].strip("'").replace("tag:yaml.org,2002:", "!!")
            problem = (
                f"the tag {tag} is not allowed: datasets are read with yaml.safe_load, which "
                "builds only plain data (write the value without the tag)"
            )
        raise DatasetError(f"{path}{line}: invalid YAML: {problem}.") from None
    except yaml.YAMLError as exc:
        raise DatasetError(f"{path}: invalid YAML: {exc}.") from None
    except RecursionError:  # PyYAML composes recursively: nesting deeper than the stack
        raise DatasetError(
            f"{path}: mappings and lists nest too deeply to read; a dataset file is refused "
            "beyond that."
        ) from None
    finally:
        loader.dispose()
    return data, node, loader.cases_node


def _control_character(path: Path, text: str, exc: yaml.reader.ReaderError) -> str:
    """Where the character YAML's reader refused is, and what to write instead."""
    before = text[: exc.position]
    line, column = before.count("\n") + 1, exc.position - (before.rfind("\n") + 1) + 1
    return (
        f"{path}:{line}: column {column} holds the control character U+{exc.character:04X}, "
        "which a YAML file cannot hold as it is; delete it, or write it as an escape in a "
        'double-quoted string ("\\x1b", "\\u009b").'
    )


def line_at(nodes: Lines, loc: Sequence[str | int]) -> str:
    """``:<line>`` of the deepest YAML node on ``loc`` that exists, or ``""``."""
    node = nodes
    if node is None:
        return ""
    found = node
    for part in loc:
        if isinstance(part, str) and part.startswith("kind="):
            continue
        child = None
        if isinstance(node, yaml.MappingNode):
            child = next((v for k, v in node.value if getattr(k, "value", None) == part), None)
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
            child = node.value[part] if part < len(node.value) else None
        if child is None:
            break
        node = found = child
    return f":{node_line(found)}"
