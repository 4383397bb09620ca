"""Statistics for nondeterministic agents: intervals around every rate and mean, and
paired tests of one run against another.

* :func:`wilson_interval` (pass rates, pass@k, pass^k) and :func:`mean_interval` (mean
  scores: a seeded BCa bootstrap, the normal interval past :data:`BOOTSTRAP_LIMIT`
  values), both returning an :class:`Interval`;
* :func:`mcnemar_test` (pass/fail) and :func:`wilcoxon_test` (scores) over paired
  repetitions, each a :class:`PairedTest` with the p-value and the effect;
  :func:`mcnemar_tests` and :func:`wilcoxon_tests` test many cases' samples at once
  (the same numbers, scipy called once per batch: :func:`signed_rank_p_values`), and
  :func:`adjust_per_case` controls the false discovery rate over them;
* with repetitions, intervals and pooled tests that count cases, not results:
  :func:`clustered_rate_interval` (of :class:`RateMoments`), :class:`MeanSample` given each
  value's case (:class:`ClusterTotals`), :func:`clustered_mcnemar_test` and
  :func:`clustered_difference_test`; :func:`cluster_bootstrap` (:func:`cluster_resamples`,
  :func:`percentile_interval`) resamples cases for any statistic of their summed vectors.

The tests are scipy's (``binomtest``, ``bootstrap``, ``wilcoxon``,
``false_discovery_control``); this package chooses among them and keeps every number
finite and deterministic. See ``docs/statistics.md``.
"""

from lg_eval.stats._clusters import ClusterTotals, RateMoments, clustered_rate_interval
from lg_eval.stats._intervals import (
    BOOTSTRAP_LIMIT,
    CONFIDENCE,
    RESAMPLES,
    SEED,
    Confidence,
    mean_interval,
    wilson_interval,
)
from lg_eval.stats._models import Interval, IntervalMethod, PairedTest, PairedTestKind
from lg_eval.stats._paired import (
    ALPHA,
    adjust_per_case,
    check_alpha,
    clustered_difference_test,
    clustered_mcnemar_test,
    mcnemar_test,
    mcnemar_tests,
    signed_rank_p_values,
    wilcoxon_test,
    wilcoxon_tests,
)
from lg_eval.stats._resample import cluster_bootstrap, cluster_resamples, percentile_interval
from lg_eval.stats._samples import MeanSample, resamples_clusters

__all__ = [
    "ALPHA",
    "BOOTSTRAP_LIMIT",
    "CONFIDENCE",
    "RESAMPLES",
    "SEED",
    "ClusterTotals",
    "Confidence",
    "Interval",
    "IntervalMethod",
    "MeanSample",
    "PairedTest",
    "PairedTestKind",
    "RateMoments",
    "adjust_per_case",
    "check_alpha",
    "cluster_bootstrap",
    "cluster_resamples",
    "clustered_difference_test",
    "clustered_mcnemar_test",
    "clustered_rate_interval",
    "mcnemar_test",
    "mcnemar_tests",
    "mean_interval",
    "percentile_interval",
    "resamples_clusters",
    "signed_rank_p_values",
    "wilcoxon_test",
    "wilcoxon_tests",
    "wilson_interval",
]
