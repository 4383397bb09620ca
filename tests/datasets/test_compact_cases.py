"""A dataset holds its cases compactly (each as its validated JSON, a case made again when it
is read) and reads them back exactly as they were validated."""

from __future__ import annotations

import datetime
import enum
import gc
import hashlib
import json
import math
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import HumanMessage
from pydantic import ValidationError

from lg_eval.datasets import (
    Case,
    Dataset,
    dataset_from_dict,
    dataset_hash,
    dump_dataset,
    load_dataset,
)

GOLDEN = Path(__file__).parent.parent.parent / "examples" / "golden"
STEPS = {"trajectory": {"steps": [["__start__", "add", "double"]]}}


def cases(n: int) -> list[dict[str, Any]]:
    return [{"id": f"c{i}", "turns": [{"input": {"x": i}}], "expected": STEPS} for i in range(n)]


def traced(work: Any) -> tuple[Any, int, int]:
    """``work()``'s value, and the bytes it left allocated and its peak (tracemalloc)."""
    gc.collect()
    tracemalloc.start()
    try:
        value = work()
        held, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return value, held, peak


def test_a_dataset_holds_a_case_in_a_fraction_of_its_model() -> None:
    data = {"name": "d", "cases": cases(2000)}
    dataset, held, _ = traced(lambda: Dataset.model_validate(data))
    models, as_models, _ = traced(lambda: [Case.model_validate(c) for c in data["cases"]])
    assert len(dataset.cases) == len(models) == 2000
    assert held / 2000 < 512 < as_models / 2000 / 4, (held, as_models)


def test_a_jsonl_file_is_loaded_without_every_case_model_at_once(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    path.write_text("".join(json.dumps(c) + "\n" for c in cases(2000)))
    dataset, _, peak = traced(lambda: load_dataset(path))
    assert dataset.case_ids() == [f"c{i}" for i in range(2000)]
    assert peak / 2000 < 1536, peak  # one case model is about 3 KiB


def test_every_case_read_is_a_new_case_equal_to_the_one_validated() -> None:
    for path in sorted(GOLDEN.glob("*.yaml")):
        raw = yaml.safe_load(path.read_text())["cases"]
        dataset = load_dataset(path)
        validated = [Case.model_validate(c) for c in raw]
        assert list(dataset.cases) == validated, path.name
        assert [c.model_dump(exclude_unset=True) for c in dataset.cases] == [
            c.model_dump(exclude_unset=True) for c in validated
        ]
        assert dataset.case_ids() == [c["id"] for c in raw]
        first = dataset.cases[0]
        assert (first == dataset.cases[0], first is dataset.cases[0]) == (True, False)
        assert dataset.cases[-1] == validated[-1] and dataset.cases[1:3] == validated[1:3]
        assert dataset.case(raw[-1]["id"]) == validated[-1]


def test_values_json_cannot_carry_are_kept_as_given() -> None:
    given = {
        "day": datetime.date(2024, 5, 1),
        "pair": (1, 2),
        "messages": [HumanMessage("hi", id="m1")],
        "raw": b"\x00\xff",
    }
    dataset = Dataset(
        name="python",
        cases=[
            Case(id="objects", turns=[{"input": given}]),
            {"id": "plain", "turns": [{"input": "hi"}]},
        ],
    )
    read = dataset.cases[0].turns[0].input
    assert read == given
    assert [type(read[k]) for k in given] == [datetime.date, tuple, list, bytes]
    assert type(read["messages"][0]) is HumanMessage
    assert dataset.cases[1].model_dump(exclude_unset=True) == {
        "id": "plain",
        "turns": [{"input": "hi"}],
    }


def test_the_hash_is_the_sha256_of_the_whole_canonical_document(tmp_path: Path) -> None:
    extra = Dataset(
        name="d",
        description='ünïcode, "quotes" and a tab\t',
        graph="graphs.counter:build",
        evaluators=["exact_match", {"name": "tool_calls", "options": {"mode": "superset"}}],
        cases=cases(3),
    )
    datasets = [load_dataset(path) for path in sorted(GOLDEN.glob("*.yaml"))]
    for dataset in [*datasets, extra, Dataset(name="empty")]:
        document = dataset.model_dump(mode="json", by_alias=True)
        canonical = json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        assert dataset_hash(dataset) == hashlib.sha256(canonical.encode()).hexdigest()


def test_a_dataset_of_remote_data_reads_every_case_as_not_allowed_to_import_code() -> None:
    remote = dataset_from_dict({"name": "r", "cases": cases(3)})
    assert [case.allows_code for case in remote.cases] == [False, False, False]
    kept = Dataset(name="local", cases=list(remote.cases), allows_code=True)
    assert [case.allows_code for case in kept.cases] == [False, False, False]
    local = Dataset(name="local", cases=cases(2), allows_code=True)
    assert [case.allows_code for case in local.cases] == [True, True]


def test_a_dumped_dataset_loads_back_equal(tmp_path: Path) -> None:
    dataset = Dataset(name="d", cases=cases(5))
    for suffix in ("yaml", "jsonl"):
        again = load_dataset(dump_dataset(dataset, tmp_path / f"d.{suffix}"))
        assert again.model_dump() == dataset.model_dump()
        assert dataset_hash(again) == dataset_hash(dataset)


class Color(enum.StrEnum):
    RED = "red"


class Level(enum.IntEnum):
    HIGH = 3


values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(max_size=8)
    | st.binary(max_size=4)
    | st.dates()
    | st.sampled_from([Color.RED, Level.HIGH]),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.tuples(inner, inner)
        | st.dictionaries(st.text(max_size=4) | st.integers(), inner, max_size=3)
    ),
    max_leaves=12,
)


