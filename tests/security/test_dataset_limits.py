"""Hostile dataset files: alias bombs, deep nesting, bytes that are not UTF-8, lone
surrogates. ``dataset validate`` and ``run`` refuse the same files, with one line and exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lg_eval.cli._common import INPUT_ERROR
from lg_eval.datasets import dataset_hash, load_dataset
from lg_eval.errors import DatasetError
from tests.security.conftest import invoke, squash


def _bomb(levels: int = 10, fold: int = 9) -> str:
    """A valid dataset whose one input is ``fold ** levels`` strings made of aliases."""
    lines = ["name: bomb", "cases:", "  - id: c1", "    turns:", "      - input:"]
    lines.append(f"          a0: &a0 [{', '.join(['lol'] * fold)}]")
    lines += [
        f"          a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * fold)}]" for i in range(1, levels)
    ]
    return "\n".join(lines) + "\n"


def _byte_bomb(where: str = "input") -> str:
    """#40 item 3: a 64 KiB string aliased 899,000 times (three levels), about 70 KB on disk:
    under the value-count limit, 58 GB of text expanded. ``where``: in a turn's input or in
    an evaluator's options."""
    text = "x" * 65536
    lines = ["name: bytes", f"text: &s {text}"]
    lines.append(f"l1: &l1 [{', '.join(['*s'] * 100)}]")
    lines.append(f"l2: &l2 [{', '.join(['*l1'] * 100)}]")
    many = f"[{', '.join(['*l2'] * 89)}, {', '.join(['*l1'] * 90)}]"
    lines += ["cases:", "  - id: c1", "    turns:"]
    if where == "input":
        lines.append(f"      - input: {many}")
    else:
        lines += [
            "      - input: hi",
            f"    evaluators: [{{name: keywords, options: {{words: {many}}}}}]",
        ]
    return "\n".join(lines) + "\n"


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


HOSTILE: dict[str, tuple[str, bytes, str]] = {
    "alias bomb": (
        "bomb.yaml",
        _bomb().encode(),
        "bomb.yaml:12: the document expands to more than 1,000,000 values once its aliases "
        "(*name) are expanded; a dataset file is refused beyond that (an alias bomb looks "
        "like this).",
    ),
    "byte bomb": (
        "bytes.yaml",
        _byte_bomb().encode(),
        "bytes.yaml:4: the document expands to more than 64 MiB of text once its aliases "
        "(*name) are expanded; a dataset file is refused beyond that (an alias bomb looks "
        "like this).",
    ),
    "byte bomb in evaluator options": (
        "options.yaml",
        _byte_bomb("options").encode(),
        "options.yaml:4: the document expands to more than 64 MiB of text once its aliases "
        "(*name) are expanded; a dataset file is refused beyond that (an alias bomb looks "
        "like this).",
    ),
    "NUL byte in YAML": (
        "nul.yaml",
        b"name: n\ncases:\n  - id: a\x00b\n    turns: [{input: hi}]\n",
        "nul.yaml:3: column 10 holds the control character U+0000, which a YAML file cannot "
        'hold as it is; delete it, or write it as an escape in a double-quoted string ("\\x1b", '
        '"\\u009b").',
    ),
    "C1 control in YAML": (
        "csi.yaml",
        'name: c\ncases: [{id: c1, turns: [{input: "\x9b31m"}]}]\n'.encode(),
        "csi.yaml:2: column 35 holds the control character U+009B, which a YAML file cannot "
        'hold as it is; delete it, or write it as an escape in a double-quoted string ("\\x1b", '
        '"\\u009b").',
    ),
    "escape byte in JSONL": (
        "esc.jsonl",
        b'{"id": "c\x1b[2J", "turns": [{"input": "x"}]}\n',
        "esc.jsonl:1: not valid JSON: Invalid control character at column 10 (a control "
        "character must be written as an escape, \\u001b).",
    ),
    "recursive alias": (
        "loop.yaml",
        b"name: loop\ncases: [{id: c, turns: [{input: &x [1, *x]}]}]\n",
        "loop.yaml:2: an alias refers to a value that contains it (a recursive structure); "
        "datasets hold plain, finite data.",
    ),
    "deep YAML": (
        "deep.yaml",
        f"name: deep\ncases: [{{id: c, turns: [{{input: {_nested(150)}}}]}}]\n".encode(),
        "deep.yaml:2: mappings and lists nest more than 100 deep; a dataset file is refused "
        "beyond that.",
    ),
    "YAML deeper than the stack": (
        "abyss.yaml",
        f"name: abyss\ncases: {_nested(20_000)}\n".encode(),
        "abyss.yaml: mappings and lists nest too deeply to read; a dataset file is refused "
        "beyond that.",
    ),
    "JSONL deeper than the stack": (
        "abyss.jsonl",
        ('{"id": "c", "turns": [{"input": ' + _nested(200_000) + "}]}\n").encode(),
        "abyss.jsonl:1: objects and arrays nest too deeply to read; a dataset is refused "
        "beyond that.",
    ),
    "deep JSONL": (
        "deep.jsonl",
        ('{"id": "c", "turns": [{"input": ' + _nested(150) + "}]}\n").encode(),
        "deep.jsonl:1: objects and arrays nest more than 100 deep; a dataset is refused "
        "beyond that.",
    ),
    "Latin-1 bytes": (
        "latin.yaml",
        "name: x\ndescription: café\ncases: []\n".encode("latin-1"),
        "latin.yaml:2: the file is not UTF-8 text (byte 0xe9 at offset 24); save it as UTF-8.",
    ),
    "lone surrogate in YAML": (
        "lone.yaml",
        b'name: s\ncases: [{id: c1, turns: [{input: "ab\\ud800cd"}]}]\n',
        "lone.yaml:2: the string 'ab'… holds a lone surrogate (U+D800), which is not valid "
        "Unicode text; write the character itself (in YAML, \\U0001F600 escapes a character "
        "beyond U+FFFF).",
    ),
    "lone surrogate in JSONL": (
        "lone.jsonl",
        b'{"id": "c", "turns": [{"input": "x\\udc00"}]}\n',
        "lone.jsonl:1: the string 'x'… holds a lone surrogate (U+DC00), which is not valid "
        "Unicode text; write the character itself (in YAML, \\U0001F600 escapes a character "
        "beyond U+FFFF).",
    ),
}


