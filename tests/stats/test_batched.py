"""Many cases tested at once give exactly what scipy gives each case alone."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as scipy_stats

from lg_eval.errors import InvalidOptionError
from lg_eval.stats import (
    mcnemar_test,
    mcnemar_tests,
    signed_rank_p_values,
    wilcoxon_test,
    wilcoxon_tests,
)


def scipy_p(differences: list[float]) -> float:
    """The oracle: ``scipy.stats.wilcoxon`` of one sample (1.0 when every difference is 0)."""
    if not any(differences):
        return 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(scipy_stats.wilcoxon(np.asarray(differences), zero_method="wilcox").pvalue)


# Few distinct values, so samples are full of zeros and ties (scipy's slow exhaustive path).
steps = st.sampled_from([-2.0, -1.0, -0.5, 0.0, 0.0, 0.5, 1.0, 2.0, 0.25])
samples = st.lists(st.lists(steps, min_size=1, max_size=8), min_size=1, max_size=6)


@settings(max_examples=60, deadline=None)
@given(samples=samples)
def test_signed_rank_p_values_equal_scipy_sample_by_sample(samples: list[list[float]]) -> None:
    assert signed_rank_p_values(samples) == pytest.approx([scipy_p(s) for s in samples], abs=1e-12)


def test_distinct_differences_large_samples_and_one_difference_follow_scipy() -> None:
    rng = np.random.default_rng(7)
    distinct = [list(rng.normal(size=n)) for n in (2, 5, 9, 13)]  # scipy's exact table
    large = [list(np.round(rng.normal(size=n), 1)) for n in (14, 40, 80)]  # scipy itself
    single = [[0.3], [-2.0], [0.0]]
    cases = distinct + large + single
    assert signed_rank_p_values(cases) == pytest.approx([scipy_p(s) for s in cases], abs=1e-12)


def test_a_batch_gives_what_each_test_gives_alone() -> None:
    scores = [[(0.1, 0.9), (0.5, 0.5)], [(1.0, 0.0)], [(0.2, 0.4), (0.3, 0.1), (0.0, 1.0)]]
    verdicts = [[(True, False)], [(True, True), (False, True)], [(False, False)]]
    ids = ["a", "b", "c"]
    assert wilcoxon_tests(scores, case_ids=ids, key="q") == [
        wilcoxon_test(s, case_id=c, key="q", interval=False)
        for s, c in zip(scores, ids, strict=True)
    ]
    assert mcnemar_tests(verdicts, case_ids=ids, key="m") == [
        mcnemar_test(v, case_id=c, key="m") for v, c in zip(verdicts, ids, strict=True)
    ]


def test_a_bad_sample_in_a_batch_is_refused_naming_the_pair() -> None:
    with pytest.raises(InvalidOptionError, match=r"samples\[1\]\[1\]\[1\]=nan"):
        wilcoxon_tests([[(0.1, 0.2)], [(0.3, 0.4), (0.1, float("nan"))]], case_ids=["a", "b"])
    with pytest.raises(InvalidOptionError, match=r"samples\[0\]=\[\]"):
        mcnemar_tests([[]], case_ids=["a"])
