"""``krippendorff_alpha``: agreement of several raters, some of whom may not rate every case.

Krippendorff's alpha is ``1 − D_o / D_e``: the disagreement observed within each unit (a case,
or a turn of one) over the disagreement expected from all the ratings pooled. Only units
rated at least twice count. With ``n`` such ratings, a unit of ``m`` ratings adds
``Σ_{i≠j} δ(x_i, x_j)² / (m − 1)`` to ``W``, and

    alpha = 1 − (n − 1) · W / Σ_{i≠j over all ratings} δ(x_i, x_j)²

with ``δ²`` 0 or 1 (nominal: equal or not; the pooled sum is ``n² − Σ_c n_c²`` over the
categories' counts) or ``(x_i − x_j)²`` (interval; the pooled sum is ``2n·Σx² − 2(Σx)²``).
Each of these is a sum over units, so each case contributes one vector (``n``, ``W`` and the
category counts, or ``Σx`` and ``Σx²``) and a bootstrap resample of cases adds the vectors
of the cases it drew. Interval ratings are first shifted by one of their own values, which
changes no ``δ`` and keeps the sums small.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    import numpy as np


from lg_eval._arguments import Count, ModelLike, Size, validated
from lg_eval.calibration._estimates import Bootstrap, case_table, none
from lg_eval.calibration._models import AlphaAgreement, Level, Rating, Value
from lg_eval.errors import InvalidOptionError
from lg_eval.stats import CONFIDENCE, RESAMPLES, SEED, Confidence

Unit = tuple[str, int | None]


@validated
def krippendorff_alpha(
    ratings: Sequence[ModelLike[Rating]],
    *,
    level: Level = "nominal",
    confidence: Confidence = CONFIDENCE,
    resamples: Count = RESAMPLES,
    seed: Size = SEED,
) -> AlphaAgreement:
    """Krippendorff's alpha of ``ratings`` (one per rater and unit; a unit is a case, or
    one turn of it), at ``level``, with its seeded bootstrap interval over cases.

    Raises:
        InvalidOptionError: ``ratings`` is no list of :class:`Rating` (or their dicts), a
            rater rates a unit twice, an interval rating is no number, ``level`` is
            neither ``nominal`` nor ``interval``, or an option is out of range.
    """
    read = cast(Sequence[Rating], ratings)
    units = _units(read, level)
    pairable = {unit: values for unit, values in units.items() if len(values) >= 2}
    cases = [unit[0] for unit in pairable]
    result = {
        "cases": len(set(cases)),
        "confidence": confidence,
        "resamples": resamples,
        "seed": seed,
        "level": level,
        "raters": len({rating.rater for rating in read}),
        "units": len(pairable),
        "values": sum(len(values) for values in pairable.values()),
    }
    if not pairable:
        reason = "no case is rated twice: alpha needs units with at least two ratings"
        return AlphaAgreement(**result, alpha=none(reason))
    rows, statistic = (_nominal if level == "nominal" else _interval)(list(pairable.values()))
    boot = Bootstrap(case_table(cases, rows, len(rows[0])), confidence, resamples, seed)
    first = next(iter(pairable.values()))[0]
    undefined = f"every rating is {first!r}: alpha is undefined without variation"
    return AlphaAgreement(**result, alpha=boot.estimate(statistic, undefined))


def _units(ratings: Sequence[Rating], level: Level) -> dict[Unit, list[Value]]:
    """Each unit's ratings, in first-seen order; refusing a rater's second rating of a
    unit, and (interval) a rating that is no number."""
    units: dict[Unit, list[Value]] = {}
    seen: dict[tuple[str, int | None, str], int] = {}
    for index, rating in enumerate(ratings):
        key = (rating.case_id, rating.turn, rating.rater)
        if key in seen:
            raise InvalidOptionError(
                f"ratings[{index}]: {rating.rater!r} already rated case {rating.case_id!r},"
                f" turn {rating.turn} (ratings[{seen[key]}]); give one rating each."
            )
        seen[key] = index
        if level == "interval" and (isinstance(rating.value, bool | str)):
            raise InvalidOptionError(
                f"ratings[{index}].value={rating.value!r}: interval ratings are numbers;"
                " use level='nominal' for categories."
            )
        units.setdefault((rating.case_id, rating.turn), []).append(rating.value)
    return units


def _nominal(units: list[list[Value]]) -> tuple[list[list[float]], Any]:
    """Per unit ``[m, W_u, n_c...]`` and alpha of their sums."""
    import numpy as np

    categories: dict[tuple[str, object], int] = {}
    keyed = [[_category(value) for value in values] for values in units]
    for values in keyed:
        for key in values:
            categories.setdefault(key, len(categories))
    rows = []
    for values in keyed:
        counts = [0.0] * len(categories)
        for key in values:
            counts[categories[key]] += 1
        m = len(values)
        rows.append([m, (m * m - sum(c * c for c in counts)) / (m - 1), *counts])

    def alpha(sums: np.ndarray) -> np.ndarray:
        n, within = sums[:, 0], sums[:, 1]
        pooled = n * n - (sums[:, 2:] ** 2).sum(axis=1)
        return np.asarray(1 - (n - 1) * within / pooled)

    return rows, alpha


def _category(value: Value) -> tuple[str, object]:
    """A nominal rating's identity: True is not 1, and 1 is 1.0."""
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, int | float):
        return ("number", float(value))
    return ("text", value)


def _interval(units: list[list[Value]]) -> tuple[list[list[float]], Any]:
    """Per unit ``[m, W_u, Σx, Σx²]`` (x shifted by one rating) and alpha of their sums."""
    import numpy as np

    shift = float(units[0][0])
    rows = []
    for values in units:
        x = np.asarray(values, dtype=float) - shift
        m = len(x)
        within = 2 * m * float(((x - x.mean()) ** 2).sum()) / (m - 1)
        rows.append([m, within, float(x.sum()), float((x * x).sum())])

    def alpha(sums: np.ndarray) -> np.ndarray:
        n, within, total, squares = sums.T
        return np.asarray(1 - (n - 1) * within / (2 * n * squares - 2 * total * total))

    return rows, alpha
