"""The tool-call pairing core: one mode vocabulary, one argument policy, one pairing.

Every tool-call evaluator is a configuration of this module:

* the trajectory match and the tool sequence check score a :class:`CallPairing`
  made in one of the :data:`CALL_MATCH_MODES` under an :class:`ArgsPolicy`;
* tool selection pairs the distinct tool names (:data:`NAMES_ONLY`,
  ``unordered``), tool order is the ``in_order`` pairing of names, and
  argument precision grades the arguments an :class:`ArgsPolicy` compares
  between calls of one tool (:func:`same_tool_groups`).

Modes (``actual`` is what the agent did, ``expected`` the reference):

* ``strict``: exactly the expected calls, in the same order;
* ``in_order``: the expected calls in this order, other calls anywhere between;
* ``unordered``: exactly the expected calls, in any order;
* ``subset``: every actual call pairs with a distinct expected call;
* ``superset``: every expected call pairs with a distinct actual call.

Two calls *fit* when they name the same tool and the policy accepts the actual
args for the expected args (an expected call without args, :data:`WILDCARD`,
accepts any). Each call pairs at most once, and the pairing is a maximum
matching (:mod:`lg_eval.evaluators._matching`), so a pairing is found whenever
one exists.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any, Literal, cast, get_args

from rapidfuzz.distance import LCSseq
from typing_extensions import TypeIs

from lg_eval._feedback import Feedback
from lg_eval._inputs import (
    WILDCARD,
    CallsCounted,
    CountedCalls,
    describe_call,
    describe_list,
    expected_calls_arg,
)
from lg_eval.errors import InvalidOptionError, TrajectoryFormatError
from lg_eval.evaluators._matching import pair_args
from lg_eval.evaluators._tool_args import (
    Args,
    ArgsRule,
    ToolArgsMatchOverrides,
    field_value,
    mode_rule,
    override_rule,
)

Call = Mapping[str, Any]
"""A tool call: ``{"name": str, "args": dict | WILDCARD, ...}``."""
Pair = tuple[int, int]
"""``(actual index, expected index)``."""

CallMatchMode = Literal["strict", "in_order", "unordered", "subset", "superset"]
CALL_MATCH_MODES: tuple[CallMatchMode, ...] = get_args(CallMatchMode)


def is_wildcard(args: Args | None) -> TypeIs[None]:
    """Whether an expected call's args are :data:`WILDCARD` (any arguments are accepted)."""
    return args is WILDCARD


def check_mode(
    mode: object, option: str, allowed: Sequence[CallMatchMode] = CALL_MATCH_MODES
) -> CallMatchMode:
    """``mode`` if it is one of ``allowed``; else an error naming ``option`` and the modes."""
    if not isinstance(mode, str) or mode not in allowed:
        raise InvalidOptionError(
            f"{option}={mode!r} is not allowed; use one of {', '.join(allowed)}."
        )
    return cast(CallMatchMode, mode)


# --------------------------------------------------------------------------- argument policy


