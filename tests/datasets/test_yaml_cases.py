"""A YAML dataset's cases are taken one by one as PyYAML composes them: what loads, and what
is refused and how, is what loading the whole document gives; only the memory differs."""

from __future__ import annotations

import gc
import json
import tracemalloc
from pathlib import Path

import pytest
import yaml

from lg_eval.datasets import Dataset, load_dataset
from lg_eval.errors import DatasetError


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_a_yaml_file_is_loaded_without_every_case_node_tree_at_once(tmp_path: Path) -> None:
    steps = {"trajectory": {"steps": [["__start__", "add", "double"]]}}
    cases = [
        {"id": f"c{n}", "turns": [{"input": {"x": n}}], "expected": steps} for n in range(2000)
    ]
    path = write(tmp_path, "big.yaml", yaml.safe_dump({"name": "big", "cases": cases}))
    gc.collect()
    tracemalloc.start()
    try:
        dataset = load_dataset(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    whole = Dataset.model_validate({"name": "big", "cases": cases})
    assert [c.model_dump() for c in dataset.cases] == [c.model_dump() for c in whole.cases]
    assert peak / 2000 < 2048, peak  # PyYAML's nodes of one such case are about 14 KiB


def test_a_case_can_alias_what_an_earlier_case_or_the_header_anchored(tmp_path: Path) -> None:
    text = (
        "name: d\n"
        "description: &hello hello\n"
        "cases:\n"
        "  - id: a\n"
        "    turns: &turns [{input: {q: &q what}}]\n"
        "  - id: b\n"
        "    turns: *turns\n"
        "  - id: c\n"
        "    turns: [{input: *q}, {input: *hello}]\n"
    )
    dataset = load_dataset(write(tmp_path, "d.yaml", text))
    assert [[t.input for t in case.turns] for case in dataset.cases] == [
        [{"q": "what"}],
        [{"q": "what"}],
        ["what", "hello"],
    ]


def test_an_alias_bomb_split_across_cases_is_refused_where_it_goes_off(tmp_path: Path) -> None:
    lines = ["name: bomb", "cases:", "  - id: c1", "    turns:", "      - input:"]
    lines.append(f"          a0: &a0 [{', '.join(['lol'] * 9)}]")
    lines += [f"          a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 6)]
    lines += ["  - id: c2", "    turns:", "      - input:"]  # line 14
    lines += [f"          a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(6, 30)]
    path = write(tmp_path, "bomb.yaml", "\n".join(lines) + "\n")
    with pytest.raises(DatasetError) as info:
        load_dataset(path)
    assert str(info.value) == (
        f"{path}:15: the document expands to more than 1,000,000 values once its aliases "
        "(*name) are expanded; a dataset file is refused beyond that (an alias bomb looks like "
        "this)."
    )


def test_cases_each_within_the_bounds_are_refused_when_together_they_are_not(
    tmp_path: Path,
) -> None:
    lines = ["name: many", "cases:", "  - id: c0", "    turns:", "      - input:"]
    lines.append(f"          l0: &l0 [{', '.join(['x'] * 9)}]")
    lines += [f"          l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]" for i in range(1, 6)]
    first = write(tmp_path, "first.yaml", "\n".join(lines) + "\n")  # about 600,000 values
    assert load_dataset(first).case_ids() == ["c0"]
    lines.append("  - {id: c1, turns: [{input: *l5}]}")  # 531,441 more
    path = write(tmp_path, "many.yaml", "\n".join(lines) + "\n")
    with pytest.raises(DatasetError) as info:
        load_dataset(path)
    assert str(info.value).startswith(  # the cases' list, which starts on line 3
        f"{path}:3: the document expands to more than 1,000,000 values once its aliases"
    )


def test_errors_of_the_header_and_of_several_cases_are_listed_in_field_order(
    tmp_path: Path,
) -> None:
    text = (
        "name: d\n"
        "evaluators: [{name: 5}]\n"
        "cases:\n"
        "  - {id: a, turns: [{input: 1}]}\n"
        "  - {id: b, turns: [{resum: 1}]}\n"
        "  - {id: c, turns: [{input: 1}], expected: {max_steps: many}}\n"
        "extra: 1\n"
    )
    path = write(tmp_path, "d.yaml", text)
    with pytest.raises(DatasetError) as info:
        load_dataset(path)
    assert str(info.value).splitlines() == [
        f"{path}:2: evaluators[0].name: Input should be a valid string",
        f"{path}:5: case 'b', turns[0]: a turn needs exactly one of input, resume, "
        "resume_by_node, resume_fn, continue, update (got none; unknown keys: resum)",
        f"{path}:6: case 'c', expected.max_steps: Input should be a valid integer, unable to "
        "parse string as an integer",
        f"{path}:7: extra: Extra inputs are not permitted",
    ]


def test_a_file_of_many_bad_cases_lists_ten_errors_and_counts_the_rest(tmp_path: Path) -> None:
    cases = [{"id": f"c{n}", "turns": "none"} for n in range(12)]
    path = write(tmp_path, "d.json", json.dumps({"name": "d", "cases": cases}, indent=1))
    with pytest.raises(DatasetError) as info:
        load_dataset(path)
    lines = str(info.value).splitlines()
    assert len(lines) == 11 and lines[-1] == "... and 2 more errors"
    assert lines[9].startswith(f"{path}:") and "case 'c9', turns: Input should be" in lines[9]


def test_the_last_cases_key_of_the_document_is_the_one_that_counts(tmp_path: Path) -> None:
    text = "name: d\ncases:\n  - {id: a, turns: [{input: 1}]}\ncases: []\n"
    assert load_dataset(write(tmp_path, "d.yaml", text)).case_ids() == []
    text = "name: d\ncases: []\ncases:\n  - {id: z, turns: [{input: 1}]}\n"
    assert load_dataset(write(tmp_path, "e.yaml", text)).case_ids() == ["z"]


def test_an_anchored_or_tagged_cases_list_loads_as_a_whole(tmp_path: Path) -> None:
    text = "name: d\ncases: &all\n  - {id: a, turns: [{input: 1}]}\nagain: *all\n"
    with pytest.raises(DatasetError, match=r"d.yaml:2: again: Extra inputs are not permitted"):
        load_dataset(write(tmp_path, "d.yaml", text))
    text = "name: d\ncases: !!seq\n  - {id: a, turns: [{input: 1}]}\n"
    assert load_dataset(write(tmp_path, "e.yaml", text)).case_ids() == ["a"]
