"""The labels table of the results store (schema version 6) and label files.

Labels are written and read back whole on SQLite and Postgres; the same key, unit and
labeler again replaces the label; a version-5 store is migrated without touching its runs;
CSV and JSONL files are read by field name, and a bad row is refused naming the file,
the line and the field.
"""

from __future__ import annotations

import json
import re
import sqlite3
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lg_eval.errors import InvalidOptionError, StoreError
from lg_eval.experiments import open_store
from lg_eval.experiments.schema_version import SCHEMA_VERSION
from lg_eval.labels import (
    Label,
    label_split,
    labelled_keys,
    load_labels,
    read_label_file,
    save_labels,
)

WHEN = datetime(2025, 3, 4, 5, 6, 7, tzinfo=UTC)


def label(**fields: Any) -> Label:
    given = {"key": "quality", "run_id": "r1", "case_id": "c1", "verdict": True,
             "labeler": "alice", "labeled_at": WHEN, "source": "viewer", **fields}  # fmt: skip
    return Label(**given)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'results.sqlite'}"
        return
    import psycopg

    dsn = request.getfixturevalue("pg_dsn")
    schema = f"labels_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    joiner = "&" if "?" in dsn else "?"
    try:
        yield f"{dsn}{joiner}options=-csearch_path%3D{schema}"
    finally:
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")


def test_labels_are_stored_and_read_back_whole(store_url: str) -> None:
    written = [
        label(),
        label(key="approved_actions", run_id=None, case_id=None, thread_id="t-9", turn=2,
              item="call-1", verdict=False, note="Keep the <report>.", source="interrupt",
              metadata={"decision": "reject", "call": {"name": "rm", "args": {"p": "x"}}}),
        label(key="quality", case_id="c2", verdict="edit", score=0.25, labeler="bob"),
    ]  # fmt: skip
    with open_store(store_url) as store:
        assert store.opened_version is None
        assert save_labels(store, written) == 3
    with open_store(store_url) as store:
        assert store.opened_version == SCHEMA_VERSION == 6
        assert load_labels(store) == [written[1], written[0], written[2]]  # a tie: by key
        assert load_labels(store, key="quality", case_id="c2") == [written[2]]
        assert load_labels(store, thread_id="t-9") == [written[1]]
        assert labelled_keys(store) == {"quality", "approved_actions"}


def test_the_same_key_unit_and_labeler_again_replaces_the_label(store_url: str) -> None:
    with open_store(store_url) as store:
        save_labels(store, [label(), label(labeler="bob", verdict=False)])
        later = label(verdict=False, note="I looked again.", labeled_at=datetime.now(UTC))
        save_labels(store, [later])
        assert load_labels(store) == [label(labeler="bob", verdict=False), later]


def test_a_version_5_store_gains_the_labels_table_and_keeps_its_runs(tmp_path: Path) -> None:
    path = tmp_path / "results.sqlite"
    with open_store(path) as store:
        store.execute_many("DROP TABLE lg_eval_labels", [])
        store.execute_many("UPDATE lg_eval_schema SET version = 5", [])
        store.execute_many(
            "INSERT INTO lg_eval_runs (run_id, dataset, dataset_hash, status, started_at, info)"
            " VALUES ('old', 'd', 'h', 'finished', '2025-01-01', '{}')",
            [],
        )
    with open_store(path) as store:
        assert store.opened_version == 5
        save_labels(store, [label(run_id="old")])
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT version FROM lg_eval_schema").fetchall() == [(6,)]
        assert conn.execute("SELECT run_id FROM lg_eval_runs").fetchall() == [("old",)]
        assert conn.execute("SELECT key, run_id, turn, item FROM lg_eval_labels").fetchall() == [
            ("quality", "old", -1, "")
        ]


def test_a_label_changed_by_hand_is_a_store_error_that_shows_none_of_it(tmp_path: Path) -> None:
    path = tmp_path / "results.sqlite"
    with open_store(path) as store:
        save_labels(store, [label()])
        store.execute_many('UPDATE lg_eval_labels SET label = \'{"key": "SECRET"}\'', [])
        with pytest.raises(StoreError) as caught:
            load_labels(store)
    assert "cannot read" in str(caught.value) and "SECRET" not in str(caught.value)
    with open_store(path) as store:
        two = label().model_dump_json() + ", " + label(case_id="c9").model_dump_json()
        store.execute_many("UPDATE lg_eval_labels SET label = ?", [(two,)])
        with pytest.raises(StoreError, match="it holds more than one label"):
            load_labels(store)


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ({"run_id": "r1"}, "a label names a run's case (run_id and case_id) or a thread_id"),
        ({"thread_id": "t", "verdict": None}, "a label has a verdict or a score"),
        ({"thread_id": "t", "key": ""}, "String should have at least 1 character"),
        ({"thread_id": "t", "turn": -1}, "greater than or equal to 0"),
        ({"thread_id": "t", "score": float("nan")}, "finite number"),
        ({"thread_id": "t", "verdict": 1}, "valid boolean"),
    ],
)
def test_a_label_without_a_subject_a_verdict_or_in_range_values_is_refused(
    fields: dict[str, Any], problem: str
) -> None:
    given = {"key": "k", "verdict": True, "labeler": "a", "source": "file", **fields}
    with pytest.raises(ValueError, match=re.escape(problem)):
        Label(**given)


