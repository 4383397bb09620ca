"""``verdict_agreement``: an evaluator's verdicts against a person's labels.

The pairs make a confusion matrix (rows: the person's label, columns: the judge's). Every
statistic is a function of that matrix, so each case contributes its own matrix (its turns
added up) and a bootstrap resample is the sum of the matrices of the cases it drew:

* agreement ``trace / N``;
* with a positive verdict, ``tpr = TP / (TP + FN)``, ``tnr = TN / (TN + FP)`` and
  ``precision = TP / (TP + FP)`` (one verdict against the rest when there are more);
* Cohen's kappa ``(N·trace − Σ rᵢcᵢ) / (N² − Σ rᵢcᵢ)`` (rows ``r``, columns ``c``),
  ``sklearn.metrics.cohen_kappa_score`` written in counts;
* Krippendorff's alpha, nominal, for two raters: ``1 − (n − 1)·2(N − trace) / (n² − Σ nᵢ²)``
  with ``n = 2N`` values and ``nᵢ = rᵢ + cᵢ`` of each verdict.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    import numpy as np


from lg_eval._arguments import Count, ModelLike, Size, validated
from lg_eval.calibration._estimates import Bootstrap, case_table, none
from lg_eval.calibration._models import Estimate, LabeledPair, Verdict, VerdictAgreement
from lg_eval.errors import InvalidOptionError
from lg_eval.stats import CONFIDENCE, RESAMPLES, SEED, Confidence


@validated
def verdict_agreement(
    pairs: Sequence[ModelLike[LabeledPair]],
    *,
    positive: Verdict | None = None,
    confidence: Confidence = CONFIDENCE,
    resamples: Count = RESAMPLES,
    seed: Size = SEED,
) -> VerdictAgreement:
    """How the judge's verdicts in ``pairs`` agree with the person's labels, each number
    with its seeded bootstrap interval over cases (a case's turns resampled together).

    ``positive``: the verdict the rates count as positive; None: ``True`` when the
    verdicts are booleans (for text verdicts, tpr, tnr and precision then say why they are
    None). No pairs give every number None with the reason.

    Raises:
        InvalidOptionError: ``pairs`` is no list of :class:`LabeledPair` (or their dicts), a
            (case, turn) appears twice, the verdicts mix booleans and text, ``positive`` is
            of the other kind, or an option is out of range.
    """
    import numpy as np

    level = confidence
    read = cast(Sequence[LabeledPair], pairs)
    _check_keys(read)
    labels = _labels(read)
    positive = _positive(positive, labels)
    if positive is not None and positive not in labels:  # a verdict no one gave: zeros
        labels = sorted([*labels, positive])
    k = len(labels)
    at = {label: i for i, label in enumerate(labels)}
    cells = np.zeros((len(read), k * k))
    cells[np.arange(len(read)), [at[p.human] * k + at[p.judge] for p in read]] = 1.0
    table = case_table([p.case_id for p in read], cells, k * k)
    counts = table.sum(axis=0).reshape(k, k).astype(int)
    boot = Bootstrap(table, level, resamples, seed)
    p = None if positive is None else at[positive]
    estimates = _estimates(boot, k, p, repr(positive), read)
    return VerdictAgreement(
        cases=len(table),
        confidence=level,
        resamples=resamples,
        seed=seed,
        pairs=len(read),
        labels=labels,
        confusion=counts.tolist(),
        positive=positive,
        **({} if p is None else _cells(counts, p)),
        **estimates,
    )


def _check_keys(pairs: Sequence[LabeledPair]) -> None:
    seen: dict[tuple[str, int | None], int] = {}
    for index, pair in enumerate(pairs):
        key = (pair.case_id, pair.turn)
        if key in seen:
            raise InvalidOptionError(
                f"pairs[{index}]: case {pair.case_id!r}, turn {pair.turn} is already "
                f"pairs[{seen[key]}]; give each (case, turn) one pair."
            )
        seen[key] = index


def _labels(pairs: Sequence[LabeledPair]) -> list[Verdict]:
    """The verdicts seen, sorted; refusing a mix of booleans and text."""
    kinds: dict[type, tuple[int, str]] = {}
    for index, pair in enumerate(pairs):
        for side in ("human", "judge"):
            kinds.setdefault(type(getattr(pair, side)), (index, side))
    if len(kinds) > 1:
        index, side = kinds[str]
        raise InvalidOptionError(
            f"pairs[{index}].{side}={getattr(pairs[index], side)!r}: every verdict must be a "
            "bool (pass/fail) or every verdict text (categories), not both."
        )
    found = {label for pair in pairs for label in (pair.human, pair.judge)}
    return sorted(found)


def _positive(positive: object, labels: list[Verdict]) -> Verdict | None:
    if positive is None:
        return True if labels and isinstance(labels[0], bool) else None
    if labels and type(positive) is not type(labels[0]):
        raise InvalidOptionError(
            f"positive={positive!r}: the verdicts are {type(labels[0]).__name__}s; use one."
        )
    if not isinstance(positive, bool | str):
        raise InvalidOptionError(f"positive={positive!r:.80}: use a bool or a text verdict.")
    return positive


def _cells(counts: np.ndarray, p: int) -> dict[str, int]:
    """The confusion of verdict ``p`` against the rest."""
    tp = int(counts[p, p])
    fn, fp = int(counts[p].sum()) - tp, int(counts[:, p].sum()) - tp
    return {
        "true_positive": tp,
        "false_positive": fp,
        "false_negative": fn,
        "true_negative": int(counts.sum()) - tp - fp - fn,
    }


def _estimates(
    boot: Bootstrap, k: int, p: int | None, positive: str, pairs: Sequence[LabeledPair]
) -> dict[str, Estimate]:
    """Each statistic of the per-case confusion matrices (``p``: the positive verdict's
    index; ``positive`` it shown)."""
    import numpy as np

    names = ("agreement", "tpr", "tnr", "precision", "kappa", "alpha")
    if not pairs:
        return {name: none("no labelled pairs") for name in names}
    only = f"every verdict is {pairs[0].human!r}"

    def matrix(sums: np.ndarray) -> Any:
        return sums.reshape(len(sums), k, k)

    def trace(sums: np.ndarray) -> Any:
        return np.trace(matrix(sums), axis1=1, axis2=2)

    def rows(sums: np.ndarray) -> Any:  # the person's labels
        return matrix(sums).sum(axis=2)

    def cols(sums: np.ndarray) -> Any:  # the judge's verdicts
        return matrix(sums).sum(axis=1)

    def kappa(sums: np.ndarray) -> Any:
        n, chance = sums.sum(axis=1), (rows(sums) * cols(sums)).sum(axis=1)
        return (n * trace(sums) - chance) / (n * n - chance)

    def alpha(sums: np.ndarray) -> Any:
        n = 2 * sums.sum(axis=1)
        spread = n * n - ((rows(sums) + cols(sums)) ** 2).sum(axis=1)
        return 1 - (n - 1) * (n - 2 * trace(sums)) / spread

    found = {
        "agreement": boot.estimate(lambda s: trace(s) / s.sum(axis=1), "no labelled pairs"),
        "kappa": boot.estimate(
            kappa, f"{only} on both sides: kappa is undefined when chance agreement is certain"
        ),
        "alpha": boot.estimate(alpha, f"{only}: alpha is undefined without variation"),
    }
    if p is None:
        reason = "no positive verdict: give positive= (one of the labels)"
        return found | {name: none(reason) for name in ("tpr", "tnr", "precision")}

    def tp(sums: np.ndarray) -> Any:
        return matrix(sums)[:, p, p]

    def tn(sums: np.ndarray) -> Any:
        return sums.sum(axis=1) - rows(sums)[:, p] - cols(sums)[:, p] + tp(sums)

    return found | {
        "tpr": boot.estimate(
            lambda s: tp(s) / rows(s)[:, p], f"the person never labelled {positive}"
        ),
        "tnr": boot.estimate(
            lambda s: tn(s) / (s.sum(axis=1) - rows(s)[:, p]),
            f"the person labelled every pair {positive}",
        ),
        "precision": boot.estimate(
            lambda s: tp(s) / cols(s)[:, p], f"the judge never said {positive}"
        ),
    }
