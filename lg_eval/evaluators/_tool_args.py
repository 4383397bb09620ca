"""How two tool calls' arguments are compared: match modes and per-tool overrides.

A rule answers "does this actual call's args satisfy that reference call's
args?", always called as ``test(actual_args, reference_args)``. Rules also say
what the matcher may assume about them, so pairing stays fast:

* ``key``: the rule is an equivalence (exact, ignore, field lists), so calls can
  be bucketed by a hash and paired without any pairwise test;
* ``preorder``: the rule is reflexive and transitive (subset, superset too), so
  calls with identical args can be paired first without losing a pairing;
* ``container``: the rule is "one side's args contain the other's items", so
  candidates can be found through an index of argument items.

A user's callable gets neither assumption.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from lg_eval.errors import InvalidOptionError

ToolArgsMatchMode = Literal["exact", "ignore", "subset", "superset"]
TOOL_ARGS_MATCH_MODES: tuple[str, ...] = ("exact", "ignore", "subset", "superset")
ArgsTest = Callable[[dict[str, Any], dict[str, Any]], bool]
ToolArgsMatchOverride = ToolArgsMatchMode | Sequence[str] | ArgsTest
ToolArgsMatchOverrides = Mapping[str, ToolArgsMatchOverride]


def freeze(value: Any) -> Hashable:
    """A hashable twin of a JSON-like value, equal exactly when the values are ``==``."""
    if isinstance(value, Mapping):
        return frozenset((key, freeze(item)) for key, item in value.items())
    if isinstance(value, list | tuple):
        return tuple(freeze(item) for item in value)
    if isinstance(value, set | frozenset):
        return frozenset(freeze(item) for item in value)
    return value


@dataclass(frozen=True)
class ArgsRule:
    """How calls of one tool compare their arguments."""

    test: ArgsTest
    label: str
    key: Callable[[dict[str, Any]], Hashable] | None = None
    preorder: bool = False
    container: Literal["actual", "reference"] | None = None  # whose args hold the other's


def _exact(actual: dict, reference: dict) -> bool:
    return actual == reference


def _ignore(actual: dict, reference: dict) -> bool:
    return True


def _subset(actual: dict, reference: dict) -> bool:
    """Every argument the actual call passed appears, equal, in the reference call."""
    return all(key in reference and reference[key] == value for key, value in actual.items())


def _superset(actual: dict, reference: dict) -> bool:
    """Every argument of the reference call appears, equal, in the actual call."""
    return _subset(reference, actual)


_MODE_RULES: dict[str, ArgsRule] = {
    "exact": ArgsRule(_exact, "exact", key=freeze, preorder=True),
    "ignore": ArgsRule(_ignore, "ignore", key=lambda args: (), preorder=True),
    "subset": ArgsRule(_subset, "subset", preorder=True, container="reference"),
    "superset": ArgsRule(_superset, "superset", preorder=True, container="actual"),
}


def field_value(args: Any, path: str) -> Any:
    """The value at a dotted path (``"filters.city"``); ``None`` when any part is missing."""
    current = args
    for part in path.split("."):
        if not isinstance(current, Mapping):
            return None
        current = current.get(part)
        if current is None:
            return None
    return current


def _fields_rule(paths: tuple[str, ...]) -> ArgsRule:
    def test(actual: dict, reference: dict) -> bool:
        return all(field_value(actual, p) == field_value(reference, p) for p in paths)

    def key(args: dict) -> Hashable:
        return tuple(freeze(field_value(args, p)) for p in paths)

    return ArgsRule(test, f"fields {', '.join(paths)}", key=key, preorder=True)


def _custom_rule(function: ArgsTest) -> ArgsRule:
    def test(actual: dict, reference: dict) -> bool:
        return bool(function(actual, reference))

    label = getattr(function, "__name__", "custom")
    return ArgsRule(test, f"custom {label}")


class ArgsMatching:
    """The argument rule for each tool: a default mode plus per-tool overrides.

    Validates everything at construction so a factory fails at creation time,
    not on the first example.
    """

    def __init__(
        self,
        mode: str = "exact",
        overrides: ToolArgsMatchOverrides | None = None,
        *,
        option: str = "tool_args_match_mode",
    ) -> None:
        self.default = _mode_rule(mode, option)
        if overrides is not None and not isinstance(overrides, Mapping):
            raise InvalidOptionError(
                "tool_args_match_overrides must be a dict of tool name -> override, "
                f"not a {type(overrides).__name__}."
            )
        self.overrides = {
            tool: _override_rule(tool, override) for tool, override in (overrides or {}).items()
        }

    def rule(self, tool: str) -> ArgsRule:
        """The rule for calls of ``tool``."""
        return self.overrides.get(tool, self.default)

    def test(self, tool: str, actual: dict[str, Any], reference: dict[str, Any]) -> bool:
        """Whether the actual args satisfy the reference args for ``tool``."""
        return self.rule(tool).test(actual, reference)


def _mode_rule(mode: Any, option: str) -> ArgsRule:
    if mode not in _MODE_RULES:
        raise InvalidOptionError(
            f"{option}={mode!r} is not allowed; use one of {', '.join(TOOL_ARGS_MATCH_MODES)}."
        )
    return _MODE_RULES[mode]


def _override_rule(tool: str, override: Any) -> ArgsRule:
    where = f"tool_args_match_overrides[{tool!r}]"
    if isinstance(override, str):
        return _mode_rule(override, where)
    if callable(override):
        return _custom_rule(override)
    if isinstance(override, list | tuple):
        paths = tuple(override)
        if paths and all(isinstance(p, str) and p and "" not in p.split(".") for p in paths):
            return _fields_rule(paths)
    raise InvalidOptionError(
        f"{where}={override!r} is not allowed; use a mode ({', '.join(TOOL_ARGS_MATCH_MODES)}), "
        "a non-empty list of field paths such as ['city', 'filters.date'], "
        "or a callable (actual_args, reference_args) -> bool."
    )


__all__ = [
    "TOOL_ARGS_MATCH_MODES",
    "ArgsMatching",
    "ArgsRule",
    "ToolArgsMatchMode",
    "ToolArgsMatchOverride",
    "ToolArgsMatchOverrides",
    "field_value",
    "freeze",
]
