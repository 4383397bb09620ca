"""Paired tests of run B against run A, pair by pair over the same cases and repetitions.

* pass/fail (a case's status, a boolean feedback): the exact McNemar test. Only the
  discordant pairs carry information: ``worse`` pairs passed in A and failed in B,
  ``better`` the reverse; under "no change" each discordant pair is a fair coin, so the
  p-value is that of ``scipy.stats.binomtest(better, worse + better, 0.5)`` (two-sided:
  twice the smaller tail of ``scipy.stats.binom``). The
  effect is the change in pass rate, ``(better - worse) / pairs``.
* scores: the Wilcoxon signed-rank test (``scipy.stats.wilcoxon``, exact for small
  samples, zero differences dropped) on the differences B − A; the effect is their mean,
  with its bootstrap interval (:func:`~lg_eval.stats.mean_interval`).

Pairs whose differences are all zero, or with no discordant pair, give ``p = 1``.

Pooled over cases with several pairs each (repetitions), the pairs of one case are not
independent of each other: :func:`clustered_mcnemar_test` and
:func:`clustered_difference_test` pair by case. Each case's differences B − A are summed
(``d_k``; for pass/fail, the pairs better in B minus those worse), and the statistic is
``(Σd_k)² / Σd_k²`` against χ² with one degree of freedom: the McNemar test for clustered
matched pairs of Durkalski, Palesch, Lipsitz and Rust (Statistics in Medicine 22:2417, 2003).
It is the usual (asymptotic) McNemar statistic when every case has one pair, and it can
never exceed the number of cases: a handful of cases cannot make any change significant,
however many repetitions each has.
:func:`adjust_per_case` then controls the false discovery rate over the per-case tests of
one key (Benjamini-Hochberg, ``scipy.stats.false_discovery_control``): with a hundred
cases, some per-case p-value falls under 0.05 by chance alone.
"""

from __future__ import annotations

import math
import warnings
from collections import defaultdict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated, Any

if TYPE_CHECKING:
    import numpy as np

from annotated_types import MinLen

from lg_eval._arguments import FiniteFloat, Flag, validated
from lg_eval.errors import InvalidOptionError
from lg_eval.stats._intervals import CONFIDENCE, Confidence, mean_of
from lg_eval.stats._models import Interval, PairedTest, PairedTestKind
from lg_eval.stats._samples import MeanSample, resamples_clusters

ALPHA = 0.05

BoolPair = tuple[Flag, Flag]
"""``(passed in A, passed in B)``."""
ScorePair = tuple[FiniteFloat, FiniteFloat]
"""``(score in A, score in B)``: finite numbers."""
BoolPairs = Annotated[Sequence[BoolPair], MinLen(1)]
ScorePairs = Annotated[Sequence[ScorePair], MinLen(1)]
Sample = Sequence[tuple[Any, Any]]
"""One test's ``(A, B)`` pairs."""


@validated
def check_alpha(alpha: Confidence) -> float:
    """``alpha`` if it lies strictly between 0 and 1, else :class:`InvalidOptionError`."""
    return alpha


def _p(value: float) -> float:
    p = float(value)
    return min(max(p, 0.0), 1.0) if math.isfinite(p) else 1.0


EXHAUSTIVE = 13
"""Samples up to this size (zero differences included) get the exact p-value from every sign
assignment, as ``scipy.stats.wilcoxon`` gives it with ties or zeros (``method="auto"``)."""

_CELLS = 4_000_000
"""Sign assignments × differences enumerated at once (memory: 8 bytes each)."""


@validated
def mcnemar_test(
    pairs: BoolPairs,
    *,
    case_id: str | None = None,
    key: str | None = None,
    alpha: Confidence = ALPHA,
) -> PairedTest:
    """The exact McNemar test of ``(passed in A, passed in B)`` pairs.

    Raises:
        InvalidOptionError: no pairs, a pair that is not two booleans, or ``alpha``
            outside (0, 1).
    """
    return mcnemar_batch([pairs], [case_id], key, alpha)[0]


