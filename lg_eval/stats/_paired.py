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
:func:`adjust_per_case` then controls the false discovery rate over the per-case tests of
one key (Benjamini-Hochberg, ``scipy.stats.false_discovery_control``): with a hundred
cases, some per-case p-value falls under 0.05 by chance alone.
"""

from __future__ import annotations

import math
import warnings
from collections import defaultdict
from collections.abc import Sequence

import numpy as np
from scipy import stats as scipy_stats

from lg_eval.errors import InvalidOptionError
from lg_eval.stats._intervals import CONFIDENCE, check_confidence, mean_interval
from lg_eval.stats._models import PairedTest

ALPHA = 0.05


def check_alpha(alpha: float) -> float:
    """``alpha`` if it lies strictly between 0 and 1, else :class:`InvalidOptionError`."""
    return check_confidence(alpha, name="alpha")


def _p(value: float) -> float:
    p = float(value)
    return min(max(p, 0.0), 1.0) if math.isfinite(p) else 1.0


def mcnemar_test(
    pairs: Sequence[tuple[bool, bool]],
    *,
    case_id: str | None = None,
    key: str | None = None,
    alpha: float = ALPHA,
) -> PairedTest:
    """The exact McNemar test of ``(passed in A, passed in B)`` pairs.

    Raises:
        InvalidOptionError: no pairs, a pair that is not two booleans, or ``alpha``
            outside (0, 1).
    """
    level = check_alpha(alpha)
    if not pairs:
        raise InvalidOptionError("pairs=[]: expected at least one (A, B) pair.")
    worse = better = 0
    for index, pair in enumerate(pairs):
        if len(pair) != 2 or not all(isinstance(side, bool) for side in pair):
            raise InvalidOptionError(f"pairs[{index}]={pair!r}: expected (bool, bool).")
        worse += pair[0] and not pair[1]
        better += pair[1] and not pair[0]
    discordant = worse + better
    # binomtest(better, discordant, 0.5) two-sided, written as the doubled smaller tail of
    # the symmetric binomial: the same number, without binomtest's ~4 ms of overhead a call.
    tail = scipy_stats.binom.cdf(min(worse, better), discordant, 0.5)
    p = _p(min(1.0, 2.0 * float(tail))) if discordant else 1.0
    return PairedTest(
        case_id=case_id,
        key=key,
        test="mcnemar",
        pairs=len(pairs),
        effect=(better - worse) / len(pairs),
        p_value=p,
        alpha=level,
        significant=p < level,
    )


def wilcoxon_test(
    pairs: Sequence[tuple[float, float]],
    *,
    case_id: str | None = None,
    key: str | None = None,
    alpha: float = ALPHA,
    confidence: float = CONFIDENCE,
    interval: bool = True,
) -> PairedTest:
    """The Wilcoxon signed-rank test of ``(score in A, score in B)`` pairs.

    ``interval``: also bootstrap the mean difference (``effect_interval``); a comparison
    of many cases skips it for the per-case tests, where it costs most and says least.

    Raises:
        InvalidOptionError: no pairs, a score that is not a finite number, or ``alpha``
            / ``confidence`` outside (0, 1).
    """
    level = check_alpha(alpha)
    if not pairs:
        raise InvalidOptionError("pairs=[]: expected at least one (A, B) pair.")
    differences = []
    for index, pair in enumerate(pairs):
        if len(pair) != 2 or not all(
            isinstance(side, int | float) and math.isfinite(side) for side in pair
        ):
            raise InvalidOptionError(f"pairs[{index}]={pair!r}: expected two finite numbers.")
        differences.append(float(pair[1]) - float(pair[0]))
    if any(differences):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            p = _p(scipy_stats.wilcoxon(np.asarray(differences), zero_method="wilcox").pvalue)
    else:
        p = 1.0
    return PairedTest(
        case_id=case_id,
        key=key,
        test="wilcoxon",
        pairs=len(pairs),
        effect=math.fsum(differences) / len(differences),
        effect_interval=mean_interval(differences, confidence=confidence) if interval else None,
        p_value=p,
        alpha=level,
        significant=p < level,
    )


def adjust_per_case(tests: Sequence[PairedTest]) -> list[PairedTest]:
    """``tests`` with ``p_adjusted`` (Benjamini-Hochberg over the per-case tests of the same
    key) set and ``significant`` judged on it; pooled tests (``case_id`` None) unchanged."""
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


__all__ = ["ALPHA", "adjust_per_case", "check_alpha", "mcnemar_test", "wilcoxon_test"]