class ArgsPolicy:
    """How an actual call's arguments must relate to an expected call's, tool by tool.

    ``mode`` is ``exact``, ``ignore``, ``subset`` (the actual args are a subset of
    the expected ones) or ``superset``; ``overrides`` maps a tool name to a mode,
    a non-empty list of dotted field paths that must be equal, or a callable
    ``(actual_args, expected_args) -> bool``; overrides win. A field path a call
    lacks reads as ``None``, or with ``required_fields`` fails the match. An
    expected call whose args are :data:`WILDCARD` accepts any arguments.
    Everything is validated here, so a factory fails when it is created;
    ``option`` and ``overrides_option`` name the settings in error messages.
    """

    def __init__(
        self,
        mode: object = "exact",
        overrides: ToolArgsMatchOverrides | None = None,
        *,
        option: str = "tool_args_match_mode",
        overrides_option: str = "tool_args_match_overrides",
        required_fields: bool = False,
    ) -> None:
        self.default = mode_rule(mode, option)
        if overrides is not None and not isinstance(overrides, Mapping):
            raise InvalidOptionError(
                f"{overrides_option} must be a dict of tool name -> override, "
                f"not a {type(overrides).__name__}."
            )
        self.overrides: dict[str, ArgsRule] = {
            tool: override_rule(
                f"{overrides_option}[{tool!r}]", override, required_fields=required_fields
            )
            for tool, override in (overrides or {}).items()
        }

    def rule(self, tool: str) -> ArgsRule:
        """The rule for calls of ``tool``."""
        return self.overrides.get(tool, self.default)

    def test(self, tool: str, actual: Args, expected: Args | None) -> bool:
        """Whether the actual args satisfy the expected args for ``tool``."""
        return is_wildcard(expected) or self.rule(tool).test(actual, expected)

    def fits(self, actual: Call, expected: Call) -> bool:
        """Whether the actual call can pair with the expected one."""
        name = expected["name"]
        return actual["name"] == name and self.test(name, actual["args"], expected.get("args"))

    def compared_values(
        self, tool: str, actual: Args, expected: Args | None
    ) -> dict[str, tuple[Any, Any]]:
        """The argument values this policy compares for a pair of calls: name -> (actual, expected).

        ``superset``: the expected call's arguments; ``subset``: the actual call's;
        ``exact``: both calls'; a field list: its dotted paths (but a path neither
        call has); ``ignore``, a callable (a yes/no test) and a wildcard: none.
        A value a call lacks is ``None``.
        """
        if is_wildcard(expected):
            return {}
        rule = self.rule(tool)
        if rule.kind == "fields":
            values = {
                path: (field_value(actual, path), field_value(expected, path))
                for path in rule.paths
            }
            return {path: pair for path, pair in values.items() if pair != (None, None)}
        names = {"superset": expected, "subset": actual, "exact": {**expected, **actual}}
        return {name: (actual.get(name), expected.get(name)) for name in names.get(rule.kind, {})}

    def class_key(self, call: Call) -> Hashable | None:
        """A hashable equal for calls that fit each other, or ``None``.

        ``None`` when the call's rule is no equivalence (``subset``, ``superset``,
        a callable), or for a wildcard call unless its tool's args are ignored.
        """
        name = call["name"]
        rule = self.rule(name)
        if rule.key is None:
            return None
        args: Args | None = call.get("args")
        if is_wildcard(args):
            return (name, ()) if rule.kind == "ignore" else None
        return (name, rule.key(args))


NAMES_ONLY = ArgsPolicy("ignore")
"""The policy under which calls of the same tool always fit: tool names only."""
EXACT = ArgsPolicy("exact")
"""The policy under which calls fit when their arguments are equal."""


# --------------------------------------------------------------------------- pairing


@dataclass(frozen=True)
class OrderVerdict:
    """Where the order of calls broke, in ``strict`` and ``in_order`` modes.

    ``position`` is ``None`` when the order holds. In ``strict`` mode it is the
    first position where the actual call does not fit the expected one (or one
    list ends); in ``in_order`` mode, the first expected call left out of the
    longest in-order pairing, ``made_later`` telling whether a call fitting it
    was made after the calls paired with the expected calls before it.
    ``out_of_order`` (``in_order``) lists the expected calls left out of the
    in-order pairing that were made elsewhere (the rest are ``missing``).
    """

    position: int | None = None
    out_of_order: tuple[int, ...] = ()
    made_later: bool = False

    @property
    def holds(self) -> bool:
        """Whether the calls are in the required order."""
        return self.position is None


@dataclass(frozen=True)
class CallPairing:
    """Actual calls paired with expected calls in one mode.

    ``pairs`` are ``(actual index, expected index)``, sorted by expected index:
    a maximum matching, or in ``in_order`` mode the longest in-order pairing.
    ``missing`` are expected calls and ``unexpected`` actual calls left unpaired
    (in ``in_order`` mode, ``missing`` leaves out the calls that are only out of
    order, see :class:`OrderVerdict`). ``order`` is set in ``strict`` and
    ``in_order`` modes.
    """

    mode: CallMatchMode
    pairs: tuple[Pair, ...]
    missing: tuple[int, ...]
    unexpected: tuple[int, ...]
    order: OrderVerdict | None = field(default=None)

    @property
    def blocking_missing(self) -> tuple[int, ...]:
        """The missing calls that fail this mode."""
        return self.missing if self.mode != "subset" else ()

    @property
    def blocking_unexpected(self) -> tuple[int, ...]:
        """The unexpected calls that fail this mode."""
        return self.unexpected if self.mode in ("strict", "unordered", "subset") else ()

    @property
    def passed(self) -> bool:
        """Whether the actual calls satisfy the expected ones in this mode."""
        if self.order is not None:
            return self.order.holds
        return not self.blocking_missing and not self.blocking_unexpected


