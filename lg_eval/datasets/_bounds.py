"""The bounds a dataset keeps before anything is built from it.

A dataset is data, but a hostile one can still hurt: ten levels of nine-fold YAML aliases
are a few hundred bytes that expand to billions of nodes, and three levels of a hundred
aliases over one 64 KiB string stay under a million values but stand for 58 GB of text
(``dataset_hash`` would serialise every byte). Deep nesting exhausts Python's stack, and a
lone surrogate (``"\\ud800"``) is a string no encoder accepts. These checks run on YAML's
node tree *before* it is constructed (:class:`YamlBounds`: each alias counted as what it
expands to, in linear time over the distinct nodes), on each JSONL row after
``json.loads`` and on data handed to ``dataset_from_dict`` (:func:`check_data`), so
``dataset validate`` and ``run`` refuse the same files, in bounded memory, with a
:class:`~lg_eval.errors.DatasetError` naming the line.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import yaml

from lg_eval.errors import DatasetError

MAX_NODES = 1_000_000
"""Values a dataset may hold once every YAML alias is expanded (mappings, lists, scalars)."""
MAX_BYTES = 64 * 2**20
"""UTF-8 bytes of text (keys and values) a dataset may hold once every YAML alias is
expanded: 64 MiB, far beyond any golden dataset, far below what would exhaust memory."""
MAX_DEPTH = 100
"""How deeply mappings and lists may nest."""
_SURROGATE = re.compile("[\ud800-\udfff]")


class YamlBounds:
    """The bounds checked on a composed YAML document, part by part if need be: each distinct
    node is walked once, an alias counted as what it stands for.

    What was learnt of a node is kept while the node can be reached again (the anchors'
    nodes, and what they hold): a document whose cases are checked one by one as they are
    composed, each then dropped, costs what one check of the whole would, and a case can
    alias what an earlier one anchored."""

    def __init__(self, where: str) -> None:
        self.where = where
        self._sizes: dict[int, int] = {}  # expanded size of each distinct node
        self._weights: dict[int, int] = {}  # expanded bytes of text of each distinct node
        self._heights: dict[int, int] = {}  # levels of nesting from each distinct node down
        self._fresh: list[int] = []  # nodes learnt since the last forget()
        self._kept: set[int] = set()  # anchored nodes and what they hold: alive to the end

    def check(self, root: yaml.Node, depth: int = 1) -> tuple[int, int, int]:
        """Refuse ``root`` (nested ``depth`` deep in its document) if it is too big expanded,
        too deep, recursive, or holds a string that is not valid Unicode; return its
        expanded size, bytes of text and height."""
        where, sizes, weights, heights = self.where, self._sizes, self._weights, self._heights
        open_: set[int] = set()  # nodes on the current path: reaching one again is a cycle
        stack: list[tuple[yaml.Node, int, bool]] = [(root, depth, False)]
        while stack:
            node, depth, done = stack.pop()
            key = id(node)
            if done:
                open_.discard(key)
                children = _children(node)
                sizes[key] = 1 + sum(sizes[id(child)] for child in children)
                weights[key] = sum(weights[id(child)] for child in children)
                heights[key] = 1 + max((heights[id(child)] for child in children), default=0)
                self._fresh.append(key)
                check_size(
                    f"{where}:{node_line(node)}", sizes[key], weights[key], "aliases (*name)"
                )
                continue
            if key in sizes:  # seen before (an alias): as deep below here as it was there
                if depth + heights[key] - 1 > MAX_DEPTH:
                    raise _too_deep(where, node)
                continue
            if key in open_:
                raise DatasetError(
                    f"{where}:{node_line(node)}: an alias refers to a value that contains it (a "
                    "recursive structure); datasets hold plain, finite data."
                )
            if depth > MAX_DEPTH:
                raise _too_deep(where, node)
            if isinstance(node, yaml.ScalarNode):
                node.value = _check_text(where, node.value, node_line(node))
                sizes[key] = heights[key] = 1
                weights[key] = _bytes(node.value)
                self._fresh.append(key)
                continue
            open_.add(key)
            stack.append((node, depth, True))
            stack.extend((child, depth + 1, False) for child in _children(node))
        key = id(root)
        return sizes[key], weights[key], heights[key]

    def checked(self, node: yaml.Node, size: int, weight: int, height: int) -> None:
        """Take ``node`` as checked, with what it expands to (a list whose items were
        checked one by one and dropped)."""
        key = id(node)
        self._sizes[key], self._weights[key], self._heights[key] = size, weight, height
        self._kept.add(key)

    def forget(self, anchors: Iterable[yaml.Node]) -> None:
        """Forget the nodes learnt since the last call but those ``anchors`` hold (the
        anchors defined so far): the others are gone, and a new node may get one's id."""
        stack = [node for node in anchors if id(node) not in self._kept]
        while stack:
            node = stack.pop()
            if id(node) not in self._kept:
                self._kept.add(id(node))
                stack.extend(_children(node))
        for key in self._fresh:
            if key not in self._kept:
                del self._sizes[key], self._weights[key], self._heights[key]
        self._fresh = []


