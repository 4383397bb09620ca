"""Values streamed one at a time, for a mean's interval in bounded memory.

:class:`MeanSample` is what a report's tally feeds: each score with the case it belongs to.
Without repetitions (every case gives one value) its interval is
:func:`~lg_eval.stats.mean_interval` of the values; when some case gives several, the
interval resamples cases (:class:`~lg_eval.stats.ClusterTotals`), see
:func:`resamples_clusters`.
"""

from __future__ import annotations

import math

from lg_eval._arguments import FiniteFloat, Flag, Size, validated
from lg_eval.errors import InvalidOptionError
from lg_eval.stats._clusters import ClusterTotals
from lg_eval.stats._intervals import (
    BOOTSTRAP_LIMIT,
    CONFIDENCE,
    Confidence,
    mean_of,
    normal_interval,
)
from lg_eval.stats._models import Interval


def resamples_clusters(clusters: int, largest: int) -> bool:
    """Whether a mean's interval is taken over clusters: some cluster holds more than one
    value, and there are at least two clusters to resample (one case alone has only its
    own values' interval)."""
    return largest > 1 and clusters >= 2


class MeanSample:
    """Values added one by one, for :func:`~lg_eval.stats.mean_interval` in memory bounded
    by :data:`~lg_eval.stats.BOOTSTRAP_LIMIT`: the values themselves up to the limit, then
    only the count, mean and sum of squared deviations (Welford's update) and the range;
    beside them the same values by cluster (:class:`~lg_eval.stats.ClusterTotals`)."""

    def __init__(self) -> None:
        self.values: list[float] | None = []
        self.n = 0
        self.mean = 0.0
        self.m2 = 0.0
        self.lo = math.inf
        self.hi = -math.inf
        self.clusters = ClusterTotals()

    @classmethod
    @validated
    def from_moments(
        cls, n: Size, mean: FiniteFloat, m2: FiniteFloat, lo: FiniteFloat, hi: FiniteFloat
    ) -> MeanSample:
        """A sample known only by its moments (count, mean, sum of squared deviations from
        the mean, range), as a database computes them, for more than
        :data:`BOOTSTRAP_LIMIT` values: its :meth:`interval` is the normal interval that
        :func:`mean_interval` gives those values.

        Raises:
            InvalidOptionError: ``n`` is not above :data:`BOOTSTRAP_LIMIT` (a bootstrap
                needs the values), or a moment is not a finite number.
        """
        if n <= BOOTSTRAP_LIMIT:
            raise InvalidOptionError(
                f"n={n}: from_moments needs more than {BOOTSTRAP_LIMIT} values; add them instead."
            )
        sample = cls()
        sample.values = None
        sample.n, sample.mean, sample.m2, sample.lo, sample.hi = n, mean, max(m2, 0.0), lo, hi
        return sample

    def add(self, value: float, cluster: object = None) -> None:
        """Count one finite value of ``cluster`` (the case it came from; None: its own).
        A cluster's values are added together: one that differs from the previous value's
        starts a new cluster."""
        self.clusters.add(value, cluster)
        self.n += 1
        delta = value - self.mean
        self.mean += delta / self.n
        self.m2 += delta * (value - self.mean)
        self.lo, self.hi = min(self.lo, value), max(self.hi, value)
        if self.values is not None:
            self.values.append(value)
            if len(self.values) > BOOTSTRAP_LIMIT:
                self.values = None

    @validated
    def interval(
        self, *, confidence: Confidence = CONFIDENCE, clustered: Flag = True
    ) -> Interval | None:
        """:func:`~lg_eval.stats.mean_interval` of the values added (None for fewer than
        two), or, when ``clustered`` and :func:`resamples_clusters`, the interval over
        clusters (``clustered=False``: the values as independent, whatever their clusters)."""
        if self.n < 2:
            return None
        if clustered and resamples_clusters(self.clusters.clusters, self.clusters.largest):
            return self.clusters.interval(self.lo, self.hi, confidence=confidence)
        if self.values is not None:
            return mean_of(self.values, confidence)
        return normal_interval(
            self.mean, self.m2 / (self.n - 1), self.n, self.lo, self.hi, confidence
        )
