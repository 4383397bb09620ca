"""Read and write dataset files (YAML or JSONL) with errors that point at the mistake, within
bounds checked before anything is built.

YAML goes through PyYAML's *safe* loader only: a ``!!python/...`` tag is an
error naming the file and line, and nothing in the file ever executes. JSONL
holds one case per line, after an optional header line
``{"dataset": {"name": ..., "graph": ..., "evaluators": [...]}}``.

Every problem is a :class:`~lg_eval.errors.DatasetError` whose message reads
``<file>:<line>: case '<id>', <field path>: <what is wrong>`` (the line when it
is known), so a person can jump straight to it.

Bounds. A dataset file must keep bounds before anything is built from it.
A dataset is data, but a hostile one can still hurt: ten levels of nine-fold
YAML aliases are a few hundred bytes that expand to billions of nodes, and three
levels of a hundred aliases over one 64 KiB string stay under a million values
but stand for 58 GB of text (``dataset_hash`` would serialise every byte). Deep
nesting exhausts Python's stack, and a lone surrogate (``"\\ud800"``) is a string no
encoder accepts. These
checks run on YAML's node tree *before* it is constructed (counting each alias
as what it expands to, in linear time over the distinct nodes), on each JSONL
row after ``json.loads``, and on data handed to ``dataset_from_dict``, so
``dataset validate`` and ``run`` refuse the same files, in bounded memory, with a
:class:`~lg_eval.errors.DatasetError` naming the line.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import SkipValidation, ValidationError
from pydantic_core import ErrorDetails

from lg_eval._arguments import FilePath, Flag, validated
from lg_eval._files import write_atomic
from lg_eval._visible import data_escaped, has_data_escaped
from lg_eval.datasets._cases import CaseList, Entry, compact
from lg_eval.datasets._dataset import Dataset
from lg_eval.datasets._models import Case
from lg_eval.errors import DatasetError

YAML_SUFFIXES = (".yaml", ".yml")
JSONL_SUFFIXES = (".jsonl",)
_PROVENANCE = ("source", "allows_code")
_MAX_ERRORS = 10

Lines = Any
"""A YAML node tree (to find the line of a field), or ``None`` when lines are unknown."""


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
        data, nodes = _parse_yaml(path, text)
        return _dataset_from_document(path, data, nodes)
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


def _parse_yaml(path: Path, text: str) -> tuple[Any, Lines]:
    """Safe-load ``text``, keeping the node tree so errors can name lines."""
    try:
        loader = yaml.SafeLoader(text)  # its reader refuses control characters at once
    except yaml.reader.ReaderError as exc:
        raise DatasetError(_control_character(path, text, exc)) from None
    try:
        node = loader.get_single_node()
        check_yaml_tree(str(path), node)
        data = loader.construct_document(node) if node is not None else None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = f":{mark.line + 1}" if mark is not None else ""
        problem = " ".join(str(exc.problem or exc.context or "invalid YAML").split())
        if exc.problem and "could not determine a constructor for the tag" in exc.problem:
            tag = exc.problem.rsplit(" ", 1)[-1].strip("'").replace("tag:yaml.org,2002:", "!!")
            problem = (
                f"the tag {tag} is not allowed: datasets are read with yaml.safe_load, which "
                "builds only plain data (write the value without the tag)"
            )
        raise DatasetError(f"{path}{line}: invalid YAML: {problem}.") from None
    except yaml.YAMLError as exc:
        raise DatasetError(f"{path}: invalid YAML: {exc}.") from None
    except RecursionError:  # PyYAML composes recursively: nesting deeper than the stack
        raise DatasetError(
            f"{path}: mappings and lists nest too deeply to read; a dataset file is refused "
            "beyond that."
        ) from None
    finally:
        loader.dispose()
    return data, node


def _control_character(path: Path, text: str, exc: yaml.reader.ReaderError) -> str:
    """Where the character YAML's reader refused is, and what to write instead."""
    before = text[: exc.position]
    line, column = before.count("\n") + 1, exc.position - (before.rfind("\n") + 1) + 1
    return (
        f"{path}:{line}: column {column} holds the control character U+{exc.character:04X}, "
        "which a YAML file cannot hold as it is; delete it, or write it as an escape in a "
        'double-quoted string ("\\x1b", "\\u009b").'
    )


def _dataset_from_document(path: Path, data: Any, nodes: Lines) -> Dataset:
    if not isinstance(data, dict):
        raise DatasetError(
            f"{path}: a dataset file is a mapping with name, cases and optionally graph and "
            f"evaluators (got {type(data).__name__})."
        )
    data = dict(data)
    data.setdefault("name", path.stem)
    return _validate_dataset(str(path), data, nodes, source=path, allows_code=True)