def pair_tool_calls(
    actual: Sequence[Call],
    expected: Sequence[Call],
    *,
    mode: CallMatchMode,
    policy: ArgsPolicy,
) -> CallPairing:
    """Pair ``actual`` calls with ``expected`` ones under ``policy``, judged in ``mode``."""
    if mode == "in_order":
        return _in_order(actual, expected, policy)
    pairs = max_pairs(actual, expected, policy)
    missing, unexpected = _unpaired(pairs, len(actual), len(expected))
    order = OrderVerdict(_first_difference(actual, expected, policy)) if mode == "strict" else None
    return CallPairing(mode, tuple(pairs), missing, unexpected, order)


def same_tool_groups(
    actual: Sequence[Call], expected: Sequence[Call]
) -> dict[str, tuple[list[int], list[int]]]:
    """For each tool named on both sides: the positions of its actual and expected calls."""
    groups: dict[str, tuple[list[int], list[int]]] = defaultdict(lambda: ([], []))
    for i, call in enumerate(actual):
        groups[call["name"]][0].append(i)
    for j, call in enumerate(expected):
        groups[call["name"]][1].append(j)
    return {name: group for name, group in groups.items() if group[0] and group[1]}


def max_pairs(actual: Sequence[Call], expected: Sequence[Call], policy: ArgsPolicy) -> list[Pair]:
    """A largest set of fitting pairs, each call used at most once, sorted by expected index.

    Calls are paired tool by tool; expected calls with arguments first (with the
    rule's shortcuts), then wildcard expected calls take the actual calls left,
    which never loses a pair since a wildcard fits every call of its tool.
    """
    pairs: list[Pair] = []
    for name, (lefts, rights) in same_tool_groups(actual, expected).items():
        given = [j for j in rights if not is_wildcard(expected[j].get("args"))]
        local = pair_args(
            [actual[i]["args"] for i in lefts],
            [expected[j]["args"] for j in given],
            policy.rule(name),
        )
        pairs.extend((lefts[u], given[v]) for u, v in local)
        if len(given) < len(rights):
            taken = {lefts[u] for u, _ in local}
            free = [i for i in lefts if i not in taken]
            wildcards = [j for j in rights if is_wildcard(expected[j].get("args"))]
            pairs.extend(zip(free, wildcards, strict=False))
    return sorted(pairs, key=itemgetter(1))


def order_pairs(actual: Sequence[Call], expected: Sequence[Call], policy: ArgsPolicy) -> list[Pair]:
    """A longest in-order pairing: a longest common subsequence of fitting calls.

    Under equivalence rules the calls are reduced to class ids and the
    subsequence found by ``rapidfuzz``; otherwise by dynamic programming, which
    prefers pairing earlier expected calls.
    """
    ids = _class_ids(actual, expected, policy)
    if ids is not None:
        actual_ids, expected_ids = ids
        blocks = LCSseq.editops(expected_ids, actual_ids).as_matching_blocks()
        return [(block.b + k, block.a + k) for block in blocks for k in range(block.size)]
    return _longest_common_pairs(actual, expected, policy)


def _class_ids(
    actual: Sequence[Call], expected: Sequence[Call], policy: ArgsPolicy
) -> tuple[list[int], list[int]] | None:
    """Calls as integers equal exactly when they fit, or ``None`` when a rule is no equivalence.

    Integers, not the hashables themselves: ``rapidfuzz`` compares other objects
    by hash, and ``hash(-1) == hash(-2)``.
    """
    tools = {call["name"] for call in expected}
    numbers: dict[Hashable, int] = {}
    sides: list[list[int]] = []
    for calls in (actual, expected):
        side = []
        for call in calls:  # a call of a tool nobody expects fits nothing: any key will do
            key = policy.class_key(call) if call["name"] in tools else (call["name"],)
            if key is None:
                return None
            side.append(numbers.setdefault(key, len(numbers)))
        sides.append(side)
    return sides[0], sides[1]


