"""What ``lg-eval dataset validate`` checks beyond the file's shape, and what it cannot.

A dataset can be well formed and still fail on its first run: an evaluator
name with a typo, options its factory does not take, a graph module that does
not import. :func:`check_dataset` resolves every reference the way a run does
(:class:`~lg_eval.experiments.scoring.EvaluatorResolver`,
:func:`lg_eval.play.import_reference`) and names near misses; what only a run
can tell is listed as unchecked.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rapidfuzz import fuzz, process

from lg_eval.errors import LgEvalError
from lg_eval.evaluators import available_evaluators
from lg_eval.experiments._upstream import Dataset, EvaluatorRef, import_reference
from lg_eval.experiments.scoring import EvaluatorResolver
from lg_eval.feedback import describe_error

_NEAR = 75.0  # rapidfuzz ratio from which a registered name is offered as "did you mean"
RUN_ONLY = (
    "whether each case's turns fit the graph (the interrupts it asks, the nodes pending): "
    "only a run can tell",
)


@dataclass(frozen=True)
class DatasetCheck:
    """The problems found (each names where), and what could not be checked."""

    problems: list[str] = field(default_factory=list)
    unchecked: list[str] = field(default_factory=list)


def check_dataset(dataset: Dataset) -> DatasetCheck:
    """Resolve every evaluator, graph and ``resume_fn`` reference of ``dataset``."""
    problems: list[str] = []
    resolver = EvaluatorResolver(dataset)
    names = available_evaluators()
    refs: list[tuple[str, EvaluatorRef]] = [
        (f"evaluators[{i}]", ref) for i, ref in enumerate(dataset.evaluators)
    ]
    for case in dataset.cases:
        refs += [
            (f"case {case.id!r}, evaluators[{i}]", ref)
            for i, ref in enumerate(case.evaluators or [])
        ]
    for where, ref in refs:
        if not ref.is_code_reference and ref.name not in names:
            problems.append(
                f"{where}: no evaluator is registered as {ref.name!r}{_guess(ref.name, names)}"
            )
            continue
        try:
            resolver.resolve(ref)
        except LgEvalError as exc:
            problems.append(f"{where}: {exc}")
        except Exception as exc:  # a user's factory raised while it was built
            problems.append(f"{where}: building {ref.name!r} raised {describe_error(exc)}")
    unchecked = list(RUN_ONLY)
    for where, reference in dataset.code_references():
        if "evaluators[" in where:
            continue  # resolved above
        try:
            import_reference(reference, what=where, allow_code=dataset.allows_code)
        except LgEvalError as exc:
            problems.append(str(exc))
    if dataset.graph is None and any(case.graph is None for case in dataset.cases):
        unchecked.append("the target graph: the dataset names none (it is given to lg-eval run)")
    return DatasetCheck(problems, unchecked)


def _guess(name: str, names: list[str]) -> str:
    found = process.extractOne(name, names, scorer=fuzz.ratio, score_cutoff=_NEAR)
    if found is not None:
        return f"; did you mean {found[0]!r}?"
    return f"; registered: {', '.join(names)}."


__all__ = ["DatasetCheck", "check_dataset"]
