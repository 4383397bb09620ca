"""Thread ids, run ids and dataset names are written by strangers: on the terminal every
character that could act (escape sequences, OSC 8 links, bidi overrides) is shown instead."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.types import Command

from graphs.weather import build
from tests.security.conftest import invoke, squash

HOSTILE = (
    "t\x1b[2J\x1b]0;owned\x07\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\\u202egnp.exe\r"
)
SHOWN = "t␛[2J␛]0;owned␇␛]8;;https://evil.example/␛\\click␛]8;;␛\\\\u202egnp.exe␍"


def _acting(text: str) -> list[str]:
    """Characters of ``text`` a terminal would act on (newlines aside)."""
    return [c for c in text if (ord(c) < 0x20 and c != "\n") or c in "\x7f\u202e\u2066"]


@pytest.fixture
def hostile_thread(here: dict[str, str], tmp_path: Path) -> str:
    """A real two-turn weather thread whose id is :data:`HOSTILE`."""
    conn = sqlite3.connect(tmp_path / "checkpoints.sqlite", check_same_thread=False)
    graph = build(checkpointer=SqliteSaver(conn))
    config = {"configurable": {"thread_id": HOSTILE}}
    graph.invoke({"messages": [("user", "what's the weather in sf?")]}, config)
    graph.invoke(Command(resume="It's sunny and 75 degrees"), config)
    conn.close()
    return here["checkpointer"]


@pytest.mark.parametrize("command", [["extract"], ["dataset", "from-thread"]])
def test_a_hostile_thread_id_reaches_the_terminal_only_as_visible_text(
    hostile_thread: str, command: list[str]
) -> None:
    result = invoke(
        *command, "--graph", "graphs.weather:build", "--thread", HOSTILE,
        "--checkpointer", hostile_thread,
    )  # fmt: skip
    assert result.exit_code == 0
    assert squash(result.stderr).startswith(squash(f"thread {SHOWN}: 2 turns"))
    assert _acting(result.stderr) == []
    if command == ["extract"]:
        assert _acting(result.stdout) == []


def test_a_hostile_run_id_and_dataset_name_are_visible_in_runs(
    here: dict[str, str], tmp_path: Path
) -> None:
    dataset = tmp_path / "hostile.yaml"
    dataset.write_text(
        'name: "evil\\e]0;title\\a\\u202e"\ngraph: graphs.weather:build\n'
        "cases: [{id: c, turns: [{input: {messages: [{role: user, content: hi}]}}]}]\n",
        encoding="utf-8",
    )
    run = invoke(
        "run", str(dataset), "--run-id", "r\x1b[31m1", "--store", here["store"],
        "--checkpointer", here["checkpointer"], "--quiet",
    )  # fmt: skip
    assert run.exit_code in (0, 3)
    listed = invoke("runs", "--store", here["store"])
    assert listed.exit_code == 0
    assert _acting(listed.stdout) == []
    assert "r␛[31m1" in listed.stdout and "evil␛]0;title␇\\u202e" in listed.stdout


def test_a_dumped_golden_case_escapes_bidi_controls_and_loads_back_equal(tmp_path: Path) -> None:
    from lg_eval.datasets import Case, Dataset, dump_dataset, load_dataset

    text = "refund \u202egnp.exe\u2066 and \u2028 next"
    turn = {"input": {"messages": [{"role": "user", "content": text}]}}
    dataset = Dataset(
        name="n\u202e", graph="graphs.weather:build", cases=[Case(id="c\u202e", turns=[turn])]
    )
    for suffix in (".yaml", ".jsonl"):
        path = dump_dataset(dataset, tmp_path / f"case{suffix}")
        written = path.read_text(encoding="utf-8")
        assert _acting(written) == [] and "\u2028" not in written
        assert "\\u202e" in written
        loaded = load_dataset(path)
        assert loaded.model_dump(include={"name", "cases"}) == dataset.model_dump(
            include={"name", "cases"}
        )


def test_extract_json_output_escapes_bidi_controls(hostile_thread: str) -> None:
    result = invoke(
        "extract", "--graph", "graphs.weather:build", "--thread", HOSTILE,
        "--checkpointer", hostile_thread, "--format", "json",
    )  # fmt: skip
    assert result.exit_code == 0
    assert _acting(result.stdout) == []
    assert '"thread_id": "t\\u001b[2J' in result.stdout and "\\u202egnp.exe" in result.stdout


# --- #40 item 7: C1 controls and DEL in every JSON written to a terminal ------------------

C1_TEXT = "a\x9b2J\x9d0;owned\x9c\x7f\x85b"  # CSI, OSC, ST (8-bit forms), DEL, NEL


def _c1(text: str) -> list[str]:
    """8-bit controls and DEL (what JSON's own escaping leaves raw)."""
    return [c for c in text if 0x7F <= ord(c) < 0xA0]


@pytest.fixture
def c1_thread(here: dict[str, str], tmp_path: Path) -> str:
    """A real weather thread whose question and answer hold 8-bit controls."""
    conn = sqlite3.connect(tmp_path / "checkpoints.sqlite", check_same_thread=False)
    graph = build(checkpointer=SqliteSaver(conn))
    config = {"configurable": {"thread_id": "c1"}}
    graph.invoke({"messages": [("user", f"weather in sf? {C1_TEXT}")]}, config)
    graph.invoke(Command(resume=C1_TEXT), config)
    conn.close()
    return here["checkpointer"]


def test_extract_json_escapes_c1_controls_and_reads_back_the_same_text(c1_thread: str) -> None:
    import json

    result = invoke(
        "extract", "--graph", "graphs.weather:build", "--thread", "c1",
        "--checkpointer", c1_thread, "--format", "json",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert _c1(result.stdout) == [] and _acting(result.stdout) == []
    assert "\\u009b2J\\u009d0;owned\\u009c\\u007f\\u0085b" in result.stdout
    assert C1_TEXT in json.dumps(json.loads(result.stdout), ensure_ascii=False)


def test_report_json_on_stdout_escapes_c1_controls(here: dict[str, str], tmp_path: Path) -> None:
    import json

    dataset = tmp_path / "c1.yaml"
    dataset.write_text(
        'name: c1\ngraph: graphs.weather:build\ncases: [{id: "c\\x9b31m", tags: ["\\x9d0;t\\x9c"],'
        ' turns: [{input: {messages: [{role: user, content: "hi\\x85\\x7f"}]}}]}]\n',
        encoding="utf-8",
    )
    run = invoke(
        "run", str(dataset), "--run-id", "r1", "--store", here["store"],
        "--checkpointer", here["checkpointer"], "--quiet",
    )  # fmt: skip
    assert run.exit_code in (0, 3), run.output
    shown = invoke("report", "r1", "--store", here["store"], "--format", "json")
    assert shown.exit_code == 0, shown.output
    assert _c1(shown.stdout) == []
    document = json.loads(shown.stdout)
    assert document["cases"][0]["result"]["case_id"] == "c\x9b31m"
    assert document["cases"][0]["result"]["tags"] == ["\x9d0;t\x9c"]
