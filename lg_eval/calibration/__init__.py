"""How far to trust a judge: its agreement with people on the same cases.

* :func:`verdict_agreement`: an evaluator's verdicts against a person's labels
  (:class:`LabeledPair`, keyed by case and turn): the confusion matrix, agreement, TPR,
  TNR, precision, Cohen's kappa and Krippendorff's alpha, as a :class:`VerdictAgreement`;
* :func:`krippendorff_alpha`: several raters' ratings (:class:`Rating`), nominal or
  interval, as an :class:`AlphaAgreement`.

Every number is an :class:`Estimate`: its value with a seeded bootstrap interval that
resamples cases (a case's turns together, :func:`lg_eval.stats.cluster_resamples`), or
None with the reason it is undefined (one class only, no positive label). The package knows
numbers and labels only: where labels come from (a store, a file, a thread's interrupts)
is for the layers above. See ``docs/judges.md`` (Calibration).
"""

from lg_eval.calibration._alpha import krippendorff_alpha
from lg_eval.calibration._models import (
    AlphaAgreement,
    Estimate,
    LabeledPair,
    Level,
    Rating,
    Value,
    Verdict,
    VerdictAgreement,
)
from lg_eval.calibration._verdicts import verdict_agreement

__all__ = [
    "AlphaAgreement",
    "Estimate",
    "LabeledPair",
    "Level",
    "Rating",
    "Value",
    "Verdict",
    "VerdictAgreement",
    "krippendorff_alpha",
    "verdict_agreement",
]
