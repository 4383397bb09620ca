"""Shape node sequences before graph trajectories are compared.

Both graph evaluators (match and similarity) read trajectories through a
:class:`GraphView`: drop ignored nodes, keep / drop / strip subgraph steps,
optionally let parallel siblings of a superstep appear in any order, and
compare per turn or over the whole thread.

Supersteps as sets: each superstep's tasks are cut into blocks (a top-level
node with its subgraph steps and interrupt markers) and the blocks are sorted,
on both sides, so siblings compare equal in any order. A flat side (a plain
``{"steps": ...}`` reference has no superstep structure) is cut with the other
side's superstep sizes, position by position. With ``subgraphs="strip"`` a
reference cannot tell which parent a stripped step belongs to, so each
superstep is compared as a multiset of names instead.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal, TypedDict, Unpack, get_args

from lg_eval._inputs import GraphSide, graph_arg
from lg_eval._trajectory import INTERRUPT, RESUMED_MODES
from lg_eval.errors import InvalidOptionError

Scope = Literal["turn", "thread"]
SubgraphMode = Literal["keep", "drop", "strip"]
SCOPES: tuple[Scope, ...] = get_args(Scope)
SUBGRAPH_MODES: tuple[SubgraphMode, ...] = get_args(SubgraphMode)
_SEP = ":"

Token = tuple[str, int | None]  # (node path, superstep number or None for flat input)


class GraphViewOptions(TypedDict, total=False):
    """How graph evaluators read node sequences (every key optional).

    * ``scope``: ``"turn"`` (default) compares turn by turn, ``"thread"`` all
      turns as one sequence.
    * ``supersteps_as_sets``: parallel siblings of a superstep may come in any
      order (needs a ``ThreadTrajectory`` on at least one side). Default False.
    * ``ignore_nodes``: node names to drop (e.g. ``__start__``,
      ``__interrupt__``), matched against the full path or the node's own name.
    * ``ignore_pattern``: a regex; nodes it fully matches (path or name) are dropped.
    * ``subgraphs``: ``"keep"`` subgraph steps as ``parent:child`` paths
      (default), ``"drop"`` them, or ``"strip"`` them to the child's name.
    * ``resumed``: ``"omit"`` (default) or ``"repeat"``: how a
      ``ThreadTrajectory`` lists a paused node re-run by the resuming turn.
    """

    scope: Scope
    supersteps_as_sets: bool
    ignore_nodes: Iterable[str]
    ignore_pattern: str | re.Pattern[str] | None
    subgraphs: SubgraphMode
    resumed: Literal["omit", "repeat"]


def _choice(option: str, value: object, allowed: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in allowed:
        raise InvalidOptionError(
            f"{option}={value!r} is not allowed; use one of {', '.join(allowed)}."
        )
    return value


@dataclass(frozen=True)
class GraphView:
    """Validated options for reading two graph trajectories side by side."""

    scope: str = "turn"
    supersteps_as_sets: bool = False
    ignore_nodes: frozenset[str] = field(default_factory=frozenset)
    ignore_pattern: re.Pattern[str] | None = None
    subgraphs: str = "keep"
    resumed: str = "omit"

    @classmethod
    def create(cls, **options: Unpack[GraphViewOptions]) -> GraphView:
        """Check every option and build the view (errors name the allowed values)."""
        unknown = sorted(set(options) - set(GraphViewOptions.__annotations__))
        if unknown:
            raise InvalidOptionError(
                f"Unknown option(s) {', '.join(unknown)}; graph evaluators accept "
                f"{', '.join(GraphViewOptions.__annotations__)}."
            )
        ignore_nodes = options.get("ignore_nodes", ())
        if isinstance(ignore_nodes, str):
            ignore_nodes = (ignore_nodes,)
        nodes = frozenset(ignore_nodes)
        if not all(isinstance(node, str) for node in nodes):
            raise InvalidOptionError("ignore_nodes must be node names (strings).")
        ignore_pattern = options.get("ignore_pattern")
        try:
            pattern = re.compile(ignore_pattern) if ignore_pattern is not None else None
        except (re.error, TypeError) as exc:
            raise InvalidOptionError(
                f"ignore_pattern={ignore_pattern!r} is not a valid regular expression: {exc}."
            ) from exc
        return cls(
            scope=_choice("scope", options.get("scope", "turn"), SCOPES),
            supersteps_as_sets=bool(options.get("supersteps_as_sets", False)),
            ignore_nodes=nodes,
            ignore_pattern=pattern,
            subgraphs=_choice("subgraphs", options.get("subgraphs", "keep"), SUBGRAPH_MODES),
            resumed=_choice("resumed", options.get("resumed", "omit"), RESUMED_MODES),
        )

    def read(self, outputs: Any, reference_outputs: Any) -> tuple[list[list[str]], ...]:
        """Shaped node sequences ``(actual, reference)``, one list per turn.

        With ``scope="thread"`` each side is a single list holding every turn.
        """
        sides = (
            graph_arg(outputs, "outputs", self.resumed),  # type: ignore[arg-type]
            graph_arg(reference_outputs, "reference_outputs", self.resumed),  # type: ignore[arg-type]
        )
        actual, reference = (self._kept(side) for side in sides)
        if self.supersteps_as_sets:
            actual, reference = _canonical_pair(actual, reference, self.subgraphs != "strip")
        shaped = [
            [[self._label(name) for name, _ in turn] for turn in s] for s in (actual, reference)
        ]
        if self.scope == "thread":
            shaped = [[[name for turn in side for name in turn]] for side in shaped]
        return shaped[0], shaped[1]

    def _kept(self, side: GraphSide) -> list[list[Token]]:
        turns = []
        for n, names in enumerate(side.turns):
            steps = _superstep_numbers(side.supersteps[n]) if side.supersteps else None
            tokens = [(name, steps[i] if steps else None) for i, name in enumerate(names)]
            turns.append([(self._label(name), s) for name, s in tokens if self._keeps(name)])
        return turns

    def _keeps(self, name: str) -> bool:
        if self.subgraphs == "drop" and _SEP in name:
            return False
        leaf = name.rsplit(_SEP, 1)[-1]
        if name in self.ignore_nodes or leaf in self.ignore_nodes:
            return False
        pattern = self.ignore_pattern
        return not (pattern and (pattern.fullmatch(name) or pattern.fullmatch(leaf)))

    def _label(self, name: str) -> str:
        return name.rsplit(_SEP, 1)[-1] if self.subgraphs == "strip" else name


def _superstep_numbers(sizes: list[int]) -> list[int]:
    return [number for number, size in enumerate(sizes) for _ in range(size)]


def _canonical_pair(
    actual: list[list[Token]], reference: list[list[Token]], by_block: bool
) -> tuple[list[list[Token]], list[list[Token]]]:
    out_actual, out_reference = [], []
    for n in range(max(len(actual), len(reference))):
        a = actual[n] if n < len(actual) else []
        r = reference[n] if n < len(reference) else []
        a_sizes, r_sizes = _group_sizes(a), _group_sizes(r)
        a_sizes = a_sizes if a_sizes is not None else r_sizes
        r_sizes = r_sizes if r_sizes is not None else a_sizes
        if n < len(actual):
            out_actual.append(_canonical(a, a_sizes, by_block))
        if n < len(reference):
            out_reference.append(_canonical(r, r_sizes, by_block))
    return out_actual, out_reference


def _group_sizes(tokens: list[Token]) -> list[int] | None:
    """Lengths of runs of the same superstep; ``None`` for a flat (unstructured) turn."""
    if not tokens or tokens[0][1] is None:
        return None
    sizes: list[int] = []
    previous: int | None = None
    for _, step in tokens:
        if step == previous:
            sizes[-1] += 1
        else:
            sizes.append(1)
            previous = step
    return sizes


def _canonical(tokens: list[Token], sizes: list[int] | None, by_block: bool) -> list[Token]:
    """Sort the task blocks (or, without blocks, the names) inside each superstep segment."""
    if not sizes:
        return tokens
    out: list[Token] = []
    start = 0
    for size in sizes:
        segment = tokens[start : start + size]
        start += size
        blocks: list[list[Token]] = []
        for token in segment:
            name = token[0]
            if not blocks or not by_block or (_SEP not in name and name != INTERRUPT):
                blocks.append([])
            blocks[-1].append(token)
        for block in sorted(blocks, key=lambda b: [name for name, _ in b]):
            out.extend(block)
    out.extend(tokens[start:])
    return out
