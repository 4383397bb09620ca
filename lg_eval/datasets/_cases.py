"""A dataset's cases held compactly: each as the JSON it was validated into, a
:class:`~lg_eval.datasets.Case` made again whenever one is read.

A validated case is a tree of pydantic models (turns, expectations, the trajectory it
expects), about 3.6 KiB for the smallest; its JSON without the defaults is a tenth of that.
A run reads each case once, when a worker takes it, so a 20,000-case dataset need not
hold 20,000 trees for the whole run. Each case is validated once where it enters, then
kept as its JSON only if that JSON validates back to an equal case; a case whose values
JSON cannot carry exactly (a tuple, a date, a message object given in Python) is kept as
the model it is.

Read a case and you get a fresh :class:`~lg_eval.datasets.Case` (equal each time, not
the same object): a dataset is changed by building a new one (``dataset.model_copy(
update={"cases": [...]})``), not by changing a case read from it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any, overload

from pydantic import GetCoreSchemaHandler
from pydantic_core import core_schema

from lg_eval.datasets._models import Case

Item = bytes | Case
"""A case as held: its JSON (without defaults), or the case itself."""
Entry = tuple[str, Item]
"""A case's id and the case as held."""


def compact(case: Case) -> Entry:
    """``case``'s id, and the case as its JSON when that validates back to the same case
    (equal, its values of the same types), else the case itself."""
    try:
        data = case.__pydantic_serializer__.to_json(case, by_alias=True, exclude_unset=True)
        again = Case.model_validate_json(data)
    except ValueError:  # a value JSON cannot write or read back (ValidationError is one)
        return case.id, case
    # equal, and of the same types: an enum member equals its value, which is all JSON keeps
    # of it; their reprs differ
    same = again == case and repr(again) == repr(case)
    # a copy of the id: the string it was given lies among the objects of the data it came
    # in (a file's rows, a list of dicts), whose memory the allocator could not give back
    # while a string in it lives
    return case.id.encode().decode(), data if same else case


class CaseList(Sequence[Case]):
    """The cases of a dataset, in order, each read as a fresh :class:`Case`.

    Made only from validated cases (:func:`compact`); ``allows_code`` False marks every case
    read from it as not allowed to import code (the dataset's provenance)."""

    __slots__ = ("_allows_code", "_ids", "_items")

    def __init__(self, entries: Iterable[Entry] = (), *, allows_code: bool = True) -> None:
        self._ids: list[str] = []
        self._items: list[Item] = []
        for case_id, item in entries:
            self._ids.append(case_id)
            self._items.append(item)
        self._allows_code = allows_code

    def without_code(self) -> CaseList:
        """The same cases, each read as not allowed to import code."""
        held = CaseList.__new__(CaseList)
        held._items, held._ids, held._allows_code = self._items, self._ids, False
        return held

    @property
    def ids(self) -> list[str]:
        """The case ids, in order (read without making the cases)."""
        return list(self._ids)

    def __len__(self) -> int:
        return len(self._items)

    @overload
    def __getitem__(self, index: int) -> Case: ...
    @overload
    def __getitem__(self, index: slice) -> list[Case]: ...
    def __getitem__(self, index: int | slice) -> Case | list[Case]:
        if isinstance(index, slice):
            return [self._read(item) for item in self._items[index]]
        return self._read(self._items[index])

    def __iter__(self) -> Iterator[Case]:
        for item in self._items:
            yield self._read(item)

    def setting(self, field: str) -> Iterator[Case]:
        """The cases that set ``field`` themselves, in order, made without making the others:
        a case held as JSON names only the fields it was given, so one whose JSON lacks the
        key is skipped unread (one that has it, or a text that merely contains it, is read
        and checked)."""
        key = f'"{field}":'.encode()
        for item in self._items:
            if isinstance(item, bytes) and key not in item:
                continue
            case = self._read(item)
            if field in case.model_fields_set:
                yield case

    def __eq__(self, other: object) -> bool:
        if isinstance(other, CaseList) and other._items == self._items:
            return self._allows_code == other._allows_code
        if not isinstance(other, Sequence) or isinstance(other, str | bytes):
            return NotImplemented
        return len(other) == len(self) and all(a == b for a, b in zip(self, other, strict=True))

    def __repr__(self) -> str:
        return repr(list(self))

    def _read(self, item: Item) -> Case:
        case = Case.model_validate_json(item) if isinstance(item, bytes) else item
        if not self._allows_code:
            case._allows_code = False
        return case

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        case = handler.generate_schema(Case)
        cases = core_schema.list_schema(core_schema.no_info_after_validator_function(compact, case))

        def validate(value: Any, validate_list: core_schema.ValidatorFunctionWrapHandler) -> Any:
            if isinstance(value, CaseList):
                return value
            return CaseList(validate_list(value))

        return core_schema.no_info_wrap_validator_function(
            validate,
            cases,
            serialization=core_schema.plain_serializer_function_ser_schema(
                list, return_schema=core_schema.list_schema(case)
            ),
        )
