"""The bootstrap every agreement shares.

:class:`Bootstrap` holds the per-case sums of one agreement and their resamples (drawn once
by :func:`lg_eval.stats.cluster_resamples`), and makes each statistic's
:class:`~lg_eval.calibration.Estimate`: the value on all cases, its percentile interval
over the resamples, or None with the reason.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np


from lg_eval.calibration._models import Estimate
from lg_eval.stats import cluster_resamples, percentile_interval

Statistic = Callable[["np.ndarray"], "np.ndarray"]  # numpy imported where used
"""Rows of summed per-case vectors (shape ``(n, K)``) → one value each (NaN: undefined)."""


class Bootstrap:
    """One agreement's per-case vectors of sums, their total and their resamples."""

    def __init__(self, cases: np.ndarray, confidence: float, resamples: int, seed: int) -> None:
        self.total = cases.sum(axis=0, keepdims=True)
        self.confidence = confidence
        drawn = cluster_resamples(cases, resamples=resamples, seed=seed) if len(cases) else None
        self.drawn = drawn

    def estimate(self, statistic: Statistic, undefined: str) -> Estimate:
        """``statistic`` on every case with its interval over the resamples; when it is not
        defined on every case, None with ``undefined`` as the reason."""
        import numpy as np

        with np.errstate(divide="ignore", invalid="ignore"):
            value = float(statistic(self.total)[0])
            found = None if self.drawn is None else statistic(self.drawn)
        if not np.isfinite(value):
            return Estimate(value=None, reason=undefined)
        interval = None if found is None else percentile_interval(found, confidence=self.confidence)
        return Estimate(value=value, interval=interval)


def none(reason: str) -> Estimate:
    """An estimate that cannot be made, and why."""
    return Estimate(value=None, reason=reason)


def case_table(case_ids: Sequence[str], rows: Any, width: int) -> np.ndarray:
    """Per-item vectors ``rows`` (each ``width`` long) added up per case, in first-seen order."""
    import numpy as np

    index: dict[str, int] = {}
    at = np.fromiter((index.setdefault(case, len(index)) for case in case_ids), dtype=np.intp)
    table = np.zeros((len(index), width))
    if len(at):
        np.add.at(table, at, np.asarray(rows, dtype=float).reshape(len(at), width))
    return table