def check_size(where: str, nodes: int, weight: int, expanded: str) -> None:
    """Refuse a document of more than :data:`MAX_NODES` values or :data:`MAX_BYTES` of text
    (``expanded``: what was counted as what it stands for)."""
    whole = "a dataset file" if expanded.startswith("aliases") else "a dataset"
    if nodes > MAX_NODES:
        raise DatasetError(
            f"{where}: the document expands to more than {MAX_NODES:,} values once its "
            f"{expanded} are expanded; {whole} is refused beyond that (an alias bomb looks "
            "like this)."
        )
    if weight > MAX_BYTES:
        raise DatasetError(
            f"{where}: the document expands to more than {MAX_BYTES // 2**20} MiB of text "
            f"once its {expanded} are expanded; {whole} is refused beyond that (an alias "
            "bomb looks like this)."
        )


def _bytes(text: str) -> int:
    """UTF-8 bytes of ``text`` (its length when it is ASCII, without encoding it)."""
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def _too_deep(where: str, node: yaml.Node) -> DatasetError:
    return DatasetError(
        f"{where}:{node_line(node)}: mappings and lists nest more than {MAX_DEPTH} deep; a "
        "dataset file is refused beyond that."
    )


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def node_line(node: yaml.Node) -> int:
    """The line a node starts on (1-based)."""
    return int(node.start_mark.line) + 1


def check_data(where: str, data: Any) -> None:
    """Refuse parsed data that expands to more than :data:`MAX_NODES` values or
    :data:`MAX_BYTES` of text, nests more than :data:`MAX_DEPTH` deep or holds a string
    that is not valid Unicode. Data handed in from Python may share one object in many
    places (a YAML document loaded elsewhere does): each place counts, and the walk
    stops as soon as a bound is passed, so it takes at most :data:`MAX_NODES` steps."""
    stack: list[tuple[Any, int]] = [(data, 1)]
    nodes = weight = 0
    while stack:
        value, depth = stack.pop()
        nodes += 1
        if isinstance(value, str):
            _check_text(where, value, None)
            weight += _bytes(value)
            check_size(where, nodes, weight, "shared values")
            continue
        check_size(where, nodes, weight, "shared values")
        if not isinstance(value, dict | list):
            continue
        if depth > MAX_DEPTH:
            raise DatasetError(
                f"{where}: objects and arrays nest more than {MAX_DEPTH} deep; a dataset is "
                "refused beyond that."
            )
        items = [*value.keys(), *value.values()] if isinstance(value, dict) else value
        stack.extend((item, depth + 1) for item in items)


def _check_text(where: str, text: str, line: int | None) -> str:
    """``text`` with escaped surrogate pairs joined (YAML reads ``"\\ud83d\\ude00"`` as two
    halves; JSON as one character); a lone half is a DatasetError."""
    if _SURROGATE.search(text) is None:
        return text
    at = f":{line}" if line is not None else ""
    try:
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le")
    except UnicodeDecodeError:
        pass
    lone = next(
        i
        for i, char in enumerate(text)
        if _SURROGATE.match(char)
        and not (
            "\ud800" <= char <= "\udbff"
            and i + 1 < len(text)
            and "\udc00" <= text[i + 1] <= "\udfff"
        )
        and not ("\udc00" <= char <= "\udfff" and i > 0 and "\ud800" <= text[i - 1] <= "\udbff")
    )
    raise DatasetError(
        f"{where}{at}: the string {text[:lone][-20:]!r}… holds a lone surrogate "
        f"(U+{ord(text[lone]):04X}), which is not valid Unicode text; write the character "
        "itself (in YAML, \\U0001F600 escapes a character beyond U+FFFF)."
    )
