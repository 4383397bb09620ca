"""The score range each feedback key of a judge declares, for the eval nodes to enforce.

A judge's factory records, per feedback key, where its numeric scores lie
(``(0, 1)``, the span of ``choices``, a rubric dimension's scale, a custom
schema's bounds, or None: anywhere finite). The nodes look it up with
:func:`declared_ranges` and turn a score outside it into an error feedback, so
the contract holds even for a judge wrapped in other code.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from typing import Any, TypeVar

ScoreRange = tuple[float, float]
E = TypeVar("E")

_DECLARED: weakref.WeakKeyDictionary[Any, dict[str, ScoreRange | None]] = (
    weakref.WeakKeyDictionary()
)


def declare_ranges(evaluator: E, ranges: Mapping[str, ScoreRange | None]) -> E:
    """Record the range of each feedback key ``evaluator`` returns; returns ``evaluator``."""
    _DECLARED[evaluator] = dict(ranges)
    return evaluator


def declared_ranges(evaluator: Any) -> Mapping[str, ScoreRange | None] | None:
    """The ranges declared for ``evaluator`` (None: it declared none)."""
    try:
        return _DECLARED.get(evaluator)
    except TypeError:  # not weak-referenceable or not hashable: never declared
        return None


__all__ = ["ScoreRange", "declare_ranges", "declared_ranges"]
