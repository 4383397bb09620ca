"""The deterministic split of labelled cases into examples a judge may be shown and the
held-out cases its agreement is measured on.

A case's side is a function of its id alone (``sha256(salt + case)``), so every label of a
case (its turns, its actions, its repetitions, the runs it was played in) falls on the same
side, the split never changes as labels are added, and the same ``salt`` and ``fraction``
give the same split on any machine.
"""

from __future__ import annotations

import hashlib
from typing import Literal

from lg_eval._arguments import Fraction, validated

EXAMPLES_FRACTION = 0.3
"""The share of labelled cases a judge's examples may come from (the rest are held out)."""


@validated
def label_split(
    case: str, *, fraction: Fraction = EXAMPLES_FRACTION, salt: str = ""
) -> Literal["examples", "held_out"]:
    """Which side of the split ``case`` (a case id, or a thread id) is on."""
    return "examples" if case_hash(case, salt) < fraction else "held_out"


def case_hash(case: str, salt: str) -> float:
    """``case`` (with ``salt``) as a uniform number in ``[0, 1)``."""
    digest = hashlib.sha256(f"{salt}\x00{case}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64
