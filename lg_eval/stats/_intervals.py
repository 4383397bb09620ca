"""Confidence intervals: Wilson for proportions, a seeded bootstrap for means.

* :func:`wilson_interval`: the Wilson score interval (``scipy.stats.binomtest(...)
  .proportion_ci(method="wilson")``). Unlike the normal ("Wald") interval it stays inside
  [0, 1] and keeps its coverage near 0 and 1 and for few trials, which is where agent pass
  rates over a handful of repetitions live.
* :func:`mean_interval`: the BCa bootstrap (``scipy.stats.bootstrap``) of the mean, with
  :data:`RESAMPLES` resamples from a fixed seed so the same values always give the same
  interval; the values are sorted first, so neither does the order they arrive in matter.
  Past :data:`BOOTSTRAP_LIMIT` values the resampling costs more than it tells, and the
  normal interval (mean ± z·s/√n, clipped to the observed range) is used instead.

:class:`~lg_eval.stats.MeanSample` collects values one at a time for :func:`mean_interval`
in memory that stops growing at :data:`BOOTSTRAP_LIMIT` (a streamed report of any size uses it).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from statistics import NormalDist
from typing import TYPE_CHECKING, Annotated

if TYPE_CHECKING:
    pass

from annotated_types import Gt, Lt
from pydantic import Field, Strict

from lg_eval._arguments import FiniteFloat, Size, validated
from lg_eval.errors import InvalidOptionError
from lg_eval.stats._models import Interval

CONFIDENCE = 0.95
RESAMPLES = 1999
SEED = 0
BOOTSTRAP_LIMIT = 1000
"""The most values :func:`mean_interval` bootstraps; beyond, the normal interval."""


Confidence = Annotated[float, Strict(), Gt(0), Lt(1), Field(allow_inf_nan=False)]
"""The contract of a confidence (or significance) level: a number strictly between 0 and 1."""


@validated
def wilson_interval(
    successes: Size, trials: Size, *, confidence: Confidence = CONFIDENCE
) -> Interval | None:
    """The Wilson score interval of ``successes / trials``; None when ``trials`` is 0.

    Raises:
        InvalidOptionError: a count is negative or not whole, ``successes`` exceeds
            ``trials``, or ``confidence`` is not in (0, 1).
    """
    if successes > trials:
        raise InvalidOptionError(
            f"successes={successes} exceeds trials={trials}: expected at most {trials}."
        )
    return wilson(successes, trials, confidence)


def wilson(k: int, n: int, level: float) -> Interval | None:
    """:func:`wilson_interval` of counts already checked."""
    if n == 0:
        return None
    # Wilson (1927), as scipy's binomtest(k, n).proportion_ci(method="wilson") gives it,
    # in closed form: every run's terminal summary shows it, and scipy takes ~1 s to import
    z = z_score(level)
    centre, spread, scale = k + z * z / 2, z * math.sqrt(k * (n - k) / n + z * z / 4), n + z * z
    # exactly 0 and 1 at k = 0 and k = n, where rounding would leave them a bit inside
    low = 0.0 if k == 0 else max(0.0, (centre - spread) / scale)
    high = 1.0 if k == n else min(1.0, (centre + spread) / scale)
    return Interval(low=low, high=high, confidence=level, method="wilson")


def z_score(level: float) -> float:
    """The two-sided normal quantile of ``level`` (1.96 for 0.95)."""
    return NormalDist().inv_cdf((1 + level) / 2)


@validated
def mean_interval(
    values: Sequence[FiniteFloat], *, confidence: Confidence = CONFIDENCE
) -> Interval | None:
    """A confidence interval of the mean of ``values``; None for fewer than two values.

    The BCa bootstrap for up to :data:`BOOTSTRAP_LIMIT` values (seeded: deterministic),
    the normal interval beyond. Equal values give the point interval ``[v, v]``.

    Raises:
        InvalidOptionError: a value is not a finite number, or ``confidence`` is not in (0, 1).
    """
    return mean_of(values, confidence)


def mean_of(numbers: Sequence[float], level: float) -> Interval | None:
    """:func:`mean_interval` of finite numbers at a level already checked."""
    if len(numbers) < 2:
        return None
    if len(numbers) > BOOTSTRAP_LIMIT:
        mean = math.fsum(numbers) / len(numbers)
        variance = math.fsum((x - mean) ** 2 for x in numbers) / (len(numbers) - 1)
        return normal_interval(mean, variance, len(numbers), min(numbers), max(numbers), level)
    return _bootstrap(sorted(numbers), level)


def _bootstrap(ordered: list[float], level: float) -> Interval:
    import numpy as np
    from scipy import stats as scipy_stats

    lo, hi = ordered[0], ordered[-1]
    if lo == hi:
        return Interval(low=lo, high=hi, confidence=level, method="bootstrap")
    data = np.asarray(ordered, dtype=float)
    low = high = math.nan
    for method in ("BCa", "percentile"):  # BCa is undefined on some degenerate samples
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = scipy_stats.bootstrap(
                (data,),
                np.mean,
                n_resamples=RESAMPLES,
                confidence_level=level,
                method=method,
                vectorized=True,
                rng=np.random.default_rng(SEED),
            )
        low, high = float(result.confidence_interval.low), float(result.confidence_interval.high)
        if math.isfinite(low) and math.isfinite(high):
            break
    return Interval(
        low=min(max(low, lo), hi), high=max(min(high, hi), lo), confidence=level, method="bootstrap"
    )


def normal_interval(
    mean: float, variance: float, n: int, lo: float, hi: float, level: float
) -> Interval:
    """mean ± z·sqrt(variance / n), clipped to ``[lo, hi]``."""
    half = z_score(level) * math.sqrt(max(variance, 0.0) / n)
    return Interval(
        low=max(mean - half, lo), high=min(mean + half, hi), confidence=level, method="normal"
    )