@validated
def mcnemar_tests(
    samples: Sequence[BoolPairs],
    *,
    case_ids: Sequence[str | None],
    key: str | None = None,
    alpha: Confidence = ALPHA,
) -> list[PairedTest]:
    """:func:`mcnemar_test` of each sample (one case's pairs each), the binomial tails of
    all of them in one scipy call."""
    _one_id_each(samples, case_ids)
    return mcnemar_batch(samples, case_ids, key, alpha)


def mcnemar_batch(
    samples: Sequence[Sample], case_ids: Sequence[str | None], key: str | None, level: float
) -> list[PairedTest]:
    """:func:`mcnemar_tests` of samples and options already checked."""
    import numpy as np
    from scipy import stats as scipy_stats

    counts = [_discordant(pairs) for pairs in samples]
    smaller = np.asarray([min(worse, better) for worse, better in counts])
    discordant = np.asarray([worse + better for worse, better in counts])
    # binomtest(better, discordant, 0.5) two-sided, written as the doubled smaller tail of
    # the symmetric binomial: the same number, without binomtest's ~4 ms of overhead a call.
    tails = scipy_stats.binom.cdf(smaller, discordant, 0.5) if len(samples) else []
    tests = []
    for pairs, case_id, (worse, better), tail in zip(samples, case_ids, counts, tails, strict=True):
        p = _p(min(1.0, 2.0 * float(tail))) if worse + better else 1.0
        tests.append(
            PairedTest(
                case_id=case_id,
                key=key,
                test="mcnemar",
                pairs=len(pairs),
                effect=(better - worse) / len(pairs),
                p_value=p,
                alpha=level,
                significant=p < level,
            )
        )
    return tests


def _one_id_each(samples: Sequence[Any], case_ids: Sequence[Any]) -> None:
    if len(samples) != len(case_ids):
        raise InvalidOptionError("samples and case_ids: give one case id (or None) per sample.")


def _discordant(pairs: Sample) -> tuple[int, int]:
    """``(worse, better)``: pairs that passed in A only, and in B only."""
    worse = sum(1 for a, b in pairs if a and not b)
    better = sum(1 for a, b in pairs if b and not a)
    return worse, better


@validated
def wilcoxon_test(
    pairs: ScorePairs,
    *,
    case_id: str | None = None,
    key: str | None = None,
    alpha: Confidence = ALPHA,
    confidence: Confidence = CONFIDENCE,
    interval: Flag = True,
) -> PairedTest:
    """The Wilcoxon signed-rank test of ``(score in A, score in B)`` pairs.

    ``interval``: also bootstrap the mean difference (``effect_interval``); a comparison
    of many cases skips it for the per-case tests, where it costs most and says least.

    Raises:
        InvalidOptionError: no pairs, a score that is not a finite number, or ``alpha``
            / ``confidence`` outside (0, 1).
    """
    return wilcoxon_batch([pairs], [case_id], key, alpha, confidence, interval)[0]


@validated
def wilcoxon_tests(
    samples: Sequence[ScorePairs],
    *,
    case_ids: Sequence[str | None],
    key: str | None = None,
    alpha: Confidence = ALPHA,
    confidence: Confidence = CONFIDENCE,
    interval: Flag = False,
) -> list[PairedTest]:
    """:func:`wilcoxon_test` of each sample (one case's pairs each), the p-values of
    samples of one size computed together (:func:`signed_rank_p_values`)."""
    _one_id_each(samples, case_ids)
    return wilcoxon_batch(samples, case_ids, key, alpha, confidence, interval)


def wilcoxon_batch(
    samples: Sequence[Sample],
    case_ids: Sequence[str | None],
    key: str | None,
    level: float,
    confidence: float = CONFIDENCE,
    interval: bool = False,
) -> list[PairedTest]:
    """:func:`wilcoxon_tests` of samples and options already checked."""
    differences = [_differences(pairs) for pairs in samples]
    tests = []
    for case_id, diffs, p in zip(case_ids, differences, signed_rank_p(differences), strict=True):
        tests.append(
            PairedTest(
                case_id=case_id,
                key=key,
                test="wilcoxon",
                pairs=len(diffs),
                effect=math.fsum(diffs) / len(diffs),
                effect_interval=mean_of(diffs, confidence) if interval else None,
                p_value=p,
                alpha=level,
                significant=p < level,
            )
        )
    return tests


