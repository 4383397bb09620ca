"""Read and write dataset files (YAML or JSONL) with errors that point at the mistake, within
bounds checked before anything is built (:mod:`lg_eval.datasets._bounds`).

YAML goes through PyYAML's *safe* loader only (:mod:`lg_eval.datasets._yaml`), its cases
taken one by one as they are composed. JSONL holds one case per line, after an optional
header line ``{"dataset": {"name": ..., "graph": ..., "evaluators": [...]}}``. Either way
each case is validated and held compactly (:class:`~lg_eval.datasets._cases.CaseList`)
as it is read, so a file of 20,000 cases never holds 20,000 case models, nor (YAML) their
20,000 node trees.

Every problem is a :class:`~lg_eval.errors.DatasetError` whose message reads
``<file>:<line>: case '<id>', <field path>: <what is wrong>`` (the line when it
is known), so a person can jump straight to it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import SkipValidation, ValidationError
from pydantic_core import ErrorDetails

from lg_eval._arguments import FilePath, Flag, validated
from lg_eval._files import write_atomic
from lg_eval._visible import data_escaped, has_data_escaped
from lg_eval.datasets._bounds import YamlBounds, check_data, check_size, node_line
from lg_eval.datasets._cases import CaseList, Entry, compact
from lg_eval.datasets._dataset import Dataset
from lg_eval.datasets._models import Case
from lg_eval.datasets._yaml import CasesLoader, Lines, line_at, read_yaml
from lg_eval.errors import DatasetError

YAML_SUFFIXES = (".yaml", ".yml")
JSONL_SUFFIXES = (".jsonl",)
_PROVENANCE = ("source", "allows_code")
_MAX_ERRORS = 10
_BEFORE_CASES = frozenset(list(Dataset.model_fields)[: list(Dataset.model_fields).index("cases")])
"""The dataset's fields before ``cases``: their errors are listed before the cases'."""


@validated
def load_dataset(path: FilePath) -> Dataset:
    """Load a dataset file: ``.yaml`` / ``.yml`` / ``.json`` (one document) or ``.jsonl``.

    The dataset is marked ``allows_code=True`` (it comes from a local file, which
    is as trusted as the code next to it) and ``source=path``. A dataset without
    a ``name`` is named after the file.

    Raises:
        InvalidOptionError: ``path`` is no text or path.
        DatasetError: the file cannot be read, or its data is no valid dataset (the
            message names the file, the case and the field).
    """
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise DatasetError(
            f"{path}: cannot read the dataset file ({exc.strerror or exc})."
        ) from None
    text = _decoded(path, raw)
    suffix = path.suffix.lower()
    if suffix in JSONL_SUFFIXES:
        return _load_jsonl(path, text)
    if suffix in YAML_SUFFIXES or suffix == ".json":
        return _load_yaml(path, text)
    raise DatasetError(
        f"{path}: unknown dataset format {suffix or '(no suffix)'!r}; use .yaml, .yml, .json or "
        ".jsonl."
    )


def _decoded(path: Path, raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise DatasetError(
            f"{path}:{line}: the file is not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset "
            f"{exc.start}); save it as UTF-8."
        ) from None


@validated
def dataset_from_dict(
    data: SkipValidation[Mapping[str, Any]],
    *,
    source: Path | None = None,
    allows_code: Flag = False,
) -> Dataset:
    """Build a dataset from plain data (say, pulled from a remote store).

    ``allows_code`` is ``False`` unless the caller says otherwise, and the data
    itself cannot set it: a ``source`` or ``allows_code`` key is refused.
    """
    where = str(source) if source else "<data>"
    if not isinstance(data, Mapping):
        raise DatasetError(f"{where}: a dataset is a mapping (name, cases, ...), not {data!r:.80}.")
    check_data(where, data)
    return _validate_dataset(where, dict(data), None, source=source, allows_code=allows_code)


def _load_yaml(path: Path, text: str) -> Dataset:
    where = str(path)
    bounds = YamlBounds(where)
    cases = _YamlCases(where, bounds)
    data, nodes, cases_node = read_yaml(path, text, bounds, cases)
    if not isinstance(data, dict):
        raise DatasetError(
            f"{path}: a dataset file is a mapping with name, cases and optionally graph and "
            f"evaluators (got {type(data).__name__})."
        )
    data = dict(data)
    data.setdefault("name", path.stem)
    streamed = cases if cases_node is not None and cases_node is cases.node else None
    return _validate_dataset(where, data, nodes, source=path, allows_code=True, streamed=streamed)


class _YamlCases:
    """A YAML document's cases, taken one by one as they are composed
    (:class:`~lg_eval.datasets._yaml.CasesLoader`): each checked within the document's
    bounds, built, validated and held compactly, its node tree then dropped. Validation
    errors are kept as lines (the first :data:`_MAX_ERRORS`, the rest counted), so a file
    with many bad cases is told as the whole document's validation would tell it."""

    def __init__(self, where: str, bounds: YamlBounds) -> None:
        self.where = where
        self.bounds = bounds
        self.node: yaml.Node | None = None
        self._begin()

    def _begin(self) -> None:
        self.entries: list[Entry] = []
        self.errors: list[str] = []
        self.failed = 0
        self._first: dict[str, int] = {}  # the line each case id was first used at
        self._size = self._weight = self._height = 0

    def take(self, loader: CasesLoader, case: yaml.Node, index: int, cases: yaml.Node) -> None:
        """Check, build and validate item ``index`` of the ``cases`` list ``cases``."""
        if cases is not self.node:  # a second cases key: the last one counts, as in a mapping
            self.node = cases
            self._begin()
        size, weight, height = self.bounds.check(case, depth=3)  # root, cases, this case
        self._size, self._weight = self._size + size, self._weight + weight
        self._height = max(self._height, height)
        check_size(
            f"{self.where}:{node_line(cases)}", 1 + self._size, self._weight, "aliases (*name)"
        )
        self.bounds.checked(cases, 1 + self._size, self._weight, 1 + self._height)
        data = loader.construct_document(case)
        self.bounds.forget(loader.anchors.values())
        case_id = data.get("id") if isinstance(data, dict) else None
        if isinstance(case_id, str):
            if case_id in self._first:
                raise DatasetError(
                    f"{self.where}{line_at(case, ('id',))}: case {case_id!r}: duplicate case id "
                    f"(first used at line {self._first[case_id]}); case ids must be unique."
                )
            self._first[case_id] = node_line(case)
        try:
            self.entries.append(compact(Case.model_validate(data)))
        except ValidationError as exc:
            errors = exc.errors()
            shown = errors[: _MAX_ERRORS - len(self.errors)]
            found = {"cases": {index: data}}
            self.errors += [_line_of(self.where, e, found, case, "cases", index) for e in shown]
            self.failed += len(errors)


