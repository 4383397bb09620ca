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

from lg_eval.errors import InvalidOptionError, LgEvalError
from lg_eval.evaluators import available_evaluators, near_name
from lg_eval.experiments._upstream import Dataset, EvaluatorRef, import_reference
from lg_eval.experiments.references import reference_gap
from lg_eval.experiments.scoring import EvaluatorResolver
from lg_eval.feedback import describe_error

RUN_ONLY = (
    "whether each case's turns fit the graph (the interrupts it asks, the nodes pending): "
    "only a run can tell",
)


@dataclass(frozen=True)
class DatasetCheck:
    """The problems found (each names where), what could not be checked, and the
    evaluators that will give a case no verdict for want of a reference."""

    problems: list[str] = field(default_factory=list)
    unchecked: list[str] = field(default_factory=list)
    no_verdicts: list[str] = field(default_factory=list)


def check_dataset(dataset: Dataset) -> DatasetCheck:
    """Resolve every evaluator, graph and ``resume_fn`` reference of ``dataset``."""
    problems = evaluator_problems(dataset, EvaluatorResolver(dataset))
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
    errors, no_verdicts = reference_gaps(dataset)
    return DatasetCheck(problems + errors, unchecked, no_verdicts)


def reference_gaps(dataset: Dataset) -> tuple[list[str], list[str]]:
    """Per case and evaluator, a reference the evaluator needs that the case lacks (the
    rule a run applies, :func:`~lg_eval.experiments.references.reference_gap`): those that
    will be errors, and those that will give no verdict."""
    errors: list[str] = []
    no_verdicts: list[str] = []
    for case in dataset.cases:
        own = case.evaluators is not None
        refs = case.evaluators if case.evaluators is not None else dataset.evaluators
        for i, ref in enumerate(refs):
            gap = reference_gap(ref.name, ref.options, case.expected)
            if gap is None:
                continue
            field = f"evaluators[{i}]" if own else f"the dataset's evaluators[{i}]"
            where = f"case {case.id!r}, {field}"
            if gap.outcome == "error":
                errors.append(f"{where}: {gap.reason}; a run records an error")
            else:
                no_verdicts.append(f"{where}: {gap.reason}; a run gives it no verdict")
    return errors, no_verdicts


def check_evaluators(dataset: Dataset, resolver: EvaluatorResolver) -> None:
    """What a run checks before it opens anything: every evaluator the dataset names can be
    built (with ``resolver``, which keeps what it built for the run).

    Raises:
        InvalidOptionError: the first problem, worded as ``lg-eval dataset validate`` words
            it (the field, a near name) and prefixed with the dataset's file when it has one.
    """
    problems = evaluator_problems(dataset, resolver)
    if problems:
        where = f"{dataset.source}: " if dataset.source is not None else ""
        more = f" (and {len(problems) - 1} more; see lg-eval dataset validate)"
        raise InvalidOptionError(f"{where}{problems[0]}{more if len(problems) > 1 else ''}")


def evaluator_problems(dataset: Dataset, resolver: EvaluatorResolver) -> list[str]:
    """Each evaluator reference of ``dataset`` that cannot be built, named by its field."""
    problems: list[str] = []
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
    return problems


def _guess(name: str, names: list[str]) -> str:
    found = near_name(name)
    return f"; did you mean {found!r}?" if found else f"; registered: {', '.join(names)}."


__all__ = [
    "DatasetCheck",
    "check_dataset",
    "check_evaluators",
    "evaluator_problems",
    "reference_gaps",
]
