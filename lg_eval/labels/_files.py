"""Labels from a file, for teams that label elsewhere: CSV with a header row, or JSONL.

Each row (CSV) or line (JSONL) is one :class:`~lg_eval.labels.Label` by its field names:
``key``, ``run_id`` and ``case_id`` (and ``repetition``) or ``thread_id``, optional
``turn`` and ``item``, ``verdict`` and/or ``score``, ``note``, ``labeler`` and
``labeled_at`` (ISO 8601; default now). ``source`` is ``file``. A verdict written ``pass``
or ``true`` is True, ``fail`` or ``false`` False (any case); other text is a category. In a
CSV file an empty cell is no value, and ``turn``, ``repetition`` and ``score`` are numbers.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from lg_eval.errors import InvalidOptionError
from lg_eval.labels._models import Label

_WORDS = {"pass": True, "true": True, "fail": False, "false": False}
_NUMBERS = {"turn": int, "repetition": int, "score": float}
MAX_LINE = 1_000_000
"""The longest line a label file may have, in characters (a runaway line is refused)."""


def read_label_file(path: str | Path) -> list[Label]:
    """The labels in the CSV (``.csv``) or JSONL (any other name) file at ``path``.

    Raises:
        InvalidOptionError: the file cannot be read, or a row is no label; the message
            names the file, the line and the field.
    """
    source = Path(path)
    try:
        with source.open(encoding="utf-8", newline="") as handle:
            rows = _csv(handle) if source.suffix.lower() == ".csv" else _jsonl(handle)
            return [_label(source, line, fields) for line, fields in rows]
    except OSError as exc:
        raise InvalidOptionError(f"{source}: cannot read labels ({exc.strerror or exc}).") from None
    except UnicodeDecodeError:
        raise InvalidOptionError(f"{source}: not UTF-8 text; save it as UTF-8.") from None


def _csv(handle: Any) -> Iterator[tuple[int, dict[str, Any]]]:
    reader = csv.DictReader(handle)
    for fields in reader:
        line = reader.line_num
        if None in fields:
            raise InvalidOptionError(f"{handle.name}:{line}: more cells than the header names.")
        given = {name: value for name, value in fields.items() if value not in (None, "")}
        for name, kind in _NUMBERS.items():
            if name in given:
                try:
                    given[name] = kind(given[name])
                except ValueError:
                    raise InvalidOptionError(
                        f"{handle.name}:{line}: {name}={given[name][:40]!r} is no number."
                    ) from None
        yield line, given


def _jsonl(handle: Any) -> Iterator[tuple[int, dict[str, Any]]]:
    for line, text in enumerate(handle, start=1):
        if len(text) > MAX_LINE:
            raise InvalidOptionError(f"{handle.name}:{line}: longer than {MAX_LINE} characters.")
        if not text.strip():
            continue
        try:
            fields = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InvalidOptionError(f"{handle.name}:{line}: not JSON ({exc.msg}).") from None
        if not isinstance(fields, Mapping):
            raise InvalidOptionError(f"{handle.name}:{line}: a label is a JSON object.")
        yield line, dict(fields)


def _label(source: Path, line: int, fields: dict[str, Any]) -> Label:
    verdict = fields.get("verdict")
    if isinstance(verdict, str) and verdict.strip().lower() in _WORDS:
        fields["verdict"] = _WORDS[verdict.strip().lower()]
    fields.setdefault("source", "file")
    try:
        return Label.model_validate(fields)
    except ValidationError as exc:
        error = exc.errors(include_url=False)[0]
        where = ".".join(str(part) for part in error["loc"]) or "label"
        shown = repr(error.get("input"))[:60]
        raise InvalidOptionError(
            f"{source}:{line}: {where}={shown}: {error['msg']} (fields: "
            f"{', '.join(Label.model_fields)})."
        ) from None
