"""How verdicts make a case's verdict, shared by the runner, sweeps and the LangSmith summary.

A score's verdict is :func:`lg_eval._feedback.verdict` (re-exported here): a bool is
its own verdict, a number passes at or above its threshold, and ``None`` gives
*no verdict* (the evaluator could not judge and says why in its comment). A
no-verdict is neither pass nor fail: a case passes when it has at least one verdict
and every verdict passed, so a no-verdict never fails a case that has a passing
verdict, and never passes one alone. Asked to (``require_verdict``), any no-verdict fails the case.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from lg_eval._feedback import verdict as verdict


def case_verdict(
    verdicts: Iterable[bool | None], *, require_verdict: bool = False
) -> Literal["passed", "failed"]:
    """``passed`` when at least one verdict was given and all passed (and, with
    ``require_verdict``, none is missing); else ``failed``."""
    given = list(verdicts)
    if require_verdict and any(v is None for v in given):
        return "failed"
    decided = [v for v in given if v is not None]
    return "passed" if decided and all(decided) else "failed"