def _longest_common_pairs(
    actual: Sequence[Call], expected: Sequence[Call], policy: ArgsPolicy
) -> list[Pair]:
    fitting: list[set[int]] = [set() for _ in expected]
    for name, (lefts, rights) in same_tool_groups(actual, expected).items():
        for j in rights:
            wanted = expected[j].get("args")
            fitting[j].update(i for i in lefts if policy.test(name, actual[i]["args"], wanted))
    n, m = len(expected), len(actual)
    length = [[0] * (m + 1) for _ in range(n + 1)]  # length[j][i]: expected[j:] vs actual[i:]
    for j in range(n - 1, -1, -1):
        row, below, fits = length[j], length[j + 1], fitting[j]
        for i in range(m - 1, -1, -1):
            row[i] = below[i + 1] + 1 if i in fits else max(row[i + 1], below[i])
    pairs: list[Pair] = []
    i = j = 0
    while i < m and j < n:
        if i in fitting[j]:  # pairing a fitting call first never shortens the subsequence
            pairs.append((i, j))
            i, j = i + 1, j + 1
        elif length[j][i + 1] == length[j][i]:
            i += 1
        else:
            j += 1
    return pairs


def _earliest_embedding(
    actual: Sequence[Call], expected: Sequence[Call], policy: ArgsPolicy
) -> list[Pair]:
    """Each expected call paired with the first fitting call after the previous one's.

    Places every expected call whenever any in-order placement exists (for any rule).
    """
    pairs: list[Pair] = []
    for i, call in enumerate(actual):
        if len(pairs) == len(expected):
            break
        if policy.fits(call, expected[len(pairs)]):
            pairs.append((i, len(pairs)))
    return pairs


def _in_order(actual: Sequence[Call], expected: Sequence[Call], policy: ArgsPolicy) -> CallPairing:
    pairs = _earliest_embedding(actual, expected, policy)
    if len(pairs) == len(expected):
        unexpected = _unpaired(pairs, len(actual), len(expected))[1]
        return CallPairing("in_order", tuple(pairs), (), unexpected, OrderVerdict())
    pairs = order_pairs(actual, expected, policy)
    unplaced, unexpected = _unpaired(pairs, len(actual), len(expected))
    elsewhere = max_pairs([actual[i] for i in unexpected], [expected[j] for j in unplaced], policy)
    made = {unplaced[v] for _, v in elsewhere}
    first = unplaced[0]
    start = pairs[first - 1][0] + 1 if first else 0  # every expected call before first is paired
    later = any(policy.fits(actual[i], expected[first]) for i in range(start, len(actual)))
    order = OrderVerdict(first, tuple(j for j in unplaced if j in made), later)
    missing = tuple(j for j in unplaced if j not in made)
    return CallPairing("in_order", tuple(pairs), missing, unexpected, order)


def _first_difference(
    actual: Sequence[Call], expected: Sequence[Call], policy: ArgsPolicy
) -> int | None:
    for position, (got, wanted) in enumerate(zip(actual, expected, strict=False)):
        if not policy.fits(got, wanted):
            return position
    return None if len(actual) == len(expected) else min(len(actual), len(expected))