def _validate_dataset(
    where: str, data: dict[str, Any], nodes: Lines, *, source: Path | None, allows_code: bool
) -> Dataset:
    for key in _PROVENANCE:
        if key in data:
            raise DatasetError(
                f"{where}{_line(nodes, (key,))}: {key!r} cannot be written in a dataset: lg_eval "
                "sets it from where the dataset was loaded."
            )
    cases = data.get("cases")
    if isinstance(cases, list):
        _check_unique_ids(where, cases, nodes)
    try:
        return Dataset.model_validate({**data, "source": source, "allows_code": allows_code})
    except ValidationError as exc:
        raise DatasetError(_describe(where, exc.errors(), data, nodes)) from None


def _check_unique_ids(where: str, cases: list[Any], nodes: Lines) -> None:
    first: dict[str, int] = {}
    for index, case in enumerate(cases):
        case_id = case.get("id") if isinstance(case, dict) else None
        if not isinstance(case_id, str):
            continue
        if case_id in first:
            earlier = _line(nodes, ("cases", first[case_id]))
            seen = f"line {earlier[1:]}" if earlier else f"cases[{first[case_id]}]"
            raise DatasetError(
                f"{where}{_line(nodes, ('cases', index, 'id'))}: case {case_id!r}: duplicate case "
                f"id (first used at {seen}); case ids must be unique."
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
    lines = []
    for error in errors[:_MAX_ERRORS]:
        loc = (*prefix, *error["loc"])
        lines.append(f"{where}{_line(nodes, loc)}: {_subject(loc, data)}{error['msg']}")
    if len(errors) > _MAX_ERRORS:
        lines.append(f"... and {len(errors) - _MAX_ERRORS} more errors")
    return "\n".join(lines)


def _subject(loc: Sequence[str | int], data: Any) -> str:
    """``case 'sunny-sf', turns[1]: `` for a location inside a case, else the field path."""
    loc = [part for part in loc if not (isinstance(part, str) and part.startswith("kind="))]
    head = ""
    if len(loc) >= 2 and loc[0] == "cases" and isinstance(loc[1], int):
        cases = data.get("cases") if isinstance(data, dict) else None
        case = cases[loc[1]] if isinstance(cases, list) and loc[1] < len(cases) else None
        case_id = case.get("id") if isinstance(case, dict) else getattr(case, "id", None)
        head = f"case {case_id!r}" if isinstance(case_id, str) else f"cases[{loc[1]}]"
        loc = loc[2:]
    field = field_path(loc)
    if head and field:
        return f"{head}, {field}: "
    return f"{head or field}: " if head or field else ""


def field_path(loc: Iterable[str | int]) -> str:
    """``("turns", 1, "update", "values")`` as ``turns[1].update.values``."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _line(nodes: Lines, loc: Sequence[str | int]) -> str:
    """``:<line>`` of the deepest YAML node on ``loc`` that exists, or ``""``."""
    node = nodes
    if node is None:
        return ""
    found = node
    for part in loc:
        if isinstance(part, str) and part.startswith("kind="):
            continue
        child = None
        if isinstance(node, yaml.MappingNode):
            child = next((v for k, v in node.value if getattr(k, "value", None) == part), None)
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
            child = node.value[part] if part < len(node.value) else None
        if child is None:
            break
        node = found = child
    return f":{found.start_mark.line + 1}"


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


MAX_NODES = 1_000_000
"""Values a dataset may hold once every YAML alias is expanded (mappings, lists, scalars)."""
MAX_BYTES = 64 * 2**20
"""UTF-8 bytes of text (keys and values) a dataset may hold once every YAML alias is
expanded: 64 MiB, far beyond any golden dataset, far below what would exhaust memory."""
MAX_DEPTH = 100
"""How deeply mappings and lists may nest."""
_SURROGATE = re.compile("[\ud800-\udfff]")


def check_yaml_tree(where: str, root: yaml.Node | None) -> None:
    """Refuse a composed YAML document that is too big expanded, too deep, recursive, or
    holds a string that is not valid Unicode; linear in the document's distinct nodes."""
    if root is None:
        return
    sizes: dict[int, int] = {}  # expanded size of each distinct node
    weights: dict[int, int] = {}  # expanded bytes of text of each distinct node
    heights: dict[int, int] = {}  # levels of nesting from each distinct node down
    open_: set[int] = set()  # nodes on the current path: reaching one again is a cycle
    stack: list[tuple[yaml.Node, int, bool]] = [(root, 1, False)]
    while stack:
        node, depth, done = stack.pop()
        key = id(node)
        if done:
            open_.discard(key)
            children = _children(node)
            sizes[key] = 1 + sum(sizes[id(child)] for child in children)
            weights[key] = sum(weights[id(child)] for child in children)
            heights[key] = 1 + max((heights[id(child)] for child in children), default=0)
            _check_size(f"{where}:{_node_line(node)}", sizes[key], weights[key], "aliases (*name)")
            continue
        if key in sizes:  # seen before (an alias): as deep below here as it was there
            if depth + heights[key] - 1 > MAX_DEPTH:
                raise _too_deep(where, node)
            continue
        if key in open_:
            raise DatasetError(
                f"{where}:{_node_line(node)}: an alias refers to a value that contains it (a "
                "recursive structure); datasets hold plain, finite data."
            )
        if depth > MAX_DEPTH:
            raise _too_deep(where, node)
        if isinstance(node, yaml.ScalarNode):
            node.value = _check_text(where, node.value, _node_line(node))
            sizes[key] = heights[key] = 1
            weights[key] = _bytes(node.value)
            continue
        open_.add(key)
        stack.append((node, depth, True))
        stack.extend((child, depth + 1, False) for child in _children(node))


def _check_size(where: str, nodes: int, weight: int, expanded: str) -> None:
    whole = "a dataset file" if expanded.startswith("aliases") else "a dataset"
    if nodes > MAX_NODES:
        raise DatasetError(
            f"{where}: the document expands to more than {MAX_NODES:,} values once its "
            f"{expanded} are expanded; {whole} is refused beyond that (an alias bomb looks "
            "like this)."
        )
    if weight > MAX_BYTES:
        raise DatasetError(
            f"{where}: the document expands to more than {MAX_BYTES // 2**20} MiB of text "
            f"once its {expanded} are expanded; {whole} is refused beyond that (an alias "
            "bomb looks like this)."
        )


def _bytes(text: str) -> int:
    """UTF-8 bytes of ``text`` (its length when it is ASCII, without encoding it)."""
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def _too_deep(where: str, node: yaml.Node) -> DatasetError:
    return DatasetError(
        f"{where}:{_node_line(node)}: mappings and lists nest more than {MAX_DEPTH} deep; a "
        "dataset file is refused beyond that."
    )


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def _node_line(node: yaml.Node) -> int:
    return int(node.start_mark.line) + 1


def check_data(where: str, data: Any) -> None:
    """Refuse parsed data that expands to more than :data:`MAX_NODES` values or
    :data:`MAX_BYTES` of text, nests more than :data:`MAX_DEPTH` deep or holds a string
    that is not valid Unicode. Data handed in from Python may share one object in many
    places (a YAML document loaded elsewhere does): each place counts, and the walk
    stops as soon as a bound is passed, so it takes at most :data:`MAX_NODES` steps."""
    stack: list[tuple[Any, int]] = [(data, 1)]
    nodes = weight = 0
    while stack:
        value, depth = stack.pop()
        nodes += 1
        if isinstance(value, str):
            _check_text(where, value, None)
            weight += _bytes(value)
            _check_size(where, nodes, weight, "shared values")
            continue
        _check_size(where, nodes, weight, "shared values")
        if not isinstance(value, dict | list):
            continue
        if depth > MAX_DEPTH:
            raise DatasetError(
                f"{where}: objects and arrays nest more than {MAX_DEPTH} deep; a dataset is "
                "refused beyond that."
            )
        items = [*value.keys(), *value.values()] if isinstance(value, dict) else value
        stack.extend((item, depth + 1) for item in items)


def _check_text(where: str, text: str, line: int | None) -> str:
    """``text`` with escaped surrogate pairs joined (YAML reads ``"\\ud83d\\ude00"`` as two
    halves; JSON as one character); a lone half is a DatasetError."""
    if _SURROGATE.search(text) is None:
        return text
    at = f":{line}" if line is not None else ""
    try:
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le")
    except UnicodeDecodeError:
        pass
    lone = next(
        i
        for i, char in enumerate(text)
        if _SURROGATE.match(char)
        and not (
            "\ud800" <= char <= "\udbff"
            and i + 1 < len(text)
            and "\udc00" <= text[i + 1] <= "\udfff"
        )
        and not ("\udc00" <= char <= "\udfff" and i > 0 and "\ud800" <= text[i - 1] <= "\udbff")
    )
    raise DatasetError(
        f"{where}{at}: the string {text[:lone][-20:]!r}… holds a lone surrogate "
        f"(U+{ord(text[lone]):04X}), which is not valid Unicode text; write the character "
        "itself (in YAML, \\U0001F600 escapes a character beyond U+FFFF)."
    )
