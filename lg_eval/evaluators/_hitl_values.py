"""How the HITL evaluator compares one question or answer with its expectation.

Values are compared field by field under a mode (``exact``, ``subset``,
``contains``, ``ignore``) or a user's rule per dotted field path; dropped
fields (ids, timestamps) are removed from both sides first.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

FieldMode = Literal["exact", "subset", "contains", "ignore"]
FieldRule = FieldMode | Callable[[Any, Any], bool]
"""How one answer field is compared: a mode, or ``rule(actual, expected) -> bool``."""

SHOWN = 160  # longest payload repr a comment shows in full


def field_tree(paths: list[str]) -> dict[str, Any]:
    """Dotted paths as nested dicts; ``None`` marks a dropped field."""
    tree: dict[str, Any] = {}
    for path in sorted(paths, key=lambda p: p.count(".")):  # a dropped parent wins
        node: dict[str, Any] | None = tree
        *parents, last = path.split(".")
        for part in parents:
            node = node.setdefault(part, {}) if node is not None else None
        if node is not None:
            node[last] = None
    return tree


def drop(value: Any, tree: Mapping[str, Any]) -> Any:
    """``value`` without the fields ``tree`` names (list items share their list's path)."""
    if not tree:
        return value
    if isinstance(value, Mapping):
        return {
            key: item if key not in tree else drop(item, tree[key])
            for key, item in value.items()
            if not (key in tree and tree[key] is None)
        }
    if isinstance(value, list | tuple):
        return [drop(item, tree) for item in value]
    return value


@dataclass(frozen=True)
class Mismatch:
    """Where a value fails its expectation: ``where`` is the field path comments name
    (with list positions, ``""`` for the whole value)."""

    where: str
    problem: Literal["differs", "missing", "unexpected", "length", "rule"]
    detail: str = ""

    def note(self) -> str:
        """`` (field 'amount')``-style note for a comment; ``""`` for the whole value."""
        field = f"field {self.where!r}"
        if self.problem == "missing":
            return f" ({field} missing)"
        if self.problem == "unexpected":
            return f" (unexpected {field})"
        if self.problem == "length":
            return f" ({field}: {self.detail})" if self.where else f" ({self.detail})"
        if self.problem == "rule":
            return f" ({field} failed its rule)" if self.where else " (failed its rule)"
        return f" ({field})" if self.where else ""


def difference(actual: Any, expected: Any, mode: str, rules: Mapping[str, FieldRule]) -> str | None:
    """The note on where ``actual`` fails ``expected`` (see :meth:`Mismatch.note`), or
    ``None`` when it matches."""
    found = compare(actual, expected, mode, rules, (), "")
    return None if found is None else found.note()


def compare(
    actual: Any,
    expected: Any,
    mode: str,
    rules: Mapping[str, FieldRule],
    path: tuple[str, ...],
    shown: str,
) -> Mismatch | None:
    """The first place ``actual`` fails ``expected`` under ``mode``, or ``None``.

    ``path`` is the rule path (dict keys only: list items share their list's
    path), ``shown`` the path comments name (with list positions).
    """
    rule = rules.get(".".join(path)) if path else None
    if callable(rule):
        return None if rule(actual, expected) else Mismatch(shown, "rule")
    mode = rule or mode
    if mode == "ignore":
        return None
    if isinstance(actual, Mapping) and isinstance(expected, Mapping):
        return compare_fields(actual, expected, mode, rules, path, shown)
    if isinstance(actual, list | tuple) and isinstance(expected, list | tuple):
        if len(actual) != len(expected):
            return Mismatch(shown, "length", f"{len(actual)} items, expected {len(expected)}")
        for n, (got, want) in enumerate(zip(actual, expected, strict=True)):
            found = compare(got, want, mode, rules, path, f"{shown}[{n}]")
            if found is not None:
                return found
        return None
    if mode == "contains" and isinstance(actual, str) and isinstance(expected, str):
        matched = expected in actual
    else:
        matched = equal(actual, expected)
    return None if matched else Mismatch(shown, "differs")


def compare_fields(
    actual: Mapping[Any, Any],
    expected: Mapping[Any, Any],
    mode: str,
    rules: Mapping[str, FieldRule],
    path: tuple[str, ...],
    shown: str,
) -> Mismatch | None:
    """Expected fields must be present and match; ``exact`` also forbids extra ones. A
    field whose rule is ``ignore`` may be absent or extra."""
    for key, want in expected.items():
        sub = (*path, str(key))
        if key not in actual:
            if rules.get(".".join(sub)) != "ignore":
                return Mismatch(join(shown, key), "missing")
            continue
        found = compare(actual[key], want, mode, rules, sub, join(shown, key))
        if found is not None:
            return found
    if mode == "exact":
        for key in actual:
            if key not in expected and rules.get(".".join((*path, str(key)))) != "ignore":
                return Mismatch(join(shown, key), "unexpected")
    return None


def equal(actual: Any, expected: Any) -> bool:
    """``==``, except that a bool never equals a number (``True`` is not ``1`` here)."""
    if isinstance(actual, bool) != isinstance(expected, bool):
        return False
    return bool(actual == expected)


def join(shown: str, key: Any) -> str:
    return f"{shown}.{key}" if shown else str(key)


def show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= SHOWN else f"{text[: SHOWN - 3]}..."