def _validate_dataset(
    where: str,
    data: dict[str, Any],
    nodes: Lines,
    *,
    source: Path | None,
    allows_code: bool,
    streamed: _YamlCases | None = None,
) -> Dataset:
    for key in _PROVENANCE:
        if key in data:
            raise DatasetError(
                f"{where}{line_at(nodes, (key,))}: {key!r} cannot be written in a dataset: "
                "lg_eval sets it from where the dataset was loaded."
            )
    if streamed is not None:
        data = {**data, "cases": CaseList(streamed.entries)}
    cases = data.get("cases")
    if isinstance(cases, list):
        _check_unique_ids(where, cases, nodes)
    try:
        dataset = Dataset.model_validate({**data, "source": source, "allows_code": allows_code})
    except ValidationError as exc:
        errors = exc.errors()
    else:
        if streamed is None or not streamed.failed:
            return dataset
        errors = []
    lines = [_line_of(where, e, data, nodes) for e in errors if e["loc"][0] in _BEFORE_CASES]
    if streamed is not None:
        lines += streamed.errors
    lines += [_line_of(where, e, data, nodes) for e in errors if e["loc"][0] not in _BEFORE_CASES]
    raise DatasetError(_joined(lines, len(errors) + (streamed.failed if streamed else 0)))