def test_a_csv_file_is_read_by_its_header_with_pass_and_fail_as_verdicts(tmp_path: Path) -> None:
    path = tmp_path / "labels.csv"
    path.write_text(
        "key,run_id,case_id,thread_id,turn,verdict,score,note,labeler,labeled_at\n"
        "quality,r1,c1,,,pass,,fine,alice,2025-03-04T05:06:07+00:00\n"
        'quality,,,t-7,2,FAIL,0.5,"said ""no"", twice",bob,2025-03-04T05:06:07+00:00\n'
        "quality,r1,c2,,,escalate,,,carol,2025-03-04T05:06:07+00:00\n",
        encoding="utf-8",
    )
    assert read_label_file(path) == [
        label(note="fine", source="file"),
        label(run_id=None, case_id=None, thread_id="t-7", turn=2, verdict=False, score=0.5,
              note='said "no", twice', labeler="bob", source="file"),
        label(case_id="c2", verdict="escalate", labeler="carol", source="file"),
    ]  # fmt: skip


def test_a_jsonl_file_keeps_json_types(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    rows = [
        {"key": "quality", "thread_id": "t-1", "verdict": "pass", "labeler": "a"},
        {"key": "quality", "thread_id": "t-2", "score": 3, "labeler": "a", "item": "c-1"},
    ]
    path.write_text("\n".join(json.dumps(row) for row in rows) + "\n\n", encoding="utf-8")
    found = read_label_file(path)
    assert [(x.thread_id, x.verdict, x.score, x.item, x.source) for x in found] == [
        ("t-1", True, None, None, "file"),
        ("t-2", None, 3, "c-1", "file"),
    ]


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("a.csv", "key,thread_id,verdict,labeler\nk,t,pass,a\nk,,pass,a\n",
         "a.csv:3: label="),
        ("a.csv", "key,thread_id,verdict,turn,labeler\nk,t,pass,two,a\n",
         "a.csv:2: turn='two' is no number."),
        ("a.csv", "key,thread_id,verdict,labeler\nk,t,pass,a,extra\n",
         "a.csv:2: more cells than the header names."),
        ("a.jsonl", '{"key": "k", "thread_id": "t", "verdict": true, "labeler": "a"}\n[1]\n',
         "a.jsonl:2: a label is a JSON object."),
        ("a.jsonl", '{"key": "k", "thread_id": "t", "verdict": true, "labeler": "a"\n',
         "a.jsonl:1: not JSON"),
        ("a.jsonl", '{"key": "k", "thread_id": "t", "verdict": true, "labeler": "a", "x": 1}\n',
         "a.jsonl:1: x=1: Extra inputs are not permitted"),
    ],
)  # fmt: skip
def test_a_bad_row_is_refused_naming_the_file_the_line_and_the_field(
    tmp_path: Path, name: str, text: str, message: str
) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InvalidOptionError) as caught:
        read_label_file(path)
    assert str(caught.value).startswith(str(tmp_path / message.split(":")[0]))
    assert message in str(caught.value)


def test_a_file_that_is_not_there_or_not_utf8_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InvalidOptionError, match="cannot read labels"):
        read_label_file(tmp_path / "missing.csv")
    (tmp_path / "latin.csv").write_bytes(b"key,note\nk,caf\xe9\n")
    with pytest.raises(InvalidOptionError, match="not UTF-8"):
        read_label_file(tmp_path / "latin.csv")


@given(case=st.text(min_size=1, max_size=30), salt=st.text(max_size=10),
       low=st.floats(0, 1), high=st.floats(0, 1))  # fmt: skip
def test_a_case_is_on_one_side_of_the_split_and_a_larger_share_only_adds_cases(
    case: str, salt: str, low: float, high: float
) -> None:
    low, high = sorted((low, high))
    side = label_split(case, fraction=low, salt=salt)
    assert side == label_split(case, fraction=low, salt=salt)
    if side == "examples":
        assert label_split(case, fraction=high, salt=salt) == "examples"
    assert label_split(case, fraction=0.0, salt=salt) == "held_out"
    assert label_split(case, fraction=1.0, salt=salt) == "examples"


@pytest.mark.parametrize("fraction", [-0.1, 1.5, float("nan"), "half", True])
def test_a_split_fraction_outside_zero_to_one_is_refused_naming_it(fraction: Any) -> None:
    with pytest.raises(InvalidOptionError, match="fraction="):
        label_split("c1", fraction=fraction)
