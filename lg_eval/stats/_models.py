"""The statistics' data: an interval with the method that made it, and a paired test.

Both cross boundaries (the report model, the JSON report, a comparison), so they are
pydantic models with plain JSON fields; every number in them is finite.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

IntervalMethod = Literal[
    "wilson", "bootstrap", "normal", "cluster_wilson", "cluster_bootstrap", "cluster_normal"
]
"""Over independent values: ``wilson``, the Wilson score interval of a proportion;
``bootstrap``, the BCa bootstrap of a mean (seeded); ``normal``, mean ± z·s/√n, for means of
more values than the bootstrap takes (see :data:`~lg_eval.stats.BOOTSTRAP_LIMIT`).

Over clusters (cases, each with its repetitions): ``cluster_wilson``, the Wilson interval on
the effective number of trials the clustered variance allows; ``cluster_bootstrap``, the
seeded percentile bootstrap that resamples clusters; ``cluster_normal``, the normal interval
with the clustered standard error, past the bootstrap's limit."""

PairedTestKind = Literal["mcnemar", "wilcoxon", "clustered_mcnemar", "clustered_difference"]
"""``mcnemar``: the exact McNemar test (a binomial test on the discordant pairs) for
pass/fail; ``wilcoxon``: the Wilcoxon signed-rank test on paired score differences. Pooled
over cases that have several pairs each (repetitions), the pairs of a case are summed into
one difference per case: ``clustered_mcnemar`` is the McNemar test for clustered pairs
(Durkalski et al., 2003) on pass/fail, ``clustered_difference`` the same statistic on score
differences."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Interval(_Model):
    """A confidence interval ``[low, high]`` around an estimate."""

    low: float
    high: float
    confidence: float = Field(description="The coverage asked for, e.g. 0.95.")
    method: IntervalMethod

    def __contains__(self, value: object) -> bool:
        return isinstance(value, int | float) and self.low <= value <= self.high


class PairedTest(_Model):
    """Run B against run A on the same cases and repetitions: one paired test.

    ``effect`` is B minus A: the change in pass rate for ``mcnemar``, the mean score
    difference for ``wilcoxon``. ``regression`` is a significant effect below zero.
    """

    case_id: str | None = Field(description="The case tested; None: every case pooled.")
    key: str | None = Field(description="The feedback key; None: the case status (passed).")
    test: PairedTestKind
    pairs: int = Field(description="Paired (case, repetition) results that entered the test.")
    effect: float
    effect_interval: Interval | None = Field(
        default=None, description="Bootstrap interval of the mean paired difference (scores)."
    )
    p_value: float = Field(description="Two-sided.")
    p_adjusted: float | None = Field(
        default=None,
        description="Per-case tests: Benjamini-Hochberg over the cases of the same key.",
    )
    alpha: float
    significant: bool = Field(description="p_adjusted (else p_value) below alpha.")

    @property
    def regression(self) -> bool:
        """A significant drop from A to B."""
        return self.significant and self.effect < 0

    @property
    def improvement(self) -> bool:
        """A significant rise from A to B."""
        return self.significant and self.effect > 0
