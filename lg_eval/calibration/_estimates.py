"""The boundary and the bootstrap every agreement shares.

:func:`read_items` turns what a caller passes (models, or dicts with their fields) into
validated models, refusing bad input with an :class:`~lg_eval.errors.InvalidOptionError`
that names the item and field; :func:`checked_options` checks the bootstrap's options.
:class:`Bootstrap` holds the per-case sums of one agreement and their resamples (drawn once
by :func:`lg_eval.stats.cluster_resamples`), and makes each statistic's
:class:`~lg_eval.calibration.Estimate`: the value on all cases, its percentile interval
over the resamples, or None with the reason.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, TypeAdapter, ValidationError

if TYPE_CHECKING:
    import numpy as np

from lg_eval.arguments import checked_count, checked_sequence
from lg_eval.calibration._models import Estimate
from lg_eval.errors import InvalidOptionError
from lg_eval.stats import check_confidence, cluster_resamples, percentile_interval

M = TypeVar("M", bound=BaseModel)

Statistic = Callable[["np.ndarray"], "np.ndarray"]  # numpy imported where used
"""Rows of summed per-case vectors (shape ``(n, K)``) → one value each (NaN: undefined)."""


def read_items(items: object, model: type[M], name: str) -> list[M]:
    """``items`` as a list of ``model`` (each a ``model`` or a dict with its fields).

    Raises:
        InvalidOptionError: ``items`` is no list, or an item is no ``model``; the message
            names the item and the field (``pairs[3].judge``).
    """
    fields = ", ".join(model.model_fields)
    given = checked_sequence(items, name, f"a list of {model.__name__} (or dicts of {fields})")
    adapter: TypeAdapter[list[M]] = TypeAdapter(list[model])  # type: ignore[valid-type]
    try:
        return adapter.validate_python(list(given))
    except ValidationError as exc:
        error = exc.errors()[0]
        index, *field = error["loc"]
        where = f"{name}[{index}]" + "".join(f".{part}" for part in field[:1])
        shown = repr(error.get("input"))[:80]
        raise InvalidOptionError(
            f"{where}={shown}: {error['msg']} ({model.__name__} fields: {fields})."
        ) from None


def checked_options(confidence: float, resamples: int, seed: int) -> tuple[float, int, int]:
    """The bootstrap's options, checked: a confidence in (0, 1), resamples >= 1, seed >= 0."""
    return (
        check_confidence(confidence),
        checked_count(resamples, "resamples", 1),
        checked_count(seed, "seed", 0),
    )


class Bootstrap:
    """One agreement's per-case vectors of sums, their total and their resamples."""

    def __init__(self, cases: np.ndarray, confidence: float, resamples: int, seed: int) -> None:
        self.total = cases.sum(axis=0, keepdims=True)
        self.confidence = confidence
        self.drawn = (
            cluster_resamples(cases, resamples=resamples, seed=seed) if len(cases) else None
        )

    def estimate(self, statistic: Statistic, undefined: str) -> Estimate:
        """``statistic`` on every case with its interval over the resamples; when it is not
        defined on every case, None with ``undefined`` as the reason."""
        import numpy as np

        with np.errstate(divide="ignore", invalid="ignore"):
            value = float(statistic(self.total)[0])
            found = None if self.drawn is None else statistic(self.drawn)
        if not np.isfinite(value):
            return Estimate(value=None, reason=undefined)
        interval = None if found is None else percentile_interval(found, confidence=self.confidence)
        return Estimate(value=value, interval=interval)


def none(reason: str) -> Estimate:
    """An estimate that cannot be made, and why."""
    return Estimate(value=None, reason=reason)


def case_table(case_ids: Sequence[str], rows: Any, width: int) -> np.ndarray:
    """Per-item vectors ``rows`` (each ``width`` long) added up per case, in first-seen order."""
    import numpy as np

    index: dict[str, int] = {}
    at = np.fromiter((index.setdefault(case, len(index)) for case in case_ids), dtype=np.intp)
    table = np.zeros((len(index), width))
    if len(at):
        np.add.at(table, at, np.asarray(rows, dtype=float).reshape(len(at), width))
    return table


__all__ = ["Bootstrap", "Statistic", "case_table", "checked_options", "none", "read_items"]
