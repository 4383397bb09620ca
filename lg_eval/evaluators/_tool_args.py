"""How two tool calls' arguments are compared: the rules behind each match mode and override.

A rule answers "does this actual call's args satisfy that expected call's
args?", always called as ``test(actual_args, expected_args)``. Rules also say
what the matcher may assume about them, so pairing stays fast:

* ``key``: the rule is an equivalence (exact, ignore, field lists), so calls can
  be bucketed by a hash and paired without any pairwise test (a field list whose
  paths are required fits nothing for args lacking one: those get a key of their
  own, equal to no other);
* ``preorder``: the rule is reflexive and transitive (subset, superset too), so
  calls with identical args can be paired first without losing a pairing;
* ``container``: the rule is "one side's args contain the other's items", so
  candidates can be found through an index of argument items.

A user's callable gets neither assumption. The policy that picks a rule per
tool lives in :mod:`lg_eval.evaluators._tool_calls`.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast, get_args

from lg_eval.errors import InvalidOptionError

Args = dict[str, Any]
ToolArgsMatchMode = Literal["exact", "ignore", "subset", "superset"]
TOOL_ARGS_MATCH_MODES: tuple[ToolArgsMatchMode, ...] = get_args(ToolArgsMatchMode)
ArgsTest = Callable[[Args, Args], bool]
ToolArgsMatchOverride = ToolArgsMatchMode | Sequence[str] | ArgsTest
ToolArgsMatchOverrides = Mapping[str, ToolArgsMatchOverride]
RuleKind = Literal["exact", "ignore", "subset", "superset", "fields", "custom"]


def freeze(value: Any) -> Hashable:
    """A hashable twin of a JSON-like value, equal exactly when the values are ``==``."""
    if isinstance(value, Mapping):
        return frozenset((key, freeze(item)) for key, item in value.items())
    if isinstance(value, list | tuple):
        return tuple(freeze(item) for item in value)
    if isinstance(value, set | frozenset):
        return frozenset(freeze(item) for item in value)
    return cast(Hashable, value)


@dataclass(frozen=True)
class ArgsRule:
    """How calls of one tool compare their arguments.

    ``kind`` names the rule (a mode, ``fields`` or ``custom``); ``paths`` are the
    dotted field paths a ``fields`` rule compares.
    """

    test: ArgsTest
    label: str
    kind: RuleKind
    key: Callable[[Args], Hashable] | None = None
    preorder: bool = False
    container: Literal["actual", "reference"] | None = None  # whose args hold the other's
    paths: tuple[str, ...] = ()


def _exact(actual: Args, expected: Args) -> bool:
    return actual == expected


def _ignore(actual: Args, expected: Args) -> bool:
    return True


def _no_key(args: Args) -> Hashable:
    return ()


def _subset(actual: Args, expected: Args) -> bool:
    """Every argument the actual call passed appears, equal, in the expected call."""
    return all(key in expected and expected[key] == value for key, value in actual.items())


def _superset(actual: Args, expected: Args) -> bool:
    """Every argument of the expected call appears, equal, in the actual call."""
    return _subset(expected, actual)


_MODE_RULES: dict[str, ArgsRule] = {
    "exact": ArgsRule(_exact, "exact", "exact", key=freeze, preorder=True),
    "ignore": ArgsRule(_ignore, "ignore", "ignore", key=_no_key, preorder=True),
    "subset": ArgsRule(_subset, "subset", "subset", preorder=True, container="reference"),
    "superset": ArgsRule(_superset, "superset", "superset", preorder=True, container="actual"),
}


def field_value(args: object, path: str, missing: Any = None) -> Any:
    """The value at a dotted path (``"filters.city"``); ``missing`` when any part is missing."""
    current: Any = args
    for part in path.split("."):
        if not isinstance(current, Mapping) or part not in current:
            return missing
        current = current[part]
    return current


_ABSENT = object()


def _fields_rule(paths: tuple[str, ...], required: bool) -> ArgsRule:
    """Equal values at ``paths``. A path a call lacks reads as ``None``, or, when
    ``required``, fails the match on either side (openevals' rule since 0.2.1)."""
    absent = _ABSENT if required else None

    def values(args: Args) -> tuple[Any, ...] | None:
        found = tuple(field_value(args, p, absent) for p in paths)
        return None if any(value is _ABSENT for value in found) else found

    def test(actual: Args, expected: Args) -> bool:
        got = values(actual)
        return got is not None and got == values(expected)

    def key(args: Args) -> Hashable:
        found = values(args)
        return object() if found is None else freeze(found)

    label = f"fields {', '.join(paths)}" + (" (required)" if required else "")
    return ArgsRule(test, label, "fields", key=key, preorder=not required, paths=paths)


def _custom_rule(function: Callable[[Args, Args], object]) -> ArgsRule:
    def test(actual: Args, expected: Args) -> bool:
        return bool(function(actual, expected))

    label = getattr(function, "__name__", "custom")
    return ArgsRule(test, f"custom {label}", "custom")


def mode_rule(mode: object, option: str) -> ArgsRule:
    """The rule of an argument match mode; ``option`` names the setting in the error."""
    rule = _MODE_RULES.get(mode) if isinstance(mode, str) else None
    if rule is None:
        raise InvalidOptionError(
            f"{option}={mode!r} is not allowed; use one of {', '.join(TOOL_ARGS_MATCH_MODES)}."
        )
    return rule


def override_rule(where: str, override: object, *, required_fields: bool = False) -> ArgsRule:
    """The rule of one per-tool override: a mode, a list of field paths, or a callable.

    ``required_fields``: a field path missing from either call's args fails the match
    (by default it reads as ``None``).
    """
    if isinstance(override, str):
        return mode_rule(override, where)
    if callable(override):
        return _custom_rule(override)
    if isinstance(override, list | tuple):
        paths = tuple(override)
        if paths and all(isinstance(p, str) and p and "" not in p.split(".") for p in paths):
            return _fields_rule(paths, required_fields)
    raise InvalidOptionError(
        f"{where}={override!r} is not allowed; use a mode ({', '.join(TOOL_ARGS_MATCH_MODES)}), "
        "a non-empty list of field paths such as ['city', 'filters.date'], "
        "or a callable (actual_args, reference_args) -> bool."
    )