@pytest.mark.parametrize("attack", list(HOSTILE))
@pytest.mark.parametrize("command", ["validate", "run"])
def test_a_hostile_dataset_is_one_line_and_exit_2_in_validate_and_run(
    here: dict[str, str], tmp_path: Path, attack: str, command: str
) -> None:
    name, content, message = HOSTILE[attack]
    (tmp_path / name).write_bytes(content)
    if command == "validate":
        result = invoke("dataset", "validate", name)
    else:
        result = invoke(
            "run", name, "--graph", "graphs.weather:build", "--store", here["store"],
            "--checkpointer", here["checkpointer"], "--quiet",
        )  # fmt: skip
    assert result.exit_code == INPUT_ERROR
    assert squash(result.stderr) == squash(f"lg-eval: {message}")


def test_the_byte_bomb_is_refused_in_bounded_memory(tmp_path: Path) -> None:
    """``dataset validate`` and ``run`` in a real process under a 300 MB address-space
    limit: refused with one line, not killed and not a MemoryError traceback."""
    import resource
    import subprocess
    import sys

    from tests.security.conftest import ROOT

    path = tmp_path / "bytes.yaml"
    path.write_text(_byte_bomb())
    assert 60_000 < path.stat().st_size < 80_000
    limit = 300 * 2**20

    def bounded() -> None:
        resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))

    for args in (
        ["dataset", "validate", str(path)],
        ["run", str(path), "--graph", "graphs.weather:build", "--store",
         f"sqlite:///{tmp_path / 'r.sqlite'}", "--checkpointer", "memory://", "--quiet"],
    ):  # fmt: skip
        done = subprocess.run(
            [sys.executable, "-m", "lg_eval", *args], cwd=ROOT, capture_output=True,
            preexec_fn=bounded, timeout=300,
        )  # fmt: skip
        err = done.stderr.decode()
        assert done.returncode == INPUT_ERROR, err
        assert len(err.strip().splitlines()) == 1 and "64 MiB of text" in err, err


def test_shared_values_handed_to_dataset_from_dict_count_where_they_are_used() -> None:
    import yaml

    from lg_eval.datasets import dataset_from_dict

    data = yaml.safe_load(_byte_bomb())  # one string object, referenced 899,000 times
    with pytest.raises(DatasetError, match=r"<data>: the document expands to more than 64 MiB"):
        dataset_from_dict(data)


def test_an_escaped_surrogate_pair_in_yaml_is_one_character(tmp_path: Path) -> None:
    path = tmp_path / "pair.yaml"
    path.write_text('name: s\ncases: [{id: c1, turns: [{input: "ab\\ud83d\\ude00"}]}]\n')
    dataset = load_dataset(path)
    assert dataset.cases[0].turns[0].input == "ab\U0001f600"
    assert len(dataset_hash(dataset)) == 64


def test_aliases_that_expand_within_the_limit_load(tmp_path: Path) -> None:
    path = tmp_path / "shared.yaml"
    path.write_text(_bomb(levels=5, fold=9))  # 9**5 = 59,049 strings
    dataset = load_dataset(path)
    assert dataset.name == "bomb" and len(dataset_hash(dataset)) == 64


text_values = st.recursive(
    st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=20,
)


@settings(max_examples=60, deadline=None)
@given(value=text_values, fmt=st.sampled_from(["yaml", "jsonl"]))
def test_any_valid_text_loads_as_written(tmp_path_factory: pytest.TempPathFactory, value: object,
                                         fmt: str) -> None:  # fmt: skip
    folder = tmp_path_factory.mktemp("ok")
    case = {"id": "c", "turns": [{"input": value}]}
    path = folder / f"d.{fmt}"
    if fmt == "yaml":  # JSON is YAML; ASCII-only, so astral characters are escaped pairs
        path.write_text(json.dumps({"name": "d", "cases": [case]}))
    else:
        path.write_text(json.dumps(case, ensure_ascii=False) + "\n", encoding="utf-8")
    assert load_dataset(path).cases[0].turns[0].input == value


@settings(max_examples=60, deadline=None)
@given(
    before=st.text(max_size=10),
    half=st.integers(0xD800, 0xDFFF).map(chr),
    fmt=st.sampled_from(["yaml", "jsonl"]),
)
def test_any_lone_surrogate_is_a_dataset_error(
    tmp_path_factory: pytest.TempPathFactory, before: str, half: str, fmt: str
) -> None:
    folder = tmp_path_factory.mktemp("lone")
    escaped = json.dumps(before + half)  # ASCII: the surrogate written as a \\uXXXX escape
    path = folder / f"d.{fmt}"
    if fmt == "yaml":
        path.write_text(f"name: d\ncases: [{{id: c, turns: [{{input: {escaped}}}]}}]\n")
    else:
        path.write_text(f'{{"id": "c", "turns": [{{"input": {escaped}}}]}}\n')
    with pytest.raises(DatasetError, match=rf"U\+{ord(half):04X}"):
        load_dataset(path)