def _unpaired(
    pairs: Sequence[Pair], n_actual: int, n_expected: int
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    paired_actual = {i for i, _ in pairs}
    paired_expected = {j for _, j in pairs}
    missing = tuple(j for j in range(n_expected) if j not in paired_expected)
    unexpected = tuple(i for i in range(n_actual) if i not in paired_actual)
    return missing, unexpected


# --------------------------------------------------------------------------- reading and reporting


def fixed_calls(expected: Sequence[Call | str] | None, option: str) -> list[dict[str, Any]] | None:
    """Expected calls given to a factory (``None``: each example's reference supplies them).

    Raises:
        TrajectoryFormatError: ``expected`` is not a list (or tuple) of calls or tool
            names; a dict or a string is refused, not iterated (its keys or letters
            would become tool names).
    """
    if expected is None:
        return None
    if not isinstance(expected, list | tuple):
        raise TrajectoryFormatError(
            f"{option} is a {type(expected).__name__}; expected a list of tool names or "
            f"{{'name': ..., 'args': {{...}}}} dicts, e.g. {option}=['search', 'answer']."
        )
    return expected_calls_arg(list(expected), option)


def listed_call(index: int, call: Call) -> dict[str, Any]:
    """A call as reported in ``missing`` / ``unexpected``: its index, name and args."""
    return {"index": index, "name": call["name"], "args": call.get("args")}


def count(n: int, noun: str) -> str:
    """``1 call``, ``2 calls``."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def calls_comment(missing: Sequence[Call], unexpected: Sequence[Call]) -> str | None:
    """``Missing 1 expected call: f(a=1). Unexpected 2 calls: g(), h().`` or ``None``."""
    parts = []
    if missing:
        calls = describe_list([describe_call(c) for c in missing])
        parts.append(f"Missing {count(len(missing), 'expected call')}: {calls}.")
    if unexpected:
        calls = describe_list([describe_call(c) for c in unexpected])
        parts.append(f"Unexpected {count(len(unexpected), 'call')}: {calls}.")
    return " ".join(parts) or None


def pairing_feedback(
    pairing: CallPairing, actual: Sequence[Call], expected: Sequence[Call]
) -> Feedback:
    """A pairing as feedback: a bool score, what failed it, and the pairs in ``metadata``.

    ``metadata`` holds ``pairs`` (``{"actual", "reference"}`` indices),
    ``missing`` and ``unexpected`` calls, plus ``first_difference`` (``strict``,
    when failed) or ``out_of_order`` (``in_order``).
    """
    missing = [listed_call(j, expected[j]) for j in pairing.missing]
    unexpected = [listed_call(i, actual[i]) for i in pairing.unexpected]
    metadata: dict[str, Any] = {
        "pairs": [{"actual": i, "reference": j} for i, j in pairing.pairs],
        "missing": missing,
        "unexpected": unexpected,
    }
    blocking = calls_comment(
        missing if pairing.blocking_missing else [],
        unexpected if pairing.blocking_unexpected else [],
    )
    order = pairing.order
    if order is None:
        return Feedback(score=blocking is None, comment=blocking, metadata=metadata)
    if pairing.mode == "in_order":
        metadata["out_of_order"] = [listed_call(j, expected[j]) for j in order.out_of_order]
    if order.position is None:
        return Feedback(score=True, comment=None, metadata=metadata)
    if pairing.mode == "strict":
        metadata["first_difference"] = order.position
        parts = [_strict_difference(order.position, actual, expected), blocking]
    else:
        parts = [_order_break(order, expected), blocking, _out_of_order(order, expected)]
    comment = " ".join(part for part in parts if part)
    return Feedback(score=False, comment=comment, metadata=metadata)


def counted_feedback(feedback: Feedback, counted: CallsCounted, calls: CountedCalls) -> Feedback:
    """``feedback`` saying which calls counted (``metadata["calls"]``) and, when only
    executed ones did, which proposed calls were left out (``not_executed``) and which ran
    as a reviewer edited them (``edited``, when any: each as it ran, with its
    ``proposed`` call); a failing comment names them, since a rejected, unanswered or
    edited call is often why. Nothing is added for a plain list of calls, which says
    nothing of what ran."""
    if calls.left_out is None:
        return feedback
    metadata: dict[str, Any] = {**(feedback.metadata or {}), "calls": counted}
    notes = []
    if counted == "executed":
        metadata["not_executed"] = [listed_call(n, call) for n, call in calls.left_out]
        if calls.left_out:
            shown = describe_list([describe_call(call) for _, call in calls.left_out])
            notes.append(f"Not counted, proposed but not executed: {shown}.")
        if calls.edited:
            metadata["edited"] = [
                {**listed_call(n, ran), "proposed": {"name": made["name"], "args": made["args"]}}
                for n, made, ran in calls.edited
            ]
            shown = describe_list(
                [f"{describe_call(ran)} for {describe_call(made)}" for _, made, ran in calls.edited]
            )
            notes.append(f"Counted as the reviewer edited them: {shown}.")
    comment = feedback.comment
    if notes and feedback.score is not True:
        comment = " ".join([comment, *notes] if comment else notes)
    return feedback.model_copy(update={"metadata": metadata, "comment": comment})


def _strict_difference(position: int, actual: Sequence[Call], expected: Sequence[Call]) -> str:
    if position >= min(len(actual), len(expected)):
        return f"Expected {len(expected)} calls, got {len(actual)}."
    return (
        f"Call {position + 1}: expected {describe_call(expected[position])}, "
        f"got {describe_call(actual[position])}."
    )


def _order_break(order: OrderVerdict, expected: Sequence[Call]) -> str:
    position = cast(int, order.position)
    head = f"Expected call {position + 1} ({describe_call(expected[position])})"
    if order.made_later:
        return f"{head} was made, but not in the expected order."
    if position:
        return f"{head} was not made after the {count(position, 'earlier expected call')}."
    return f"{head} was not made."


def _out_of_order(order: OrderVerdict, expected: Sequence[Call]) -> str | None:
    if not order.out_of_order:
        return None
    calls = describe_list([describe_call(expected[j]) for j in order.out_of_order])
    return f"{count(len(order.out_of_order), 'expected call')} out of order: {calls}."