def _check_unique_ids(where: str, cases: list[Any], nodes: Lines) -> None:
    first: dict[str, int] = {}
    for index, case in enumerate(cases):
        case_id = case.get("id") if isinstance(case, dict) else None
        if not isinstance(case_id, str):
            continue
        if case_id in first:
            earlier = line_at(nodes, ("cases", first[case_id]))
            seen = f"line {earlier[1:]}" if earlier else f"cases[{first[case_id]}]"
            at = line_at(nodes, ("cases", index, "id"))
            raise DatasetError(
                f"{where}{at}: case {case_id!r}: duplicate case id (first used at {seen}); case "
                "ids must be unique."
            )
        first[case_id] = index


def _load_jsonl(path: Path, text: str) -> Dataset:
    header: dict[str, Any] = {}
    cases: list[Entry] = []  # each held compactly as it is read: never every case at once
    first_line: dict[str, int] = {}
    header_line = 0
    for number, raw in enumerate(text.split("\n"), start=1):  # only \n ends a JSON line
        if not raw.strip():
            continue
        try:
            row = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise DatasetError(
                f"{path}:{number}: not valid JSON: {exc.msg} column {exc.colno}"
                + (
                    " (a control character must be written as an escape, \\u001b)."
                    if "control" in exc.msg
                    else "."
                )
            ) from None
        except RecursionError:
            raise DatasetError(
                f"{path}:{number}: objects and arrays nest too deeply to read; a dataset is "
                "refused beyond that."
            ) from None
        check_data(f"{path}:{number}", row)
        if not isinstance(row, dict):
            raise DatasetError(
                f"{path}:{number}: each line is a JSON object, a case (got {type(row).__name__})."
            )
        if "dataset" in row and not cases and not header_line:
            if set(row) != {"dataset"} or not isinstance(row["dataset"], dict):
                raise DatasetError(
                    f'{path}:{number}: the header line is {{"dataset": {{"name": ..., "graph": '
                    '..., "evaluators": [...]}} and nothing else.'
                )
            header, header_line = dict(row["dataset"]), number
            if "cases" in header:
                raise DatasetError(
                    f"{path}:{number}: dataset.cases: cases go one per line after the header."
                )
            continue
        where = f"{path}:{number}"
        case_id = row.get("id")
        if isinstance(case_id, str) and case_id in first_line:
            raise DatasetError(
                f"{where}: case {case_id!r}: duplicate case id (first used at line "
                f"{first_line[case_id]}); case ids must be unique."
            )
        try:
            cases.append(compact(Case.model_validate(row)))
        except ValidationError as exc:
            message = _describe(where, exc.errors(), {"cases": [row]}, None, "cases", 0)
            raise DatasetError(message) from None
        if isinstance(case_id, str):
            first_line[case_id] = number
    where = f"{path}:{header_line}" if header_line else str(path)
    header.setdefault("name", path.stem)
    data = {**header, "cases": CaseList(cases)}
    return _validate_dataset(where, data, None, source=path, allows_code=True)


def _describe(
    where: str,
    errors: Sequence[ErrorDetails],
    data: Any,
    nodes: Lines,
    *prefix: str | int,
) -> str:
    """One line per validation error: ``where[:line]: case 'id', field.path: message``."""
    shown = [_line_of(where, error, data, nodes, *prefix) for error in errors[:_MAX_ERRORS]]
    return _joined(shown, len(errors))


def _line_of(where: str, error: ErrorDetails, data: Any, nodes: Lines, *prefix: str | int) -> str:
    """``where[:line]: case 'id', field.path: message`` of one error at ``prefix`` +
    its location in ``data`` (``nodes``: the tree of what was validated, or None)."""
    loc = (*prefix, *error["loc"])
    return f"{where}{line_at(nodes, error['loc'])}: {_subject(loc, data)}{error['msg']}"


