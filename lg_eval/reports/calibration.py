"""The report's calibration: how far people agree with each judge whose score it shows.

:func:`with_calibration` adds to a report the :class:`~lg_eval.labels.Calibration` of each
of its feedback keys that people have labelled in the store (every label of the key, over
every run: the judge's record, not this run's); each rendering then shows, beside the key's
score, its kappa and the labels behind it (:func:`agreement_text`), and a section with the
agreement and the disagreements, the judge's reasoning beside the person's
(:func:`shown_disagreements`, the first :data:`SHOWN` of each key).
"""

from __future__ import annotations

from lg_eval.experiments import ResultStore
from lg_eval.labels import Calibration, Disagreement, calibrate, labelled_keys
from lg_eval.reports.model import Report

SHOWN = 10
"""Disagreements a report lists per key (the JSON report holds every one)."""


def with_calibration(report: Report, store: ResultStore) -> Report:
    """``report`` with the calibration of each of its keys labelled in ``store``."""
    labelled = labelled_keys(store)
    found = [calibrate(store, e.key) for e in report.evaluators if e.key in labelled]
    return report.model_copy(update={"calibration": found})


def calibration_of(report: Report, key: str) -> Calibration | None:
    """The calibration of ``key`` in ``report`` (None: not labelled)."""
    return next((c for c in report.calibration if c.key == key), None)


def agreement_text(report: Report, key: str) -> str:
    """``κ 0.72 [0.55, 0.84] on 120 labelled cases`` for a labelled key, else ``–``."""
    found = calibration_of(report, key)
    return "–" if found is None else found.summary()


def shown_disagreements(calibration: Calibration) -> list[Disagreement]:
    """The disagreements a rendering lists (the first :data:`SHOWN`)."""
    return calibration.disagreements[:SHOWN]


def verdict_word(verdict: bool) -> str:
    """``pass`` or ``fail``."""
    return "pass" if verdict else "fail"


__all__ = [
    "SHOWN",
    "agreement_text",
    "calibration_of",
    "shown_disagreements",
    "verdict_word",
    "with_calibration",
]