def same(a: Any, b: Any) -> bool:
    """Equal, with the same types all the way down (NaN the same as NaN)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    return bool(a == b)


@settings(max_examples=200, deadline=None)
@given(value=values)
def test_any_value_a_case_holds_is_read_back_as_it_was_validated(value: Any) -> None:
    case = {"id": "c", "turns": [{"input": {"value": value}}], "metadata": {"value": value}}
    validated = Case.model_validate(case)
    read = Dataset(name="d", cases=[case]).cases[0]
    assert same(read.turns[0].input, validated.turns[0].input)
    assert same(read.metadata, validated.metadata)


def test_the_cases_setting_a_field_are_read_without_making_the_others(
    monkeypatch: Any,
) -> None:
    own = [{"name": "exact_match"}]
    dataset = Dataset(
        name="own",
        cases=[
            *cases(3),
            {"id": "mine", "turns": [{"input": "x"}], "evaluators": own},
            # an input that has the key is read, then left out (an escaped text is skipped)
            {"id": "talk", "turns": [{"input": {"evaluators": 1}}]},
            {"id": "text", "turns": [{"input": '"evaluators": none here'}]},
            Case(id="object", turns=[{"input": datetime.date(2024, 1, 1)}], evaluators=own),
            {"id": "unset", "turns": [{"input": "y"}], "evaluators": None},
        ],
    )
    made: list[str] = []
    read = Case.model_validate_json

    def counted(data: Any, **kwargs: Any) -> Case:
        case = read(data, **kwargs)
        made.append(case.id)
        return case

    monkeypatch.setattr(Case, "model_validate_json", counted)
    found = [case.id for case in dataset.cases_setting("evaluators")]
    assert found == ["mine", "object", "unset"]
    assert made == ["mine", "talk", "unset"]  # "object" is held as the case itself


def test_a_duplicate_case_id_is_named_in_the_error() -> None:
    with pytest.raises(ValidationError) as raised:
        Dataset(name="twice", cases=[*cases(2), {"id": "c0", "turns": [{"input": 1}]}])
    assert raised.value.errors()[0]["msg"] == "duplicate case id 'c0' (cases[0] and cases[2])"