def _joined(lines: list[str], errors: int) -> str:
    """The first :data:`_MAX_ERRORS` of ``lines`` and how many more ``errors`` there are."""
    more = [f"... and {errors - _MAX_ERRORS} more errors"] if errors > _MAX_ERRORS else []
    return "\n".join(lines[:_MAX_ERRORS] + more)


def _subject(loc: Sequence[str | int], data: Any) -> str:
    """``case 'sunny-sf', turns[1]: `` for a location inside a case, else the field path."""
    loc = [part for part in loc if not (isinstance(part, str) and part.startswith("kind="))]
    head = ""
    if len(loc) >= 2 and loc[0] == "cases" and isinstance(loc[1], int):
        cases = data.get("cases") if isinstance(data, dict) else None
        case = _case_at(cases, loc[1])
        case_id = case.get("id") if isinstance(case, dict) else getattr(case, "id", None)
        head = f"case {case_id!r}" if isinstance(case_id, str) else f"cases[{loc[1]}]"
        loc = loc[2:]
    field = field_path(loc)
    if head and field:
        return f"{head}, {field}: "
    return f"{head or field}: " if head or field else ""


def _case_at(cases: Any, index: int) -> Any:
    """Case ``index`` of a list of cases, or of a mapping of some of them by index."""
    if isinstance(cases, dict):
        return cases.get(index)
    return cases[index] if isinstance(cases, list) and index < len(cases) else None


def field_path(loc: Iterable[str | int]) -> str:
    """``("turns", 1, "update", "values")`` as ``turns[1].update.values``."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


class _Dumper(yaml.SafeDumper):
    """``SafeDumper`` that double-quotes strings holding bidi controls or line separators,
    so :func:`data_escaped` can write those characters as escapes."""


def _represent_str(dumper: yaml.SafeDumper, text: str) -> yaml.ScalarNode:
    style = '"' if has_data_escaped(text) else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style=style)


_Dumper.add_representer(str, _represent_str)


@validated
def dump_dataset(dataset: Dataset, path: FilePath) -> Path:
    """Write ``dataset`` as YAML (``.yaml`` / ``.yml``) or JSONL (``.jsonl``); returns the path.

    Defaults are left out, so a loaded file dumps back to what a person would
    write, and loading the dump gives an equal dataset.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    document = _plain(dataset)
    if suffix in YAML_SUFFIXES:
        text = yaml.dump(document, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)
    elif suffix in JSONL_SUFFIXES:
        cases = document.pop("cases", [])
        rows = [{"dataset": document}, *cases]
        text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    else:
        raise DatasetError(
            f"{path}: cannot dump to {suffix or '(no suffix)'!r}; use .yaml or .jsonl."
        )
    return write_atomic(path, data_escaped(text))


def _plain(dataset: Dataset) -> dict[str, Any]:
    dumped: dict[str, Any] = dataset.model_dump(mode="json", by_alias=True, exclude_defaults=True)
    return dumped


@validated
def dataset_hash(dataset: Dataset) -> str:
    """sha256 (hex) of the dataset's canonical JSON: equal datasets hash equal.

    Canonical means every field (defaults included), keys sorted, no
    whitespace; where the dataset was loaded from does not count. The document is
    hashed as it is written, a case at a time, so hashing holds one case in memory.
    """
    digest = hashlib.sha256()
    for chunk in _canonical_chunks(dataset):
        digest.update(chunk.encode("utf-8"))
    return digest.hexdigest()


def _canonical_chunks(dataset: Dataset) -> Iterator[str]:
    """The dataset's canonical JSON, ``json.dumps(..., sort_keys=True)`` of its whole dump,
    in pieces: the members in key order, ``cases`` written case by case."""
    document = dataset.model_dump(mode="json", by_alias=True, exclude={"cases"})
    yield "{"
    for position, key in enumerate(sorted([*document, "cases"])):
        yield ("," if position else "") + _canonical(key) + ":"
        if key != "cases":
            yield _canonical(document[key])
            continue
        yield "["
        for index, case in enumerate(dataset.cases):
            yield ("," if index else "") + _canonical(case.model_dump(mode="json", by_alias=True))
        yield "]"
    yield "}"


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
