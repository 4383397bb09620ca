"""``calibrate``: how far a key's verdicts in the store agree with the people's labels.

The pairs (:func:`~lg_eval.labels._pairs.paired_labels`) go to
:func:`lg_eval.calibration.verdict_agreement`: the confusion matrix, TPR, TNR, precision,
Cohen's kappa and Krippendorff's alpha, each with its bootstrap interval over cases; where
both sides also gave numbers (a continuous judge, a person's score), their interval alpha
(:func:`lg_eval.calibration.krippendorff_alpha`). The result, a :class:`Calibration`, lists
every disagreement with both sides' reasoning: the judge's comment and the person's note.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from lg_eval._arguments import Fraction, validated
from lg_eval._feedback import ScoreValue
from lg_eval.calibration import (
    AlphaAgreement,
    Rating,
    VerdictAgreement,
    krippendorff_alpha,
    verdict_agreement,
)
from lg_eval.experiments import ResultStore
from lg_eval.labels._models import Split
from lg_eval.labels._pairs import PairedLabel, paired_labels
from lg_eval.labels._split import EXAMPLES_FRACTION
from lg_eval.stats import CONFIDENCE, RESAMPLES, SEED


class Disagreement(BaseModel):
    """A case the key and a person judged differently, with both sides' reasons."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    run_id: str
    case_id: str
    repetition: int = 0
    thread_id: str | None = None
    judge: bool = Field(description="The key's verdict.")
    judge_score: ScoreValue = None
    judge_comment: str | None = Field(default=None, description="The judge's reasoning.")
    human: bool = Field(description="The person's verdict.")
    note: str | None = Field(default=None, description="The person's reasoning.")
    labelers: list[str]
    sources: list[str]


class Calibration(BaseModel):
    """A key's agreement with the people's labels, read from a results store."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    key: str = Field(description="The evaluator's feedback key.")
    label_key: str = Field(description="The labels' key (the same, unless told otherwise).")
    runs: list[str] | None = Field(description="The runs whose verdicts count (None: any).")
    split: Split
    labels: int = Field(description="Labels of label_key read (on the split's side).")
    unpaired: int = Field(description="Labelled cases without a verdict of the key to pair.")
    agreement: VerdictAgreement
    scores: AlphaAgreement | None = Field(
        default=None,
        description="Interval alpha of the judge's and the people's numbers, where both gave "
        "one (None: no case has both).",
    )
    disagreements: list[Disagreement]

    @property
    def kappa(self) -> float | None:
        """Cohen's kappa (None: undefined, or no pair)."""
        return self.agreement.kappa.value

    def summary(self) -> str:
        """One line: kappa, its interval and the labels behind it."""
        kappa = self.agreement.kappa
        pairs = self.agreement.pairs
        if kappa.value is None:
            return f"κ – on {pairs} labelled case{'s' * (pairs != 1)} ({kappa.reason})"
        shown = f"κ {kappa.value:.2f}"
        if kappa.interval is not None:
            shown += f" [{kappa.interval.low:.2f}, {kappa.interval.high:.2f}]"
        return f"{shown} on {pairs} labelled case{'s' * (pairs != 1)}"


@validated
def calibrate(
    store: ResultStore,
    key: str,
    *,
    label_key: str | None = None,
    runs: Sequence[str] | None = None,
    split: Split = "all",
    fraction: Fraction = EXAMPLES_FRACTION,
    salt: str = "",
    confidence: float = CONFIDENCE,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> Calibration:
    """The agreement of ``key``'s verdicts in ``store`` with the labels of ``label_key``
    (default ``key``), each number with its bootstrap interval over cases.

    ``runs``: only these runs' verdicts count (a label of another run pairs through its
    thread, if one of them scored it). ``split``: ``held_out`` measures only the cases a
    judge's few-shot examples can never come from (:func:`~lg_eval.labels.label_split` with
    the same ``fraction`` and ``salt`` as :func:`~lg_eval.labels.correction_examples`),
    ``examples`` only the others.

    Raises:
        InvalidOptionError: an option is out of range.
        StoreError: a stored label or feedback row does not read.
    """
    pairing = paired_labels(
        store, key, label_key=label_key, runs=runs, split=split, fraction=fraction, salt=salt
    )
    units: dict[str, int] = {}
    pairs = []
    for paired in pairing.pairs:  # a case labelled in several runs: one unit each
        turn = units[paired.case] = units.get(paired.case, -1) + 1
        pairs.append(
            {"case_id": paired.case, "turn": turn, "judge": paired.judge, "human": paired.human}
        )
    return Calibration(
        key=key,
        label_key=label_key or key,
        runs=None if runs is None else list(runs),
        split=split,
        labels=pairing.labels,
        unpaired=pairing.unpaired,
        agreement=verdict_agreement(pairs, confidence=confidence, resamples=resamples, seed=seed),
        scores=_scores(pairing.pairs, confidence, resamples, seed),
        disagreements=[
            _disagreement(paired) for paired in pairing.pairs if paired.judge != paired.human
        ],
    )


def _scores(
    pairs: Sequence[PairedLabel], confidence: float, resamples: int, seed: int
) -> AlphaAgreement | None:
    """Interval alpha of the cases where the judge and the person both gave a number."""
    ratings: list[Rating] = []
    units: dict[str, int] = {}
    for paired in pairs:
        if paired.human_score is None:
            continue
        score = paired.feedback.score
        if isinstance(score, bool) or not isinstance(score, int | float):
            continue
        turn = units[paired.case] = units.get(paired.case, -1) + 1
        for rater, value in (("judge", float(score)), ("human", paired.human_score)):
            ratings.append(Rating(case_id=paired.case, turn=turn, rater=rater, value=value))
    if not ratings:
        return None
    return krippendorff_alpha(
        ratings, level="interval", confidence=confidence, resamples=resamples, seed=seed
    )


def _disagreement(paired: PairedLabel) -> Disagreement:
    return Disagreement(
        run_id=paired.run_id,
        case_id=paired.case_id,
        repetition=paired.repetition,
        thread_id=paired.thread_id,
        judge=paired.judge,
        judge_score=paired.feedback.score,
        judge_comment=paired.feedback.comment,
        human=paired.human,
        note=paired.note,
        labelers=list(paired.labelers),
        sources=list(paired.sources),
    )
