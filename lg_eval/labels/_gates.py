"""Gates that trust a judge only as far as people agree with it (``--min-judge-kappa``).

A gate on a judge's score means something only if the judge agrees with the people whose
call it stands in for. :func:`judge_gate_problems` calibrates each named key on every label
of it in the store (:func:`~lg_eval.labels.calibrate`) and says, per key, why the gate
cannot trust it: no label pairs with its verdicts (it was never calibrated), kappa cannot
be computed on its labels, or kappa is below the minimum. Kappa is compared as measured;
its interval is shown beside it.
"""

from __future__ import annotations

from collections.abc import Mapping

from lg_eval.experiments import ResultStore
from lg_eval.labels._calibrate import Calibration, calibrate


def judge_gate_problems(
    store: ResultStore, minimums: Mapping[str, float]
) -> tuple[dict[str, Calibration], list[str]]:
    """Each key's calibration, and one message per key whose kappa is missing or below its
    minimum in ``minimums`` (``{key: minimum kappa}``); no message: every key may gate."""
    found: dict[str, Calibration] = {}
    problems: list[str] = []
    for key, minimum in minimums.items():
        calibration = found[key] = calibrate(store, key)
        pairs = calibration.agreement.pairs
        kappa = calibration.agreement.kappa
        if pairs == 0:
            problems.append(
                f"judge {key!r} has not been calibrated: no label of {key!r} in {store.url} "
                f"pairs with its verdicts ({calibration.labels} labels, "
                f"{calibration.unpaired} without a verdict to pair). Label its cases in "
                f"lg-eval view or import labels (lg-eval labels import), then check "
                f"lg-eval calibrate {key}."
            )
        elif kappa.value is None:
            problems.append(
                f"judge {key!r} cannot be trusted yet: kappa is undefined on its {pairs} "
                f"labelled cases ({kappa.reason}); label cases of both kinds."
            )
        elif kappa.value < minimum:
            problems.append(
                f"judge {key!r} agrees with people at {calibration.summary()}, below "
                f"--min-judge-kappa {key}={minimum:g}."
            )
    return found, problems
