"""Intervals that count clusters: values grouped by the case they came from.

With repetitions, a case's results are not independent trials of the dataset: a case that
always passes passes ten times out of ten, and counting those as ten trials makes an
interval about the population of cases look ten times better informed than it is. Here the
cluster (a case, with all its repetitions) is the unit that is resampled or whose spread
is measured:

* a rate: :class:`RateMoments` (per cluster ``y_i`` successes of ``m_i`` trials, summed
  as SQL or a stream sums them) and :func:`clustered_rate_interval`, the Wilson score
  interval on the effective number of trials ``p(1 - p) / V``, where
  ``V = Σ(y_i - p·m_i)² / (Σm_i)²`` is the cluster-robust variance of ``p`` (as Korn and
  Graubard, 1998, use an effective sample size with a survey's design-based variance).
  When every cluster holds one trial the effective number is the number of trials, and the
  plain :func:`~lg_eval.stats.wilson_interval` is returned;
* a mean: :class:`ClusterTotals` (per cluster the total and count of its values): the
  seeded percentile bootstrap that resamples clusters
  (:func:`~lg_eval.stats.cluster_bootstrap`) up to
  :data:`~lg_eval.stats.BOOTSTRAP_LIMIT` clusters, the normal interval with the clustered
  standard error beyond;
* the resampling itself is :mod:`lg_eval.stats._resample`'s.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Annotated, NamedTuple

if TYPE_CHECKING:
    import numpy as np

from annotated_types import MaxLen
from pydantic import TypeAdapter, ValidationError

from lg_eval._arguments import Count, FiniteFloat, Size, instance_of, invalid_option, validated
from lg_eval.errors import InvalidOptionError
from lg_eval.stats._intervals import BOOTSTRAP_LIMIT, CONFIDENCE, Confidence, wilson, z_score
from lg_eval.stats._models import Interval
from lg_eval.stats._resample import bootstrap

# --------------------------------------------------------------------------- rates


class RateMoments(NamedTuple):
    """The sums over clusters a clustered rate needs: cluster ``i`` had ``y_i`` successes
    in ``m_i`` trials. Whole numbers, so a database and Python sum them exactly alike."""

    clusters: int = 0
    """Clusters with at least one trial."""
    successes: int = 0
    """Σ y_i."""
    trials: int = 0
    """Σ m_i."""
    successes_sq: int = 0
    """Σ y_i²."""
    cross: int = 0
    """Σ y_i·m_i."""
    trials_sq: int = 0
    """Σ m_i²."""
    largest: int = 0
    """The most trials of one cluster (1: every trial its own cluster)."""

    def plus(self, successes: int, trials: int) -> RateMoments:
        """These moments with one more cluster (none when ``trials`` is 0)."""
        if not trials:
            return self
        y, m = int(successes), int(trials)
        return RateMoments(
            self.clusters + 1,
            self.successes + y,
            self.trials + m,
            self.successes_sq + y * y,
            self.cross + y * m,
            self.trials_sq + m * m,
            max(self.largest, m),
        )

    @classmethod
    def of(cls, counts: Iterable[tuple[int, int]]) -> RateMoments:
        """The moments of ``(successes, trials)`` per cluster.

        Raises:
            InvalidOptionError: a count is no whole number >= 0, or successes exceed trials.
        """
        try:
            (pairs,) = _COUNTS.validate_python((counts,))
        except ValidationError as exc:
            raise invalid_option(exc, ("counts",)) from None
        moments = cls()
        for index, (y, m) in enumerate(pairs):
            if y > m:
                raise InvalidOptionError(f"counts[{index}]={(y, m)!r}: successes exceed trials.")
            moments = moments.plus(y, m)
        return moments


_COUNTS = TypeAdapter(tuple[list[tuple[Size, Size]]])
"""``(counts,)``: a list of ``(successes, trials)`` (the tuple names the argument)."""


@validated
def clustered_rate_interval(
    moments: Annotated[RateMoments, instance_of(RateMoments, what="RateMoments")],
    *,
    confidence: Confidence = CONFIDENCE,
) -> Interval | None:
    """The interval of the rate ``Σy / Σm`` that counts clusters, not trials; None without
    trials.

    Every cluster of one trial: :func:`~lg_eval.stats.wilson_interval` of the counts (the
    same numbers). Otherwise the Wilson score interval on the effective number of trials
    ``n = p(1-p)/V`` (``V`` the cluster-robust variance of ``p``), at most the trials;
    a rate of 0 or 1, which has no spread to measure, counts one trial per cluster.
    Clusters that always agree with themselves give the Wilson interval over clusters.

    Raises:
        InvalidOptionError: ``moments`` is no :class:`RateMoments`, or ``confidence`` is
            not in (0, 1).
    """
    y, m = moments.successes, moments.trials
    if m == 0:
        return None
    if moments.largest <= 1:
        return wilson(y, m, confidence)
    # Σ(y_i - p·m_i)² · M², in whole numbers: exact, whatever summed the moments
    spread = m * m * moments.successes_sq - 2 * m * y * moments.cross + y * y * moments.trials_sq
    if y in (0, m):
        effective = float(moments.clusters)
    elif spread <= 0:
        effective = float(m)
    else:
        effective = min(y * (m - y) * m * m / spread, float(m))
    return _wilson(y / m, effective, confidence)


def _wilson(p: float, n: float, level: float) -> Interval:
    """The Wilson score interval of a proportion ``p`` over ``n`` (effective) trials."""
    z = z_score(level)
    scale = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / scale
    half = z / scale * math.sqrt(max(p * (1 - p), 0.0) / n + z * z / (4 * n * n))
    return Interval(
        low=max(0.0, centre - half),
        high=min(1.0, centre + half),
        confidence=level,
        method="cluster_wilson",
    )


# --------------------------------------------------------------------------- means


class _Moments(NamedTuple):
    """Clusters, Σm, Σy, the range of the cluster means and Σ(y_i - r·m_i)² about the
    current mean ``r = Σy/Σm``, with what moves it when ``r`` moves: Σm_i(y_i - r·m_i)
    and Σm_i²."""

    clusters: int = 0
    values: int = 0
    total: float = 0.0
    spread: float = 0.0
    slope: float = 0.0
    values_sq: float = 0.0
    largest: int = 0

    def plus(self, y: float, m: int) -> _Moments:
        # the squares about the old mean, moved to the new one (a quadratic in the mean:
        # exact, and as stable as Welford's update, which it is when every m_i is 1)
        values, total = self.values + m, self.total + y
        shift = total / values - (self.total / self.values if self.values else 0.0)
        spread = self.spread - 2 * shift * self.slope + shift * shift * self.values_sq
        slope = self.slope - shift * self.values_sq
        residual = y - total / values * m
        return _Moments(
            self.clusters + 1,
            values,
            total,
            spread + residual * residual,
            slope + m * residual,
            self.values_sq + m * m,
            max(self.largest, m),
        )


class ClusterTotals:
    """Values added one by one with the cluster each belongs to, a cluster's values
    together: per cluster its total and count, kept for up to
    :data:`~lg_eval.stats.BOOTSTRAP_LIMIT` clusters, and the moments of all of them.

    A value whose cluster differs from the previous value's starts a new cluster (None: a
    cluster of its own), so memory stays bounded however many values stream past.
    """

    def __init__(self) -> None:
        self.pairs: list[tuple[float, int]] | None = []
        self.moments = _Moments()
        self._key: object = None
        self._total = 0.0
        self._count = 0

    @classmethod
    @validated
    def from_pairs(
        cls, pairs: Annotated[Sequence[tuple[FiniteFloat, Count]], MaxLen(BOOTSTRAP_LIMIT)]
    ) -> ClusterTotals:
        """Clusters known by their ``(total, count)`` (as SQL groups them), up to
        :data:`~lg_eval.stats.BOOTSTRAP_LIMIT` of them.

        Raises:
            InvalidOptionError: more pairs than that, or a pair that is no finite total
                and whole count >= 1.
        """
        totals = cls()
        for total, count in pairs:
            totals._close_with(total, count)
        return totals

    @classmethod
    @validated
    def from_moments(
        cls, clusters: Size, count: Count, total: FiniteFloat, spread: FiniteFloat, largest: Count
    ) -> ClusterTotals:
        """Clusters known only by their moments, for more than
        :data:`~lg_eval.stats.BOOTSTRAP_LIMIT` of them: ``spread`` is
        ``Σ(y_i - r·m_i)²`` about the mean ``r = total / count`` (as a database computes it
        in a second pass). Its interval is the normal one with the clustered standard error.

        Raises:
            InvalidOptionError: ``clusters`` is not above the limit, or a moment is no
                finite number (counts: whole).
        """
        if clusters <= BOOTSTRAP_LIMIT:
            raise InvalidOptionError(
                f"clusters={clusters}: from_moments needs more than {BOOTSTRAP_LIMIT};"
                " use from_pairs."
            )
        totals = cls()
        totals.pairs = None
        totals.moments = _Moments(
            clusters=clusters, values=count, total=total, spread=max(spread, 0.0), largest=largest
        )
        return totals

    def add(self, value: float, cluster: object = None) -> None:
        """Count one value of ``cluster`` (a finite number; None: a cluster of its own)."""
        if self._count and (cluster is None or cluster != self._key):
            self._close_with(self._total, self._count)
            self._total, self._count = 0.0, 0
        self._key = cluster
        self._total += value
        self._count += 1

    def _close_with(self, total: float, count: int) -> None:
        self.moments = self.moments.plus(total, count)
        if self.pairs is not None:
            self.pairs.append((total, count))
            if len(self.pairs) > BOOTSTRAP_LIMIT:
                self.pairs = None

    def _final(self) -> tuple[_Moments, list[tuple[float, int]] | None]:
        """The moments and pairs with the open cluster closed (nothing changes here)."""
        if not self._count:
            return self.moments, self.pairs
        moments = self.moments.plus(self._total, self._count)
        pairs = None if self.pairs is None else [*self.pairs, (self._total, self._count)]
        return moments, None if pairs is None or len(pairs) > BOOTSTRAP_LIMIT else pairs

    @property
    def largest(self) -> int:
        """The most values one cluster holds."""
        return max(self.moments.largest, self._count)

    @property
    def clusters(self) -> int:
        """How many clusters there are."""
        return self.moments.clusters + (self._count > 0)

    def interval(self, lo: float, hi: float, *, confidence: float = CONFIDENCE) -> Interval | None:
        """The interval of the mean ``Σy / Σm`` over clusters, clipped to the values'
        range ``[lo, hi]``; None for fewer than two clusters (``confidence``: a level
        checked by the caller, as :meth:`MeanSample.interval` checks it)."""
        import numpy as np

        moments, pairs = self._final()
        if moments.clusters < 2:
            return None
        if pairs is not None:
            found = bootstrap(np.asarray(pairs, dtype=float), _ratio, confidence)
            if found is None:
                return None
            low, high = found.low, found.high
            method = "cluster_bootstrap"
        else:
            mean = moments.total / moments.values
            g = moments.clusters
            half = z_score(confidence) * math.sqrt(moments.spread * g / (g - 1)) / moments.values
            low, high, method = mean - half, mean + half, "cluster_normal"
        return Interval(
            low=min(max(low, lo), hi),
            high=max(min(high, hi), lo),
            confidence=confidence,
            method=method,
        )


def _ratio(sums: np.ndarray) -> np.ndarray:
    """The mean of each resample: its total over its count."""
    import numpy as np

    return np.asarray(sums[:, 0] / sums[:, 1])
