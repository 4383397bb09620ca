"""The dataset model: a named list of cases, with a default target and evaluators.

Its cases are held compactly (:class:`~lg_eval.datasets._cases.CaseList`: each as its
validated JSON, made into a :class:`~lg_eval.datasets.Case` when read), so a dataset of
20,000 cases costs a run a few MiB rather than one model tree per case.

Provenance travels with the data: ``Dataset.allows_code`` says whether the code
references inside (``graph``, ``resume_fn``, evaluator ``module:attr`` names) may be
imported. Only a dataset read from a local file gets ``True`` from the loader; the
default is ``False`` so that data built from anything remote can never run code by accident.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic_core import PydanticCustomError

from lg_eval.datasets._cases import CaseList
from lg_eval.datasets._models import CODE_REFERENCE, Case, EvaluatorRef


class Dataset(BaseModel):
    """A named set of cases, with a default target graph and default evaluators.

    ``cases`` reads like the list it was given; each case read is a fresh
    :class:`~lg_eval.datasets.Case` (equal each time). Change a dataset by making a new one
    (``dataset.model_copy(update={"cases": [...]})``), not by changing a case read from it.
    """

    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1)
    description: str | None = None
    graph: str | None = Field(
        default=None,
        pattern=CODE_REFERENCE,
        description="Default target, 'module:attr' (a compiled graph, builder or factory).",
    )
    evaluators: list[EvaluatorRef] = Field(default_factory=list)
    cases: Annotated[Sequence[Case], CaseList] = Field(default_factory=CaseList)
    source: Path | None = Field(
        default=None, exclude=True, description="The file it was loaded from, if any."
    )
    allows_code: bool = Field(
        default=False,
        exclude=True,
        description="True only for a dataset read from a local file: its code references "
        "may be imported. Never dumped, never read from a file.",
    )

    @model_validator(mode="after")
    def _check(self) -> Dataset:
        seen: dict[str, int] = {}
        for index, case_id in enumerate(self.case_ids()):
            if case_id in seen:
                raise PydanticCustomError(
                    "duplicate_case_id",
                    "duplicate case id {id} (cases[{first}] and cases[{again}])",
                    {"id": repr(case_id), "first": seen[case_id], "again": index},
                )
            seen[case_id] = index
        if not self.allows_code:
            if isinstance(self.cases, CaseList):
                self.cases = self.cases.without_code()
            else:
                for case in self.cases:
                    case._allows_code = False
        return self

    def case(self, case_id: str) -> Case:
        """The case with id ``case_id`` (``KeyError`` listing the ids when there is none)."""
        ids = self.case_ids()
        if case_id in ids:
            return self.cases[ids.index(case_id)]
        raise KeyError(f"no case {case_id!r} in dataset {self.name!r}; ids: {ids}")

    def case_ids(self) -> list[str]:
        """The case ids, in order."""
        if isinstance(self.cases, CaseList):
            return self.cases.ids
        return [case.id for case in self.cases]

    def cases_setting(self, field: str) -> Iterator[Case]:
        """The cases that set ``field`` themselves (their own ``evaluators`` or ``graph``),
        in order; the others are not made (a run's checks read only these)."""
        if isinstance(self.cases, CaseList):
            yield from self.cases.setting(field)
            return
        yield from (case for case in self.cases if field in case.model_fields_set)

    def evaluators_for(self, case: Case) -> list[EvaluatorRef]:
        """The evaluators that score ``case``: its own list, else the dataset's defaults."""
        return list(case.evaluators) if case.evaluators is not None else list(self.evaluators)

    def target_for(self, case: Case) -> str | None:
        """The target reference ``case`` is played on: its own ``graph``, else the dataset's."""
        return case.graph or self.graph

    def code_references(self) -> list[tuple[str, str]]:
        """``(where, reference)`` of every ``module:attr`` this dataset would import."""
        refs = [("graph", self.graph)] if self.graph else []
        refs += [
            (f"evaluators[{i}]", e.name)
            for i, e in enumerate(self.evaluators)
            if e.is_code_reference
        ]
        for case in self.cases:
            refs += [(f"case {case.id!r}, {where}", ref) for where, ref in case.code_references()]
        return refs
