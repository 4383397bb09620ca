"""What calibration reads and what it answers: labelled pairs and ratings in, agreement out.

The inputs are keyed by case and turn (``turn`` None: the case as a whole), so a label
store, a CSV file or a harvest of a thread's interrupts can all be read into them. The
results are pydantic models with plain JSON fields: every number finite, every number that
cannot be computed ``None`` with the reason beside it.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictFloat, StrictInt, StrictStr

from lg_eval.stats import Interval

Verdict = StrictBool | StrictStr
"""A verdict: pass/fail as a bool, or a category (``"approve"``, ``"edit"``, ...)."""

Value = StrictBool | StrictInt | StrictFloat | StrictStr
"""A rating: a category (nominal) or a number (interval)."""

Level = Literal["nominal", "interval"]
"""How ratings differ: ``nominal``, equal or not; ``interval``, by their squared distance."""


class _Input(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    case_id: str = Field(min_length=1, description="The case (the unit a bootstrap resamples).")
    turn: int | None = Field(
        default=None, ge=0, description="The turn within the case; None: the whole case."
    )


class LabeledPair(_Input):
    """One case (or turn) judged twice: by the evaluator and by a person."""

    judge: Verdict = Field(description="The evaluator's verdict.")
    human: Verdict = Field(description="The person's label.")


class Rating(_Input):
    """One rater's rating of one case (or turn)."""

    rater: str = Field(min_length=1, description="Who rated: a judge's key, a person.")
    value: Value


class Estimate(BaseModel):
    """A statistic with its interval, or None with the reason it cannot be computed."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    value: float | None
    interval: Interval | None = Field(
        default=None,
        description="Seeded percentile bootstrap over cases (cluster_bootstrap); None with "
        "fewer than two cases or no resample where the statistic is defined.",
    )
    reason: str | None = Field(default=None, description="Why value is None.")


class _Result(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    cases: int = Field(description="Distinct cases: the units resampled.")
    confidence: float
    resamples: int
    seed: int


class VerdictAgreement(_Result):
    """How an evaluator's verdicts agree with a person's labels on the same cases."""

    pairs: int = Field(description="Labelled pairs (case, turn).")
    labels: list[Verdict] = Field(description="The verdicts seen, in order (the matrix's).")
    confusion: list[list[int]] = Field(
        description="confusion[i][j]: pairs the human labelled labels[i] and the judge "
        "labels[j]; the diagonal agrees."
    )
    positive: Verdict | None = Field(description="The verdict the rates count as positive.")
    true_positive: int | None = None
    false_positive: int | None = Field(default=None, description="Judge positive, human not.")
    false_negative: int | None = Field(default=None, description="Human positive, judge not.")
    true_negative: int | None = None
    agreement: Estimate = Field(description="Pairs where both say the same, over all pairs.")
    tpr: Estimate = Field(description="Of the human's positives, how many the judge found.")
    tnr: Estimate = Field(description="Of the human's negatives, how many the judge kept.")
    precision: Estimate = Field(description="Of the judge's positives, how many are the human's.")
    kappa: Estimate = Field(description="Cohen's kappa: agreement beyond chance.")
    alpha: Estimate = Field(description="Krippendorff's alpha (nominal, two raters).")

    def disagreements(self) -> int:
        """Pairs where the judge and the person differ."""
        return self.pairs - sum(self.confusion[i][i] for i in range(len(self.labels)))


class AlphaAgreement(_Result):
    """Krippendorff's alpha of several raters' ratings of the same cases."""

    level: Level
    raters: int
    units: int = Field(description="Cases (or turns) rated at least twice: the pairable ones.")
    values: int = Field(description="Ratings of those units.")
    alpha: Estimate
