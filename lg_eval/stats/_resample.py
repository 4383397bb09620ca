"""Resampling clusters: the one bootstrap of values grouped by the case they came from.

:func:`cluster_resamples` draws the resamples of the clusters' summed vectors once;
:func:`percentile_interval` makes the interval of a statistic's values over them;
:func:`cluster_bootstrap` is the two together. A mean over cases
(:class:`~lg_eval.stats.ClusterTotals`) and every agreement of
:mod:`lg_eval.calibration` resample through them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np


from lg_eval._arguments import Count, Size, validated
from lg_eval.errors import InvalidOptionError
from lg_eval.stats._intervals import CONFIDENCE, RESAMPLES, SEED, Confidence
from lg_eval.stats._models import Interval

_CELLS = 2_000_000
"""Cluster draws held at once while resampling (memory: 8 bytes each)."""

_REPEATS = 50
"""Clusters per distinct row from which the resamples draw counts of rows, not clusters."""


@validated
def cluster_bootstrap(
    sums: Any,
    statistic: Callable[[Any], Any],  # arrays in, arrays out (numpy loaded when called)
    *,
    confidence: Confidence = CONFIDENCE,
    resamples: Count = RESAMPLES,
    seed: Size = SEED,
) -> Interval | None:
    """The seeded percentile bootstrap of ``statistic`` over clusters; None for fewer than
    two clusters or when no resample defines the statistic.

    ``sums``: one row per cluster, the cluster's vector of sums (a mean's total and count,
    an agreement's confusion counts). ``statistic`` maps the rows each resample adds up
    (an array of shape ``(resamples, K)``, see :func:`cluster_resamples`) to one value
    each; :func:`percentile_interval` makes the interval of those values.

    Raises:
        InvalidOptionError: ``sums`` is no table of finite numbers, ``confidence`` is not in
            (0, 1), or ``resamples`` is below 1.
    """
    return bootstrap(_table(sums), statistic, confidence, resamples, seed)


def bootstrap(
    data: np.ndarray,
    statistic: Callable[[np.ndarray], np.ndarray],
    level: float,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> Interval | None:
    """:func:`cluster_bootstrap` of a table and options already checked."""
    import numpy as np

    drawn = resampled(data, resamples, seed)
    if drawn is None:
        return None
    with np.errstate(divide="ignore", invalid="ignore"):  # undefined: left out
        return percentile(statistic(drawn), level)


@validated
def cluster_resamples(sums: Any, *, resamples: Count = RESAMPLES, seed: Size = SEED) -> Any:
    """``resamples`` bootstrap resamples of the clusters' rows, each added up: an array of
    shape ``(resamples, K)``; None for fewer than two clusters.

    Each resample draws as many clusters as there are, with replacement (seeded:
    ``numpy.random.default_rng(seed)``). Rows are sorted first, so the clusters' order does
    not matter; the same rows always give the same resamples. One draw serves every
    statistic of the same clusters. When few distinct rows repeat over many clusters (a
    confusion matrix of one pair per case has four), how often each distinct row is drawn
    is itself drawn, from the multinomial distribution that drawing the clusters one by one
    gives it: the same bootstrap, in time that does not grow with the clusters.

    Raises:
        InvalidOptionError: ``sums`` is no table of finite numbers, ``resamples`` is below
            1 or ``seed`` negative.
    """
    return resampled(_table(sums), resamples, seed)


def resampled(data: np.ndarray, resamples: int, seed: int) -> Any:
    """:func:`cluster_resamples` of a table and options already checked."""
    import numpy as np

    clusters = len(data)
    if clusters < 2:
        return None
    rng = np.random.default_rng(seed)
    kinds, counts = np.unique(data, axis=0, return_counts=True)  # sorted rows
    if len(kinds) * _REPEATS <= clusters:
        weights = rng.multinomial(clusters, counts / clusters, size=resamples)
        return weights.astype(float) @ kinds
    data = data[np.lexsort(data.T[::-1])]
    drawn = np.empty((resamples, data.shape[1]))
    step = max(1, _CELLS // clusters)
    for start in range(0, resamples, step):
        rows = min(step, resamples - start)
        picks = rng.integers(0, clusters, size=(rows, clusters))
        picks += clusters * np.arange(rows)[:, None]
        weights = np.bincount(picks.ravel(), minlength=rows * clusters).reshape(rows, clusters)
        drawn[start : start + rows] = weights.astype(float) @ data
    return drawn


@validated
def percentile_interval(values: Any, *, confidence: Confidence = CONFIDENCE) -> Interval | None:
    """The percentile interval of a bootstrap's ``values`` (method ``cluster_bootstrap``),
    leaving out those that are not finite (a rate over no trials, kappa where it is
    undefined); None when no value is finite.

    Raises:
        InvalidOptionError: ``confidence`` is not in (0, 1).
    """
    return percentile(values, confidence)


def percentile(values: Any, level: float) -> Interval | None:
    """:func:`percentile_interval` at a level already checked."""
    import numpy as np

    found = np.asarray(values, dtype=float).ravel()
    defined = found[np.isfinite(found)]
    if not defined.size:
        return None
    low, high = np.quantile(defined, [(1 - level) / 2, (1 + level) / 2])
    return Interval(low=float(low), high=float(high), confidence=level, method="cluster_bootstrap")


def _table(sums: Any) -> np.ndarray:
    import numpy as np

    try:
        data = np.asarray(sums, dtype=float)
    except (TypeError, ValueError):
        data = None
    if data is None or data.ndim != 2 or not np.isfinite(data).all():
        raise InvalidOptionError(
            f"sums={sums!r:.80}: expected one row of finite numbers per cluster."
        )
    return data
