"""What a run is asked to do, each option spelled once and validated once, where it is given.

The options are one ``TypedDict``, :class:`RunOptions` (and :class:`ExecutorOptions`, the
three that only the blocking :func:`~lg_eval.experiments.run_experiment` takes). Each item's
type states its contract and its default (``Annotated[..., Field(default=...)]``); the entry
points take the options as ``**options: Unpack[...]`` under :func:`lg_eval._arguments.validated`
(pydantic's ``validate_call``). So mypy checks a caller's keywords, and when the entry point
is called pydantic checks every value and fills in the defaults: a bad option is one
:class:`~lg_eval.errors.InvalidOptionError` naming it, before anything is opened. The body
gets a complete ``RunOptions``, which nothing below checks again or changes (the options a
Ray worker gets are a new dict). A ``TypedDict`` rather than a model passed as ``options=``:
the documented calls stay keyword calls (``run_experiment(graph, dataset, concurrency=8)``),
and one list serves the signature, the validation and the defaults alike.

What a dataset names belongs to the same boundary: :func:`check_evaluators` builds every
evaluator a run will use before it opens anything, and :func:`check_dataset` (``lg-eval
dataset validate``) resolves every reference the way a run does and names near misses.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from annotated_types import Ge, MinLen
from langgraph.checkpoint.base import BaseCheckpointSaver
from pydantic import ConfigDict, Field, PlainValidator, Strict, with_config
from pydantic_core import PydanticCustomError
from typing_extensions import TypedDict

from lg_eval._arguments import Count, FiniteFloat, Flag, Fraction, Seconds, kind
from lg_eval._feedback import describe_error
from lg_eval._importing import import_reference
from lg_eval.datasets import Dataset, EvaluatorRef
from lg_eval.errors import InvalidOptionError, LgEvalError
from lg_eval.evaluators import available_evaluators, near_name
from lg_eval.executors import Executor
from lg_eval.experiments._judges import JudgeCache
from lg_eval.experiments._results import RedactOption, make_redactor
from lg_eval.experiments._score import EvaluatorResolver, reference_gap
from lg_eval.experiments._store import ResultStore, is_store_url
from lg_eval.judges import RateLimits
from lg_eval.play import Reviewer

Progress = Callable[[int, int, int, int], None]
"""``progress(done, total, passed, failed)``, called as each case finishes (``failed``
counts every status but ``passed``; a resumed run starts from what the store holds)."""


def _redact(value: Any) -> Any:
    try:
        make_redactor(value)
    except InvalidOptionError as exc:  # "redact= takes ...", said once the name is given
        said = str(exc).removeprefix("redact= ").rstrip(".")
        raise PydanticCustomError("redact", said) from None
    return value


Text = Annotated[str, Strict(), MinLen(1)]
"""A non-empty text."""


@with_config(ConfigDict(extra="forbid"))
class RunOptions(TypedDict, total=False):
    """The options of an experiment run, with their contracts and defaults."""

    checkpointer: Annotated[
        BaseCheckpointSaver[Any] | str | None,
        kind(lambda v: v is None or isinstance(v, BaseCheckpointSaver | str), "a saver or a URL"),
        Field(default=None),
    ]
    """A saver (async-capable for :func:`~lg_eval.experiments.arun_experiment`) or a URL
    (``sqlite:///...``, ``postgresql://...``, ``memory://``); default the embedded SQLite
    file ``.lg_eval/checkpoints.sqlite``."""
    store: Annotated[
        ResultStore | str | os.PathLike[str] | None,
        kind(
            lambda v: v is None or isinstance(v, ResultStore) or is_store_url(v),
            "a ResultStore or its URL (a file path, sqlite:///file.sqlite, postgresql://...)",
        ),
        Field(default=None),
    ]
    """A :class:`ResultStore` or its URL; default ``.lg_eval/results.sqlite``."""
    run_id: Annotated[Text | None, Field(default=None)]
    """Names the run; running again with the same id resumes it (cases already stored are
    not run again). Default: ``<dataset>-<UTC time>-<random>``."""
    concurrency: Annotated[Count, Field(default=4)]
    """Cases played at once."""
    repetitions: Annotated[Count, Field(default=1)]
    """Runs of each case (pass@k, pass^k)."""
    timeout: Annotated[Seconds | None, Field(default=None)]
    """Seconds per case (all its attempts) before it is cancelled (status ``timeout``)."""
    retries: Annotated[int, Strict(), Ge(0), Field(default=1)]
    """Extra attempts after an infrastructure error (never after a low score)."""
    thresholds: Annotated[Mapping[str, FiniteFloat] | None, Field(default=None)]
    """``{feedback key or evaluator name: minimum}`` for numeric scores (default 1.0); a bool
    score passes when True."""
    fail_under: Annotated[Fraction | None, Field(default=None)]
    """The pass rate below which :attr:`ExperimentRun.gate_failed` is True."""
    require_verdict: Annotated[Flag, Field(default=False)]
    """Fail a case when any of its evaluators gives no verdict (a ``None`` score); by
    default a no-verdict never fails a case that has a passing verdict."""
    judge_cache: Annotated[
        bool | str | os.PathLike[str] | JudgeCache,
        kind(
            lambda v: isinstance(v, bool | str | os.PathLike | JudgeCache),
            "True, False, a path or a JudgeCache",
        ),
        Field(default=True),
    ]
    """Cache judge answers: True (``.lg_eval/judge_cache.sqlite``), a path, a
    :class:`JudgeCache`, or False (call the models every time)."""
    progress: Annotated[Progress | None, Field(default=None)]
    """``progress(done, total, passed, failed)`` after each case."""
    redact: Annotated[RedactOption, PlainValidator(_redact), Field(default=None)]
    """A ``str -> str`` function or regex patterns, applied to every string taken from a
    thread before it is stored."""
    langsmith: Annotated[Flag, Field(default=False)]
    """Let the graph's and the judges' runs be traced to LangSmith as the environment says;
    by default the run sends nothing (:func:`lg_eval.langsmith.offline`)."""
    reviewer: Annotated[Reviewer | None, Field(default=None)]
    """Answers turns written ``resume: {reviewer: true}``, e.g. a
    :class:`~lg_eval.play.SimulatedReviewer`."""
    judge_limits: Annotated[RateLimits | None, Field(default=None)]
    """The judge provider's limits (:class:`~lg_eval.judges.RateLimits` or its dict), held
    for the whole run, across every worker with ``executor="ray"``; cache hits spend none.
    Its ``max_concurrent`` is then the one cap on judge calls in flight."""


def _executor(value: Any) -> bool:
    return (
        value is None
        or value in ("local", "ray")
        or callable(getattr(value, "map_partitions", None))
    )


@with_config(ConfigDict(extra="forbid"))
class ExecutorOptions(RunOptions, total=False):
    """:class:`RunOptions` and where the cases are played (``run_experiment`` only)."""

    executor: Annotated[
        str | Executor | None,
        kind(_executor, "'local', 'ray' or an executor object (with map_partitions)"),
        Field(default="local"),
    ]
    """``"local"`` (this process), ``"ray"`` or an executor object: cases cut into partitions
    of ``partition_size`` played by workers and stored here (target and checkpointer as
    names)."""
    ray_address: Annotated[Text | None, Field(default=None)]
    """With ``executor="ray"``: the cluster (default a local Ray)."""
    partition_size: Annotated[Count | None, Field(default=None)]
    """With another executor: cases per task (default ``2 * concurrency``)."""


DatasetLike = Annotated[
    Dataset | str | Path,
    kind(lambda v: isinstance(v, Dataset | str | os.PathLike), "a Dataset or a dataset file"),
]
"""A :class:`~lg_eval.datasets.Dataset`, or the path of a dataset file."""


# --------------------------------------------------------------------------- what a dataset names


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
    rule a run applies, :func:`~lg_eval.experiments.reference_gap`): those that
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
    for case in dataset.cases_setting("evaluators"):
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