def _differences(pairs: Sample) -> list[float]:
    """B − A of each pair."""
    return [float(b) - float(a) for a, b in pairs]


@validated
def signed_rank_p_values(samples: Sequence[Sequence[FiniteFloat]]) -> list[float]:
    """The two-sided p-value ``scipy.stats.wilcoxon(d, zero_method="wilcox")`` gives each
    sample of differences ``d`` (``1.0`` when every difference is zero).

    scipy answers a small sample with zeros or ties by enumerating every sign assignment
    through ``scipy.stats.permutation_test``, one sample at a time and slowly (about 90 ms
    for 8 differences). The signed ranks do not change when signs flip, so the same
    enumeration is run here on all samples of one size at once, with the statistic
    (the sum of the positive signed ranks) written for arrays: the same p-values. Larger
    samples go to ``scipy.stats.wilcoxon`` itself.

    Raises:
        InvalidOptionError: ``samples`` is no list of lists of finite numbers.
    """
    return signed_rank_p(samples)


def signed_rank_p(samples: Sequence[Sequence[float]]) -> list[float]:
    """:func:`signed_rank_p_values` of finite differences."""
    import numpy as np
    from scipy import stats as scipy_stats

    found: list[float] = [1.0] * len(samples)
    by_size: dict[int, list[int]] = defaultdict(list)
    for index, sample in enumerate(samples):
        if not any(sample):
            continue
        if len(sample) == 1:  # one sign flip of two: p = 1, as scipy gives it
            continue
        if len(sample) <= EXHAUSTIVE:
            by_size[len(sample)].append(index)
        else:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                result = scipy_stats.wilcoxon(np.asarray(sample), zero_method="wilcox")
            found[index] = _p(result.pvalue)
    for size, indices in by_size.items():
        rows = max(1, _CELLS // (2**size * size))
        for start in range(0, len(indices), rows):
            chunk = indices[start : start + rows]
            values = _exhaustive(np.asarray([samples[i] for i in chunk], dtype=float))
            for i, p in zip(chunk, np.atleast_1d(values), strict=True):
                found[i] = _p(p)
    return found


def _exhaustive(differences: np.ndarray) -> Any:
    """Exact two-sided p-values of the rows of ``differences`` (equal sizes), every sign
    assignment enumerated by ``scipy.stats.permutation_test``."""
    import numpy as np
    from scipy import stats as scipy_stats

    size = np.abs(differences)
    ranks = scipy_stats.rankdata(np.where(size == 0, np.nan, size), axis=-1, nan_policy="omit")
    signed = np.sign(differences) * np.where(size == 0, 0.0, ranks)

    def positive_ranks(x: np.ndarray, axis: int) -> Any:
        return np.sum(np.where(x > 0, x, 0.0), axis=axis)

    result = scipy_stats.permutation_test(
        (signed,),
        positive_ranks,
        permutation_type="samples",
        vectorized=True,
        alternative="two-sided",
        axis=-1,
    )
    return result.pvalue


@validated
def clustered_mcnemar_test(
    clusters: Annotated[Sequence[BoolPairs], MinLen(1)],
    *,
    key: str | None = None,
    alpha: Confidence = ALPHA,
) -> PairedTest:
    """The McNemar test of ``(passed in A, passed in B)`` pairs grouped by case
    (``clusters``: one list of pairs per case), pairing by case; when no case has more
    than one pair (or there is one case), :func:`mcnemar_test` of the pairs.

    Raises:
        InvalidOptionError: no clusters, a cluster without pairs, a pair that is not two
            booleans, or ``alpha`` outside (0, 1).
    """
    return clustered_mcnemar(clusters, key, alpha)


def clustered_mcnemar(clusters: Sequence[Sample], key: str | None, level: float) -> PairedTest:
    """:func:`clustered_mcnemar_test` of clusters and options already checked."""
    sizes = [len(pairs) for pairs in clusters]
    if not resamples_clusters(len(sizes), max(sizes)):
        return mcnemar_batch([[pair for pairs in clusters for pair in pairs]], [None], key, level)[
            0
        ]
    sums = [better - worse for worse, better in map(_discordant, clusters)]
    return _clustered("clustered_mcnemar", sums, sizes, key, level, None)


@validated
def clustered_difference_test(
    clusters: Annotated[Sequence[ScorePairs], MinLen(1)],
    *,
    key: str | None = None,
    alpha: Confidence = ALPHA,
    confidence: Confidence = CONFIDENCE,
    interval: Flag = True,
) -> PairedTest:
    """The paired test of ``(score in A, score in B)`` pairs grouped by case, pairing by
    case; when no case has more than one pair (or there is one case),
    :func:`wilcoxon_test` of the pairs. ``interval``: the mean difference's interval,
    resampling cases.

    Raises:
        InvalidOptionError: no clusters, a cluster without pairs, a score that is not a
            finite number, or ``alpha`` / ``confidence`` outside (0, 1).
    """
    return clustered_difference(clusters, key, alpha, confidence, interval)


def clustered_difference(
    clusters: Sequence[Sample],
    key: str | None,
    level: float,
    confidence: float = CONFIDENCE,
    interval: bool = False,
) -> PairedTest:
    """:func:`clustered_difference_test` of clusters and options already checked."""
    sizes = [len(pairs) for pairs in clusters]
    if not resamples_clusters(len(sizes), max(sizes)):
        flat = [pair for pairs in clusters for pair in pairs]
        return wilcoxon_batch([flat], [None], key, level, confidence, interval)[0]
    differences = [_differences(pairs) for pairs in clusters]
    found = None
    if interval:
        sample = MeanSample()
        for index, diffs in enumerate(differences):
            for difference in diffs:
                sample.add(difference, index)
        found = sample.clusters.interval(sample.lo, sample.hi, confidence=confidence)
    sums = [math.fsum(diffs) for diffs in differences]
    return _clustered("clustered_difference", sums, sizes, key, level, found)


def _clustered(
    test: PairedTestKind,
    sums: Sequence[float],
    sizes: Sequence[int],
    key: str | None,
    level: float,
    effect_interval: Interval | None,
) -> PairedTest:
    """Durkalski's statistic ``(Σd_k)² / Σd_k²`` of the cases' summed differences."""
    from scipy import stats as scipy_stats

    total, squares = math.fsum(sums), math.fsum(d * d for d in sums)
    p = _p(scipy_stats.chi2.sf(total * total / squares, 1)) if squares else 1.0
    pairs = sum(sizes)
    return PairedTest(
        case_id=None,
        key=key,
        test=test,
        pairs=pairs,
        effect=total / pairs,
        effect_interval=effect_interval,
        p_value=p,
        alpha=level,
        significant=p < level,
    )


@validated
def adjust_per_case(tests: Sequence[PairedTest]) -> list[PairedTest]:
    """``tests`` with ``p_adjusted`` (Benjamini-Hochberg over the per-case tests of the same
    key) set and ``significant`` judged on it; pooled tests (``case_id`` None) unchanged."""
    return adjusted(tests)


def adjusted(tests: Sequence[PairedTest]) -> list[PairedTest]:
    """:func:`adjust_per_case` of tests lg_eval made."""
    import numpy as np
    from scipy import stats as scipy_stats

    groups: dict[str | None, list[int]] = defaultdict(list)
    for index, test in enumerate(tests):
        if test.case_id is not None:
            groups[test.key].append(index)
    out = list(tests)
    for indices in groups.values():
        raw = np.asarray([tests[i].p_value for i in indices], dtype=float)
        adjusted = scipy_stats.false_discovery_control(raw, method="bh")
        for i, p in zip(indices, adjusted, strict=True):
            q = _p(p)
            out[i] = tests[i].model_copy(
                update={"p_adjusted": q, "significant": q < tests[i].alpha}
            )
    return out
